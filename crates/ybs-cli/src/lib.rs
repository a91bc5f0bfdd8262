//! ybs: the terminal coding agent. This crate owns configuration layering ([`config`]), the
//! command line ([`cli`], run by [`run`]), slash-command parsing ([`slash`]), the streaming
//! display ([`render`]), the terminal side of confirmations ([`confirm`]), loop detection
//! ([`loop_guard`]) and `git.auto_commit` ([`git`]). The `ybs` binary only parses its
//! arguments and calls [`run`].
//!
//! The agent loop, the REPL and sessions build on the provider, tools, context-budget and
//! chatfile crates and are not in this build yet: the commands that need them say so and
//! exit with an error.

pub mod cli;
pub mod config;
pub mod confirm;
pub mod git;
pub mod loop_guard;
pub mod render;
mod run;
pub mod slash;

pub use run::{Host, run};
