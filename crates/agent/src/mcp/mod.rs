//! MCP servers as tools. The `mcp.servers` of the configuration and the `mcp:` lines of chat
//! files name servers started as child processes (stdio) or reached over streamable HTTP; this
//! module connects to them with `rmcp`, lists their tools and offers each as a
//! [`Tool`](ybs_tools::Tool) named `SERVER__TOOL`, so they go through the registry, its
//! argument checks and the confirmation policy like any other tool. A server that cannot be
//! started or reached is reported by name and left out; the others still work. Their
//! resources and prompts are kept in [`McpServers`] (read by the `mcp_resource` tool, the
//! REPL's `@server:uri` and `/server:prompt`), their changed lists asked for again before the
//! next model call, and HTTP servers that want OAuth get the token of [`oauth`].
//!
//! The connections live on a small runtime of their own, so a tool call can be made from
//! any thread, inside or outside the caller's runtime.

mod client;
mod connect;
mod http_failure;
mod hub;
mod names;
pub mod oauth;
mod resource_tool;
mod servers;
mod spec;
mod tool;

use std::sync::Arc;

pub use connect::McpFailure;
pub use names::{qualified_name, tool_prefix};
pub use resource_tool::{McpResourceTool, RESOURCE_TOOL};
pub use servers::{
    McpRequestError, McpServers, PromptInfo, PromptRole, ResourceInfo, ServerSummary,
};
pub use spec::{McpServerSpec, McpTransport, SpecError, from_chat_line, from_config};
pub use tool::{McpTool, register_tools};

/// What connecting to a list of servers gave.
#[derive(Default)]
pub struct McpLoad {
    /// The tools of the servers that answered, in server order.
    pub tools: Vec<Arc<McpTool>>,
    /// The servers that answered, with their resources and prompts.
    pub servers: McpServers,
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
        ..McpLoad::default()
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
            Ok(server) => {
                let tools = McpTool::of(&server.spec, &server.service, server.tools.clone(), &hub);
                let names = tools
                    .iter()
                    .map(|tool| tool.spec_name().to_owned())
                    .collect();
                load.servers.push(McpServers::link(&server, &hub, names));
                load.tools.extend(tools);
            }
            Err(failure) => load.failures.push(failure),
        }
    }
    load
}
