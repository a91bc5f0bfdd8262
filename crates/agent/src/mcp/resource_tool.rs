//! `mcp_resource`: the model lists the resources of the connected MCP servers and reads one
//! by its server and URI. A resource's text is the server's, untrusted like a tool's result:
//! it reaches the model through the registry, whose output limit applies to it.

use serde_json::{Value, json};
use ybs_core::ToolSpec;
use ybs_tools::{ActionKind, Args, Declaration, NetworkUse, Tool, ToolContext, ToolError};

use super::servers::McpServers;

/// The tool's name.
pub const RESOURCE_TOOL: &str = "mcp_resource";

/// The `mcp_resource` tool over the session's servers.
pub struct McpResourceTool {
    spec: ToolSpec,
    servers: McpServers,
}

impl McpResourceTool {
    /// The tool for `servers`.
    pub fn new(servers: McpServers) -> Self {
        let spec = ToolSpec::new(
            RESOURCE_TOOL,
            "Resources of the connected MCP servers (documents, records, files they offer). \
             Without `uri`: list them (of `server` only, when given), each with its server, \
             URI, name and description. With `server` and `uri`: read that resource's text.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name"},
                    "uri": {"type": "string", "description": "The resource's URI, as listed"}
                }
            }),
        );
        McpResourceTool { spec, servers }
    }
}

impl Tool for McpResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Listing and reading change nothing, so calls run together, in plan mode and in
    /// sub-agents; the server may reach the network to answer.
    fn declaration(&self) -> Declaration {
        Declaration {
            network: NetworkUse::Always,
            ..Declaration::looking(ActionKind::Read)
        }
    }

    fn invoke(&self, args: &Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let server = args.opt_str("server")?;
        let uri = args.opt_str("uri")?;
        match (server, uri) {
            (Some(server), Some(uri)) => {
                let text = (self.servers.read_resource(server, uri))
                    .map_err(|error| ToolError::failed(error.to_string()))?;
                Ok(json!({"success": true, "server": server, "uri": uri, "text": text}))
            }
            (None, Some(_)) => Err(args.invalid(
                "`uri` needs `server`: the name of the MCP server the resource is listed under",
            )),
            (server, None) => {
                let listed = (self.servers.resources(server))
                    .map_err(|error| ToolError::failed(error.to_string()))?;
                let resources: Vec<Value> = (listed.into_iter())
                    .map(|resource| {
                        json!({
                            "server": resource.server,
                            "uri": resource.uri,
                            "name": resource.name,
                            "description": resource.description,
                            "mime_type": resource.mime_type,
                        })
                    })
                    .collect();
                Ok(json!({"success": true, "resources": resources}))
            }
        }
    }
}
