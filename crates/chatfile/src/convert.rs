//! From core [`Message`]s to chat messages: tool calls and results become `function_call` /
//! `function_call_output` lines of one-line JSON, code parts fenced text. The other way (an
//! expanded chat to core messages) is [`Expansion::to_core_messages`](crate::Expansion::to_core_messages).

use serde_json::{Map, Value, json};
use ybs_core::{Image, Message, Part, Role};

use crate::parse::ChatMessage;

/// The readable text of a message: its text and raw parts as they are, code parts as fenced
/// blocks, in order.
fn body_text(message: &Message) -> String {
    let mut text = String::new();
    for part in &message.parts {
        match part {
            Part::Text { content } | Part::Raw { content } => text.push_str(content),
            Part::Code { content, language } => {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("```");
                text.push_str(language.as_deref().unwrap_or(""));
                text.push('\n');
                text.push_str(content);
                if !content.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("```\n");
            }
            _ => {}
        }
    }
    text
}

/// Core messages as chat messages, ready to [`print`](crate::print()) or
/// [`append`](crate::append()): text as `system`/`user`/`assistant` blocks, tool calls as
/// `function_call` lines, tool results as `function_call_output` lines, images with a path as
/// `image` lines; code parts become fenced blocks of the text. Parts a chat file cannot hold
/// (thinking, images given as data, file and context events) are left out.
pub fn from_core(messages: &[Message]) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    for message in messages {
        let text = body_text(message);
        let text = crate::grammar::strip(&text);
        if !text.is_empty() && message.role != Role::Tool {
            out.push(ChatMessage::new(message.role.as_str(), text));
        }
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => {
                    let arguments = match &call.arguments_error {
                        Some(_) => Value::String(call.arguments_text()),
                        None => call.arguments.clone(),
                    };
                    let line = json!({"name": call.name, "arguments": arguments, "id": call.id});
                    out.push(ChatMessage::new("function_call", line.to_string()));
                }
                Part::ToolResult(result) => {
                    let mut line = Map::new();
                    line.insert("id".into(), Value::String(result.call_id.clone()));
                    if let Some(name) = &result.name {
                        line.insert("name".into(), Value::String(name.clone()));
                    }
                    line.insert("content".into(), Value::String(result.content.clone()));
                    if result.is_error {
                        line.insert("is_error".into(), Value::Bool(true));
                    }
                    out.push(ChatMessage::new(
                        "function_call_output",
                        Value::Object(line).to_string(),
                    ));
                }
                Part::Image(Image {
                    path: Some(path), ..
                }) => out.push(ChatMessage::new("image", path.clone())),
                _ => {}
            }
        }
    }
    out
}
