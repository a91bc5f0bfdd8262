//! ybs: the terminal coding agent. This crate owns the agent loop ([`agent`], built from the
//! configuration by [`setup`]), configuration layering ([`config`]), the command line
//! ([`cli`], run by [`run`]), the REPL and its slash commands ([`slash`]), the streaming
//! display ([`render`]), the terminal side of confirmations ([`confirm`]), loop detection
//! ([`loop_guard`]), sessions as `.chat` files ([`session`]), `git.auto_commit` ([`git`]),
//! MCP servers' tools ([`mcp`]), the tool lines of chat files for `ask` ([`chat_tools`]),
//! the system prompt with the environment, project instructions and the repository map
//! ([`prompt`], [`repo_map`], readied by
//! [`prepare`], the project found by [`project`]), change previews and diffs ([`diff_view`])
//! and `/undo` ([`undo`], kept on disk for `ybs undo`: [`undo_cmd`]); costs from the price table ([`pricing`]); `exec --json`
//! ([`exec_json`]) and the first run's provider choice ([`first_run`]).
//! The `ybs` binary only parses its arguments and calls [`run`].

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
