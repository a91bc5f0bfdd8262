//! The front ends: each turns what the user gives into agent turns and shows what the agent
//! reports through its own [`Ui`](ybs_agent::Ui). [`repl`] is the interactive session,
//! [`exec`] one task without a conversation (text, or JSON events for scripts), [`ask`] one
//! turn on a chat file. A front end depends on the agent and on [`startup`](crate::startup),
//! never the other way and never on another front end, so a new one (an ACP server, an MCP
//! server) is a new folder here, its command in [`cli`](crate::cli) and a line in
//! [`commands::run`](crate::commands::run).

pub mod acp;
pub mod ask;
pub mod exec;
pub mod mcp_server;
pub mod repl;
