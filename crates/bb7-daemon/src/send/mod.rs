//! The model-calling half. A `send` is prepared on the session's thread ([`prepare`]: the
//! checks, the budget, the user message saved before anything is sent), streamed by its own
//! task ([`run`]: `chunk` and `thinking` lines as they arrive, the WYSIWYG trim loop on a
//! context overflow, the reply's tool calls applied all or nothing, one hidden repair with
//! `auto_retry_partial_edits`) and recorded when it ends ([`record`]: the assistant message
//! with `usage` and `reasoning_effort`, the outputs committed through
//! [`crate::store::commit`], then `done`, `diff_error` or `error`; a cancel keeps the partial
//! reply and answers `Response aborted by user.`). The request itself is [`prompt`] (the
//! system message) and [`assemble`] (the one structured user message); the reply's file
//! tools are read by [`tool_calls`]; [`settings`] checks the config first (which provider, its
//! endpoint and key, as ybs chooses them). The other model
//! calls are [`calls`] (`estimate_tokens`, `estimate_text_tokens`, `get_models`,
//! `get_balance`, `generate_title`), [`provider`] (models with their limits, the balance, as
//! the provider's capabilities allow) and [`titles`]; [`tokens`] counts cl100k tokens.

pub mod assemble;
pub mod calls;
pub mod prepare;
pub mod prompt;
pub mod provider;
pub mod record;
pub mod run;
pub mod settings;
pub mod shared;
mod stream;
pub mod titles;
pub mod tokens;
pub mod tool_calls;
