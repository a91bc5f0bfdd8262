//! ybs: the terminal coding agent. The engine (the agent loop, permissions, the prompt,
//! sessions and undo, configuration, the MCP client) is the [`ybs_agent`] crate; this crate
//! is its command line, its front ends and its terminal display. The `ybs` binary only parses
//! its arguments ([`cli`]) and calls [`run`].
//!
//! The folders, from the command line down (each uses only those below it):
//!
//! - [`commands`]: each command to its front end; `chat`, `tools`, `tool` and `undo`.
//! - [`frontends`]: the ways of running the agent: the REPL, `exec` (text and `--json`),
//!   `ask` on chat files, and the ACP and MCP servers.
//! - [`startup`]: what the commands share around the agent: loading the configuration and
//!   building the agent, the first run, before and after a turn, sessions without a terminal.
//! - [`render`]: the terminal display: the streamed reply, markdown and code, diffs, tool
//!   lines, and [`render::LineUi`], the terminal's side of [`ybs_agent::Ui`].

pub mod cli;
pub mod commands;
pub mod frontends;
pub mod render;
pub mod startup;

pub use commands::run;
pub use ybs_agent::host::Host;
