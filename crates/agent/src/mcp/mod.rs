//! MCP servers as tools. The `mcp.servers` of the configuration and the `mcp:` lines of chat
//! files name servers started as child processes (stdio) or reached over streamable HTTP; this
//! module connects to them with `rmcp`, lists their tools and offers each as a
//! [`Tool`](ybs_tools::Tool) named `SERVER__TOOL`, so they go through the registry, its
//! argument checks and the confirmation policy like any other tool. A server that cannot be
//! started or reached is reported by name and left out; the others still work.
//!
//! The connections live on a small runtime of their own, so a tool call can be made from
//! any thread, inside or outside the caller's runtime.

mod connect;
mod http_failure;
mod hub;
mod names;
mod spec;
mod tool;

use std::sync::Arc;

pub use connect::McpFailure;
pub use names::{qualified_name, tool_prefix};
pub use spec::{McpServerSpec, McpTransport, SpecError, from_chat_line, from_config};
pub use tool::McpTool;

/// What connecting to a list of servers gave.
#[derive(Default)]
pub struct McpLoad {
    /// The tools of the servers that answered, in server order.
    pub tools: Vec<Arc<McpTool>>,
    /// The servers that did not.
    pub failures: Vec<McpFailure>,
}

/// Connects to every server at once and lists their tools; each server has its own startup
/// timeout. Blocks until all have answered or failed.
pub fn connect_all(specs: Vec<McpServerSpec>) -> McpLoad {
    if specs.is_empty() {
        return McpLoad::default();
    }
    let names: Vec<String> = specs.iter().map(|spec| spec.name.clone()).collect();
    let all_failed = |message: String| McpLoad {
        tools: Vec::new(),
        failures: (names.iter())
            .map(|server| McpFailure {
                server: server.clone(),
                message: message.clone(),
            })
            .collect(),
    };
    let hub = match hub::Hub::new() {
        Ok(hub) => Arc::new(hub),
        Err(error) => return all_failed(format!("cannot start the MCP runtime: {error}")),
    };
    let connected = hub.block_on(async move {
        futures::future::join_all(specs.into_iter().map(connect::connect)).await
    });
    let Some(connected) = connected else {
        return all_failed("the MCP runtime stopped while connecting".into());
    };
    let mut load = McpLoad::default();
    for result in connected {
        match result {
            Ok(server) => load.tools.extend(McpTool::all_of(server, &hub)),
            Err(failure) => load.failures.push(failure),
        }
    }
    load
}
