//! One tool of an MCP server as a [`Tool`] of the registry.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};
use ybs_core::ToolSpec;
use ybs_tools::{Args, ConfirmationPolicy, Tool, ToolContext, ToolError, ToolRegistry};

use super::connect::{McpFailure, Service};
use super::hub::{Hub, Interrupted};
use super::names::qualified_name;
use super::spec::McpServerSpec;

/// A server's tool, offered as `SERVER__TOOL`.
pub struct McpTool {
    spec: ToolSpec,
    server: String,
    tool: String,
    trusted: bool,
    timeout: Duration,
    service: Arc<Service>,
    hub: Arc<Hub>,
}

impl McpTool {
    pub(super) fn of(
        spec: &McpServerSpec,
        service: &Arc<Service>,
        tools: Vec<rmcp::model::Tool>,
        hub: &Arc<Hub>,
    ) -> Vec<Arc<McpTool>> {
        (tools.into_iter())
            .map(|tool| {
                let description = tool
                    .description
                    .as_deref()
                    .or(tool.title.as_deref())
                    .unwrap_or_default();
                let parameters = Value::Object(tool.input_schema.as_ref().clone());
                Arc::new(McpTool {
                    spec: ToolSpec::new(
                        qualified_name(&spec.name, &tool.name),
                        description,
                        parameters,
                    ),
                    server: spec.name.clone(),
                    tool: tool.name.to_string(),
                    trusted: spec.trust,
                    timeout: spec.tool_timeout,
                    service: service.clone(),
                    hub: hub.clone(),
                })
            })
            .collect()
    }

    /// The tool's name in the registry (`SERVER__TOOL`).
    pub fn spec_name(&self) -> &str {
        &self.spec.name
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether its calls run without asking (`trust` of its server).
    pub fn trusted(&self) -> bool {
        self.trusted
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A server's word about its tool is input, not a promise: its tools may change
    /// anything, run alone, and are offered neither in plan mode nor to sub-agents.
    fn declaration(&self) -> ybs_tools::Declaration {
        ybs_tools::Declaration::default()
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut params = CallToolRequestParams::new(self.tool.clone());
        if let Value::Object(arguments) = args.to_value() {
            params = params.with_arguments(arguments);
        }
        let service = self.service.clone();
        let timeout = self.timeout;
        let call = async move { tokio::time::timeout(timeout, service.call_tool(params)).await };
        let server = &self.server;
        match self.hub.wait(call, || ctx.cancel.is_cancelled()) {
            Ok(Ok(Ok(result))) => result_value(result),
            Ok(Ok(Err(error))) => Err(ToolError::failed(format!(
                "MCP server `{server}` failed the call: {error}"
            ))),
            Ok(Err(_)) => Err(ToolError::failed(format!(
                "MCP server `{server}` did not answer within {} s \
                 (mcp.servers.{server}.tool_timeout_seconds)",
                timeout.as_secs()
            ))),
            Err(Interrupted::Cancelled) => Err(ToolError::failed("cancelled by the user")),
            Err(Interrupted::Stopped) => Err(ToolError::failed(format!(
                "the connection to MCP server `{server}` is closed"
            ))),
        }
    }
}

/// Adds `tools` to `registry`; the tools of a server that is not trusted ask before each
/// call. Returns the names registered; a name that is taken goes to `failures`.
pub fn register_tools(
    tools: Vec<Arc<McpTool>>,
    registry: &mut ToolRegistry,
    policy: &mut ConfirmationPolicy,
    failures: &mut Vec<McpFailure>,
) -> Vec<String> {
    let mut names = Vec::new();
    for tool in tools {
        let name = ybs_tools::Tool::spec(tool.as_ref()).name.clone();
        let server = tool.server().to_owned();
        let trusted = tool.trusted();
        if let Err(error) = registry.register(tool) {
            failures.push(McpFailure {
                server,
                message: error.to_string(),
            });
            continue;
        }
        if !trusted {
            policy.require(
                name.clone(),
                format!(
                    "`{name}` is a tool of MCP server `{server}` (mcp.servers.{server}.trust \
                     is off)"
                ),
            );
        }
        names.push(name);
    }
    names
}

/// A call's result for the model: `{"success": true, "content": TEXT}` (and
/// `structured_content` when the server sent it), or the error the server reported.
fn result_value(result: CallToolResult) -> Result<Value, ToolError> {
    let text = (result.content.iter())
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error == Some(true) {
        return Err(ToolError::failed(if text.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            text
        }));
    }
    let mut value = json!({"success": true, "content": text});
    if let Some(structured) = result.structured_content.filter(|s| !s.is_null()) {
        value["structured_content"] = structured;
    }
    Ok(value)
}

/// Text as it is; what the model cannot read here is described instead.
pub(super) fn content_text(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image {}, {} base64 bytes]",
                image.mime_type,
                image.data.len()
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio {}, {} base64 bytes]",
                audio.mime_type,
                audio.data.len()
            )
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, blob, .. } => {
                format!("[resource {uri}, {} base64 bytes]", blob.len())
            }
            _ => "[a resource of a kind ybs does not know]".to_owned(),
        },
        ContentBlock::ResourceLink(resource) => format!("[resource {}]", resource.uri),
        _ => "[content of a kind ybs does not know]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::TextContent;

    fn text(text: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(text))
    }

    #[test]
    fn text_content_is_joined_by_lines() {
        let result = CallToolResult::success(vec![text("a"), text("b")]);
        assert_eq!(
            result_value(result).unwrap(),
            json!({"success": true, "content": "a\nb"})
        );
    }

    #[test]
    fn an_error_result_is_a_tool_error_with_its_text() {
        let result = CallToolResult::error(vec![text("no such file")]);
        assert_eq!(
            result_value(result).unwrap_err().to_string(),
            "no such file"
        );
    }
}
