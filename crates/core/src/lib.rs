//! The pure message model that every other crate of the workspace speaks: the messages of a
//! conversation, the provider-neutral request, what a provider streams back and the reply it
//! folds into, usage, and the error taxonomy. This crate does no I/O and pulls in no async
//! runtime or HTTP client: everything here is a value or a pure function, so it can be tested
//! exhaustively and shared by the `bb7` daemon, the `ybs` agent and `.chat` file tools alike.
//!
//! # Layout
//!
//! - A conversation: [`Message`]s (`message`, with `time` for their timestamps) made of
//!   [`Part`]s (`part`, serialized exactly as the parts of bb7's `chat.json` v2), and
//!   [`file_id()`] (`file_id`).
//! - A request: [`ChatRequest`] (`request`), [`ToolSpec`] (`tool`), [`CacheBreakpoints`]
//!   (`cache`).
//! - A reply: the [`StreamEvent`]s a provider emits (`event`), the [`Accumulator`] that folds
//!   them into a [`Reply`] (`accumulator`), [`Usage`] (`usage`).
//! - Errors: [`LlmError`], its [`ErrorKind`]s and the [`classify`] function every adapter uses
//!   (`error`).
//! - Untrusted text: [`is_terminal_control`] (`controls`), the characters every inert
//!   rendering escapes.

mod accumulator;
mod cache;
mod controls;
mod error;
mod event;
mod file_id;
mod message;
mod part;
mod request;
mod time;
mod tool;
mod usage;

pub use accumulator::{Accumulator, Reply};
pub use cache::{CacheBreakpoints, CacheTtl, MAX_CACHE_BREAKPOINTS};
pub use controls::is_terminal_control;
pub use error::{ErrorKind, LlmError, classify};
pub use event::{FinishReason, StreamEvent};
pub use file_id::file_id;
pub use message::{Message, Role, SnapshotEntry, Timestamp};
pub use part::{ContextAction, ContextEvent, Image, Part, Thinking, ToolCall, ToolResult};
pub use request::{ChatRequest, DataCollection, ProviderRouting, ReasoningEffort, ResponseFormat};
pub use tool::{ToolChoice, ToolSpec};
pub use usage::Usage;

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
