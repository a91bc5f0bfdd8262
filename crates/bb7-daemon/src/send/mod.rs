//! The model-calling half. `send` is prepared on the session's thread ([`prepare`]),
//! streamed by its own task ([`run`], `stream`) and recorded when it ends ([`record`]).
//!
//! The task streams `chunk` and `thinking` lines as they arrive, then applies the reply's
//! tool calls with `ybs_tools::bb7_edit` (all or nothing) and commits them to `output/`
//! through [`crate::store::commit`] (the project-root guard), recording an
//! `AssistantWriteFile` event per file on the assistant message, and answers `done` with
//! `output_files`, `usage` and the WYSIWYG counter fields `predicted`, `trimmed`, `visible`.
//! Failed edits answer `diff_error` instead (nothing written, text kept), or with
//! `auto_retry_partial_edits` first make one hidden repair request. A context overflow runs
//! the context-budget trim loop: the oldest history pairs are left out and the request sent
//! again. `cancel` stops the stream: the partial reply is saved, then the system message
//! `Response aborted by user.`, and the `send` is answered with the error
//! `Response aborted by user.` (the cancel itself with `ok`). Assistant messages carry
//! `usage` (`duration` in seconds, zero fields left out) and `reasoning_effort`. Provider errors are
//! answered with `error` (`<label>: <provider message>`); the user message is saved before
//! anything is sent, so it is never lost.

pub mod assemble;
pub mod calls;
pub mod prepare;
pub mod prompt;
pub mod record;
pub mod run;
pub mod settings;
mod stream;
pub mod titles;
pub mod tokens;
pub mod tool_calls;
