//! ybs: the terminal coding agent. It sends a conversation to a model with tools that read,
//! edit and run commands in a sandbox, asks before the calls that need confirmation, streams
//! the reply to the terminal, and keeps sessions and an undo journal on disk. The `ybs`
//! binary only parses its arguments ([`cli`]) and calls [`run`].
//!
//! The folders, from the command line down (each uses only those below it):
//!
//! - [`commands`]: each command to its front end; `chat`, `tools`, `tool` and `undo`.
//! - [`frontends`]: the ways of running the agent: the REPL, `exec` (text and `--json`) and
//!   `ask` on chat files.
//! - [`startup`]: what the commands share around the agent: the host, loading the
//!   configuration and building the agent, the first run, before and after a turn.
//! - [`agent`]: the loop, tool wiring, confirmations and the loop guard, the task list, the
//!   `task` sub-agent and the hooks; it reports through one trait, [`agent::Ui`].
//! - [`prompt`]: the system prompt: ybs's instructions, the environment, project
//!   instructions and the repository map.
//! - [`session`]: sessions saved as `.chat` files, and undo.
//! - [`mcp`]: MCP servers' tools.
//! - [`render`]: the terminal display: the streamed reply, markdown and code, diffs, tool lines.
//! - [`config`]: configuration layering, schema and validation.
//! - [`project`]: where the project is, and `git.auto_commit`.

pub mod agent;
pub mod cli;
pub mod commands;
pub mod config;
pub mod frontends;
pub mod mcp;
pub mod project;
pub mod prompt;
pub mod render;
pub mod session;
pub mod startup;

pub use commands::run;
pub use startup::host::Host;
