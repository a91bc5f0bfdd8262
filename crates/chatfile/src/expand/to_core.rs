//! An [`Expansion`] as core [`Message`]s: the tool-call trace becomes `tool_call` and
//! `tool_result` parts, `image` and `pdf` lines image parts (a PDF with its media type), the rest text.

use std::collections::HashMap;

use ybs_core::{Image, Message, Part, Role};

use super::error::ExpandError;
use super::message::Expansion;
use super::trace::{tool_call, tool_result};

impl Expansion {
    /// The conversation as core messages: `system`, `user` and `assistant` text; consecutive
    /// `function_call`s as `tool_call` parts of one assistant message (joining the assistant
    /// text right before them); each `function_call_output` as a tool message with a
    /// `tool_result` part; `image` as a user message with an image part; `pdf` as a user message
    /// with an image part of media type `application/pdf` (a document, which providers that
    /// cannot take one refuse).
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
                    vec![Part::Image(Image {
                        media_type: Some("application/pdf".to_owned()),
                        path: Some(message.content.clone()),
                        data: None,
                    })],
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
