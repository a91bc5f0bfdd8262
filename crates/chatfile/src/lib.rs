//! `.chat` files: the human-editable conversation format of `specs/chat-file-format.md`, read
//! and written so that files made for the reference implementation work here and files written
//! here work there, and turned into the [`ybs_core::Message`]s a model is sent.
//!
//! # Layout
//!
//! - Text, both ways: `parse` turns text into messages with line spans ([`parse()`],
//!   [`parse_document`], borrowing from the text with [`parse_borrowed`], or from a reader a
//!   window at a time with [`parse_reader`], in `stream`); the shape of each
//!   line is decided from its bytes by the recognizers of `lines`, which the tests hold equal
//!   to the pest grammar of one line (`grammar`, `chat.pest`): linear time, no recursion, no
//!   panics. `print` writes messages back ([`print()`]) so that
//!   `parse(print(m)) == m`, and `append` adds messages at the end of a file atomically,
//!   without touching what is above ([`append()`]).
//! - `expand/`: the expansion pipeline, the only part that reads the file system. An
//!   [`Expander`] runs imports, clear, clean and files, then takes out the options, tool
//!   requests and the tool-call trace; [`Expansion::to_core_messages`] turns the result into
//!   core messages.
//! - `convert`: core messages back to chat messages ([`from_core`]).
//!
//! The exact rules are in `notes/chatfile-rules.md`; this crate follows them line by line, and
//! where they leave room it reads files as the reference implementation (scout-ai's
//! `Chat.parse`) does. `tests/reference_compat.rs` holds inputs with the reference's reading,
//! and the deliberate differences (the notes' fixes) with both readings.

mod append;
mod content;
mod convert;
mod expand;
mod grammar;
mod lines;
mod message;
mod parse;
mod print;
mod search;
mod stream;
mod walk;

#[cfg(test)]
mod fast_path_tests;

pub use append::{AppendError, append, appended_text};
pub use convert::from_core;
pub use expand::{
    Access, ExpandError, ExpandedMessage, Expander, Expansion, Options, Source, ToolRequest,
    ToolRequestKind, expand_file,
};
pub use parse::{
    BlockKind, ChatMessage, DEFAULT_ROLE, Document, LineSpan, MessageRef, OpenBlock, ParsedMessage,
    parse, parse_borrowed, parse_document, parse_each, parse_messages,
};
pub use print::{INLINE_ROLES, PrintError, is_valid_role, print};
pub use stream::parse_reader;

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
