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
//! 3. `Ok(writes)`: write every [`FileWrite`] atomically into `output/` (after the daemon's
//!    own project-root guard), record an `AssistantWriteFile` with [`FileWrite::file_id`],
//!    then send `done`. `Err(DiffError)`: write nothing, keep the assistant's text, and send
//!    `diff_error` with its `errors` and `tool_calls` (`{tool, args: call.arguments, path}`;
//!    only the calls that failed are listed).
//!
//! ```
//! use ybs_edit::{DiffMode, MemoryLookup, apply_response, tool_specs};
//! use ybs_core::{ToolCall, file_id};
//!
//! let mode: DiffMode = "search_replace_multi".parse().unwrap();
//! assert_eq!(tool_specs(mode).len(), 2);
//! let lookup = MemoryLookup::new().with_context("src/a.rs", "fn a() {}\n");
//! let args = format!(
//!     r#"{{"edits":[{{"path":"src/a.rs","file_id":"{}","old_string":"a()","new_string":"b()"}}]}}"#,
//!     file_id("src/a.rs", "fn a() {}\n")
//! );
//! let call = ToolCall::from_raw_arguments("call_1", "edit_file", &args);
//! let writes = apply_response(mode, &[call], &lookup).unwrap();
//! assert_eq!(writes[0].content, "fn b() {}\n");
//! ```
//!
//! Error lines read `edit_file edit <i> (<path>, base=pending|output|context): <why>`, with
//! `<i>` counted from 0 (as the first bb7 does) over the edits of the whole response (each element of a multi call's
//! `edits`, each single or anchored call), `base=none` when no base was found or the call
//! could not be read, and `write_file (<path>): <why>` for `write_file`.
//!
//! # Semantics
//!
//! - Search/replace ([`apply_search_replace`]): the first of five [`MatchPass`]es that finds
//!   `old_string` decides; several matches fail unless `replace_all`. Both argument shapes
//!   (`{edits: [...]}` and a single edit) are read in both search/replace modes. Errors read
//!   `old_string not found in file` and `old_string not unique (N matches at lines a, b)`.
//!   An empty `old_string` only fills an empty file. Edits whose old equals new are dropped;
//!   a call made only of those fails with `all edits are no-ops`.
//! - Anchored ([`apply_anchored`]): anchors found exact, then ignoring trailing whitespace,
//!   then ignoring all surrounding whitespace (re-indenting the content); each unique; `end`
//!   after `start`; no overlaps; applied bottom-up; `null` content deletes. A call is one
//!   edit: any failing change fails it.
//! - Base of an edit ([`BaseKind`]): a pending write or edit earlier in the same response,
//!   else the output file, else the context snapshot. `file_id` must be that of the base or
//!   of the file before the response (what the model was shown), else
//!   `file_id mismatch: got A, expected B` (B: the id the model was shown, or of the pending
//!   content for a file this response created). Paths are normalised ([`normalize_path`]);
//!   absolute paths and `..` are refused, and a second `write_file` of one path is an error.
//! - Matching is bounded ([`MatchWork`]): each edit takes time linear in the file and the
//!   quoted text, and a response's edits share a work limit ([`DEFAULT_WORK_LIMIT`] steps);
//!   past it every further edit fails with `edit matching stopped: ...` (reported once).
//! - Files keep their line endings (text the model sends is converted to the file's; CRLF
//!   files stay CRLF) and their trailing-newline state. All offsets are taken at char
//!   boundaries, so any UTF-8 text is safe.

mod anchored;
mod args;
mod mode;
mod pending;
mod read_check;
mod schema;
mod search_replace;
mod text;
mod work;

pub use anchored::{
    Anchor, AnchoredChange, AnchoredError, MAX_ANCHOR_LINES, apply_anchored, apply_anchored_with,
    describe_anchored_error,
};
pub use mode::{DiffMode, DiffModeError};
pub use pending::{
    BaseKind, BaseLookup, DiffError, FailedToolCall, FileWrite, MemoryLookup, PendingBuffer,
    apply_response, normalize_path,
};
pub use read_check::read_error;
pub use schema::{EDIT_FILE, WRITE_FILE, edit_file_spec, tool_specs, write_file_spec};
pub use search_replace::{
    MatchPass, Replaced, SearchReplace, SearchReplaceError, apply_search_replace,
    apply_search_replace_with,
};
pub use work::{DEFAULT_WORK_LIMIT, MatchWork};
