//! Between chat messages and core [`Message`]s: tool traces are `function_call` /
//! `function_call_output` lines of one-line JSON on the chat side and `tool_call` /
//! `tool_result` parts on the core side; files are user text.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use ybs_core::{Image, Message, Part, Role, ToolCall, ToolResult};

use crate::expand::{ExpandError, ExpandedMessage, Expansion};
use crate::parse::ChatMessage;

impl Expansion {
    /// The conversation as core messages: `system`, `user` and `assistant` text; consecutive
    /// `function_call`s as `tool_call` parts of one assistant message (joining the assistant
    /// text right before them); each `function_call_output` as a tool message with a
    /// `tool_result` part; `image` as a user message with an image part; `pdf` as a user message
    /// with a file part.
    pub fn to_core_messages(&self) -> Result<Vec<Message>, ExpandError> {
        let mut out: Vec<Message> = Vec::new();
        let mut names: HashMap<String, String> = HashMap::new();
        let mut assistant_open = false;
        for message in &self.messages {
            match message.role.as_str() {
                "function_call" => {
                    let call = tool_call(message)?;
                    names.insert(call.id.clone(), call.name.clone());
                    match out.last_mut() {
                        Some(last) if assistant_open => last.parts.push(Part::ToolCall(call)),
                        _ => out.push(Message::new(Role::Assistant, vec![Part::ToolCall(call)])),
                    }
                    assistant_open = true;
                    continue;
                }
                "function_call_output" => {
                    let mut result = tool_result(message)?;
                    if result.name.is_none() {
                        result.name = names.get(&result.call_id).cloned();
                    }
                    out.push(Message::new(Role::Tool, vec![Part::ToolResult(result)]));
                }
                "system" => out.push(Message::system(message.content.clone())),
                "assistant" => {
                    out.push(Message::assistant(message.content.clone()));
                    assistant_open = true;
                    continue;
                }
                "image" => out.push(Message::new(
                    Role::User,
                    vec![Part::Image(Image {
                        media_type: media_type(&message.content).map(str::to_owned),
                        path: Some(message.content.clone()),
                        data: None,
                    })],
                )),
                "pdf" => out.push(Message::new(
                    Role::User,
                    vec![Part::File {
                        path: message.content.clone(),
                    }],
                )),
                _ => out.push(Message::user(message.content.clone())),
            }
            assistant_open = false;
        }
        Ok(out)
    }
}

fn media_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

fn malformed(message: &ExpandedMessage, reason: impl Into<String>) -> ExpandError {
    ExpandError::MalformedTrace {
        at: message.source.clone(),
        role: message.role.clone(),
        reason: reason.into(),
    }
}

fn json_object(message: &ExpandedMessage) -> Result<Map<String, Value>, ExpandError> {
    match serde_json::from_str::<Value>(&message.content) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(malformed(message, "expected a JSON object")),
        Err(err) => Err(malformed(message, err.to_string())),
    }
}

fn string_field<'a>(object: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))
}

/// A `function_call`: `{"name","arguments","id"}` (also the OpenAI shape with the name and
/// arguments under `function`). Arguments may be JSON or a string of JSON.
pub(crate) fn tool_call(message: &ExpandedMessage) -> Result<ToolCall, ExpandError> {
    let object = json_object(message)?;
    let function = object.get("function").and_then(Value::as_object);
    let name = string_field(&object, &["name"])
        .or_else(|| function.and_then(|f| string_field(f, &["name"])))
        .ok_or_else(|| malformed(message, "missing \"name\""))?;
    let id = string_field(&object, &["id", "call_id"])
        .ok_or_else(|| malformed(message, "missing \"id\""))?;
    let arguments = object
        .get("arguments")
        .or_else(|| function.and_then(|f| f.get("arguments")));
    Ok(match arguments {
        None | Some(Value::Null) => ToolCall::new(id, name, Value::Object(Map::new())),
        Some(Value::String(raw)) => ToolCall::from_raw_arguments(id, name, raw),
        Some(value) => ToolCall::new(id, name, value.clone()),
    })
}

/// A `function_call_output`: `{"id","content"}` (`tool_call_id` and `call_id` are accepted
/// for the id; content that is not a string is kept as its JSON text).
pub(crate) fn tool_result(message: &ExpandedMessage) -> Result<ToolResult, ExpandError> {
    let object = json_object(message)?;
    let call_id = string_field(&object, &["id", "tool_call_id", "call_id"])
        .ok_or_else(|| malformed(message, "missing \"id\""))?;
    let content = match object.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) => String::new(),
        Some(value) => value.to_string(),
        None => return Err(malformed(message, "missing \"content\"")),
    };
    Ok(ToolResult {
        call_id: call_id.to_owned(),
        name: string_field(&object, &["name"]).map(str::to_owned),
        content,
        is_error: object
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

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
/// [`append`](crate::append): text as `system`/`user`/`assistant` blocks, tool calls as
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
