//! bb7's file-edit algorithms: `write_file`, search/replace (single and multi) with its five
//! matching passes, anchored edits, `file_id` checks against a base, and all-or-nothing
//! application to a pending buffer. Pure functions: the daemon does the I/O.
//!
//! # Using it from the daemon
//!
//! 1. Parse `diff_mode` from the config with [`DiffMode::from_str`](std::str::FromStr)
//!    (an unknown value is a [`DiffModeError`] to report as a config error) and send
//!    [`tool_specs`] with the request.
//! 2. When the reply is complete, pass its tool calls, in index order, to [`apply_response`]
//!    (or feed a [`PendingBuffer`] call by call) together with a [`BaseLookup`] that reads the
//!    chat's `output/` files and writable context snapshots.
//! 3. `Ok(writes)`: write every [`FileWrite`] atomically into `output/`, then send `done`.
//!    `Err(DiffError)`: write nothing and send `diff_error` with its `errors` and
//!    `tool_calls` (`{tool, args: call.arguments, path}`).
//!
//! # Semantics
//!
//! - Search/replace ([`apply_search_replace`]): the first of five [`MatchPass`]es that finds
//!   `old_string` decides; several matches fail unless `replace_all`. Errors read
//!   `old_string not found in file` and `old_string not unique (N matches at lines a, b)`.
//!   An empty `old_string` only fills an empty file. Edits whose old equals new are dropped;
//!   a call made only of those fails with `all edits are no-ops`.
//! - Anchored ([`apply_anchored`]): anchors found exact, then ignoring trailing whitespace,
//!   then ignoring all surrounding whitespace (re-indenting the content); each unique; `end`
//!   after `start`; no overlaps; applied bottom-up; `null` content deletes.
//! - Base of an edit ([`BaseKind`]): a pending write or edit earlier in the same response,
//!   else the output file, else the context snapshot. `file_id` must be that of the base or
//!   of the file before the response (what the model was shown), else
//!   `file_id mismatch: got A, expected B`.
//! - Files keep their line endings (text the model sends is converted to the file's; CRLF
//!   files stay CRLF) and their trailing-newline state. All offsets are taken at char
//!   boundaries, so any UTF-8 text is safe.

mod anchored;
mod args;
mod mode;
mod pending;
mod schema;
mod search_replace;
mod text;

pub use anchored::{Anchor, AnchoredChange, AnchoredError, MAX_ANCHOR_LINES, apply_anchored};
pub use mode::{DiffMode, DiffModeError};
pub use pending::{
    BaseKind, BaseLookup, DiffError, FailedToolCall, FileWrite, MemoryLookup, PendingBuffer,
    apply_response, normalize_path,
};
pub use schema::{EDIT_FILE, WRITE_FILE, edit_file_spec, tool_specs, write_file_spec};
pub use search_replace::{
    MatchPass, Replaced, SearchReplace, SearchReplaceError, apply_search_replace,
};
