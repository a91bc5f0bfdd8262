//! The last step: options, tool requests and `meta` come out of the message list; what stays
//! is the conversation.

use super::error::ExpandError;
use super::message::{ExpandedMessage, Expansion, ToolRequest, ToolRequestKind};
use super::trace;

/// Roles of the reference implementation's workflow engine, which has no counterpart here.
const WORKFLOW_ROLES: [&str; 5] = ["association", "kb", "job", "inline_job", "introduce"];

pub(super) fn extract(messages: Vec<ExpandedMessage>) -> Result<Expansion, ExpandError> {
    let mut expansion = Expansion::default();
    for message in messages {
        let role = message.role.as_str();
        let options = &mut expansion.options;
        match role {
            "system" | "user" | "image" | "pdf" => expansion.messages.push(message),
            "assistant" => {
                options.transient.clear();
                expansion.messages.push(message);
            }
            "function_call" => {
                trace::tool_call(&message)?;
                expansion.messages.push(message);
            }
            "function_call_output" => {
                trace::tool_result(&message)?;
                expansion.messages.push(message);
            }
            "endpoint" | "backend" | "model" | "agent" | "previous_response_id" => {
                if role == "previous_response_id" {
                    expansion.previous_response_at = Some(expansion.messages.len());
                }
                options.sticky.insert(message.role, message.content);
            }
            "format" | "persist" | "websearch" => {
                options.transient.insert(message.role, message.content);
            }
            "sticky_option" | "option" => {
                let (key, value) = key_value(&message.content);
                let target = if role == "option" {
                    &mut options.transient
                } else {
                    &mut options.sticky
                };
                target.insert(key.to_owned(), value.to_owned());
            }
            "tool" | "mcp" | "task" | "inline_task" | "exec_task" => {
                let kind = match role {
                    "tool" => ToolRequestKind::Tool,
                    "mcp" => ToolRequestKind::Mcp,
                    "task" => ToolRequestKind::Task,
                    "inline_task" => ToolRequestKind::InlineTask,
                    _ => ToolRequestKind::ExecTask,
                };
                let args = shell_words::split(&message.content).map_err(|err| {
                    ExpandError::BadArguments {
                        at: message.source.clone(),
                        role: message.role.clone(),
                        reason: err.to_string(),
                    }
                })?;
                expansion.tools.push(ToolRequest {
                    kind,
                    args,
                    source: message.source,
                    position: expansion.messages.len(),
                });
            }
            "meta" => expansion.meta.push(message.content),
            _ if WORKFLOW_ROLES.contains(&role) => {
                return Err(ExpandError::UnsupportedRole {
                    hint: format!(
                        "`{role}` belongs to the reference implementation's workflow engine, which ybs does not have; remove the line"
                    ),
                    at: message.source,
                    role: message.role,
                });
            }
            _ => {
                return Err(ExpandError::UnsupportedRole {
                    hint: format!(
                        "ybs does not know this role; if the line is meant as text, write it as `\\{role}:...`"
                    ),
                    at: message.source,
                    role: message.role,
                });
            }
        }
    }
    Ok(expansion)
}

/// `key value`: split at the first space, the value kept as written after it (as the
/// reference's `partition(" ")` does, so `top_p  0.9` sets ` 0.9`).
fn key_value(content: &str) -> (&str, &str) {
    content.split_once(' ').unwrap_or((content, ""))
}
