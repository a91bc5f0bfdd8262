//! bb7: the daemon behind the bb7 Neovim plugin. It speaks line-delimited JSON on
//! stdin/stdout ([`protocol`]) and owns the `.bb7/` store of a project: chats
//! (`chats/{id}/chat.json`, format version 2, older versions migrated on load), context
//! snapshots (`context/`, sections in `context/_sections/{hash}`, external files in
//! `context/_external/{hash}`), model outputs (`output/`), the chat index
//! (`chats/index.json`, changed only under an advisory lock on `chats/.index.lock`) and
//! per-chat PID locks (`chats/{id}/lock`).
//!
//! The protocol loop is [`protocol::server`] (with what its tasks share in [`protocol::shared`]), the state
//! machine and the actions that do not call a model are [`session`], the store [`store::chats`],
//! context operations [`session::context`], outputs and statuses [`session::files`], fork/edit/search
//! [`session::history`], instruction files [`store::instructions`] and per-user config and state
//! [`store::global`]. Where this daemon differs from the first bb7 on purpose, and what it adds, is
//! listed in the crate's `README.md`.
//!
//! Safety (threat model in `SECURITY.md`): every file under `.bb7/` is reached through
//! [`store::confined`] (opened beneath the project root, no link followed, regular files only), a
//! send's writes land all or nothing through [`store::commit`], chats a cloned repository may have
//! planted are checked by [`store::trust`] (`chat_get` then carries `untrusted` with the reason; such
//! a chat is not restored by `init` and not sent), and [`store::lock`] makes chat locks exclusive.
//!
//! The model-calling half: [`send::settings`] (config checks: `Config file not found:
//! ~/.config/bb7/config.json`, `API key not set in config`), [`send::prompt`] (the system message),
//! [`send::assemble`] (the one structured user message), [`send`] (streaming, tool calls applied
//! with `ybs_tools::bb7_edit`, cancel, the WYSIWYG trim loop, `diff_error`, hidden repair),
//! [`send::tool_calls`] (the reply's file tools as the first bb7 treats them), [`send::calls`]
//! (`estimate_tokens`, `estimate_text_tokens`, `get_models`, `get_balance`,
//! `generate_title`), [`send::titles`] and [`store::usage_log`] (`~/.bb7/usage.csv`).
//!
//! Model-side choices where the specs are silent:
//!
//! - `cancel {target_request_id}` is answered `ok` at once when that stream (or, without a
//!   target, any stream) is running, else `No active request to cancel`. The cancelled
//!   `send` is answered `{"type":"error","message":"Response aborted by user."}`, as the
//!   first bb7 did (its client matches that string), after the partial reply and the system
//!   message `Response aborted by user.` are saved.
//! - Assistant messages carry `usage` (`prompt_tokens`, `completion_tokens`,
//!   `cached_tokens`, `total_tokens`, `cost`, `duration` in seconds; zero fields left out)
//!   and `reasoning_effort` when one was set.
//! - `done` and `diff_error` carry `duration` (seconds); `done`, `diff_error` and a send's
//!   `error` also carry the counter fields `predicted`, `trimmed` and `visible` (pairs of
//!   user message and replies).
//! - Provider errors read `<label>: <provider message>`, the label one of `auth`, `quota`,
//!   `net`, `model`, `unknown`.
//! - `generate_title {chat_id, content}` needs `title_model` in the config (`title_model not
//!   configured`), replies `ok` at once and sends `title_updated` when the title arrives.
//! - `prompt_cache_key` (with `explicit_cache_key`) is `bb7:<chat id>:<model>`.
//! - `estimate_text_tokens {texts}` answers `tokens` as an array of counts in order (missing
//!   or empty: `Missing or empty 'texts' array`); `{text}` alone gets one number.
//!   `estimate_tokens {input_text}` counts the text, adds it to `total` and returns its count
//!   as `input_text`.
//! - `send` stores the model it used as the chat's `model`. `AssistantWriteFile` events carry
//!   `readonly`/`external` from the context entry and `added: true` for files not in it.
//!
//! Choices where the specs are silent (written for the first bb7 client's expectations):
//!
//! - Every reply to a request carries its `request_id` as a string; lines that cannot be read
//!   get `{"type":"error","message":"Invalid JSON: ..."}` without one.
//! - A context change is recorded as an assistant-role message holding one `context_event`
//!   part, as the first bb7 did. Section events carry `start_line`/`end_line`, `UserSaveAs`
//!   carries `original_path`.
//! - `apply_file` makes the output the context snapshot, records `UserApplyFile`, deletes the
//!   output and replies `{"type":"ok","content":...}`; the client writes the project file
//!   (the daemon never writes outside `.bb7/` and `~/.bb7/`). `apply_file_as` does the same
//!   for `destination` and records `UserSaveAs`.
//! - `diff_local_done` replies `{"type":"ok","outcome":"none"|"full"|"partial"}`; a partial
//!   apply re-snapshots the local file and records `UserPartialApplyFile` (`added` for a file
//!   not in context); a full apply records `UserApplyFile` with the output's id.
//! - `chat_edit` and `fork_chat` always return `context_warnings` as an array (possibly
//!   empty) and, as the first bb7 does, append one system message holding a
//!   `ForkWarningModified` / `ForkWarningDeleted` context event per warning (`version` the
//!   file id in the snapshot) to the chat they leave behind; a fork becomes the active chat.
//! - `sync_context {path}` (`path` required) re-snapshots the file silently (no event) and
//!   replies `ok`.
//! - `add_system_message` takes its text from `content` or, as the first client sends it,
//!   `message`.
//! - `chat_move {id, to}` replies `ok` and makes the moved chat the active one; a chat moved
//!   to the global store has all its context files made read-only.
//! - `message_delete {index, chat_id?}` (ours) removes the user message at `index` and the
//!   replies that follow it.
//! - `shutdown` is answered with `ok` before the process exits.
//! - `.bb7/pinned_chats.json` belongs to the client (it reads and writes it itself); the
//!   daemon never touches it.
//! - `ping`, `version` and `cancel` are answered as soon as they are read; every other
//!   request is handled in arrival order by the session, so their replies may overtake
//!   queued work. Network calls (`get_models`, `get_balance`, titles, a send's model list)
//!   run in the background and never hold the session up.

pub mod protocol;
pub mod send;
pub mod session;
pub mod store;

pub use protocol::error::{Error, Result};
pub use protocol::{Reply, Request};
pub use session::Session;
pub use store::global::Home;
