//! Between ACP content and ybs messages: a prompt's blocks (text, `@`-mentioned files as
//! embedded resources or links, images) as the user message of a turn, and a saved
//! conversation as the updates that replay it when an editor loads the session.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, SessionUpdate, TextContent,
    ToolCallUpdate, ToolCallUpdateFields,
};
use ybs_core::{Image, Message, Part, Role};

use super::calls;

/// The user message of a prompt. Text stays text; an embedded text resource becomes a
/// fenced block named by its URI; a link is named so the model can read it with its tools;
/// an image is sent as an image. `Err` names a block ybs cannot take (audio).
pub fn prompt_message(blocks: &[ContentBlock]) -> Result<Message, String> {
    let mut parts = Vec::new();
    for block in blocks {
        let part = match block {
            ContentBlock::Text(text) => text_part(text.text.clone()),
            ContentBlock::Image(image) => Part::Image(Image {
                media_type: Some(image.mime_type.clone()),
                path: None,
                data: Some(image.data.clone()),
            }),
            ContentBlock::ResourceLink(link) => {
                text_part(format!("[file: {}]", file_path(&link.uri)))
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => text_part(format!(
                    "[file: {}]\n```\n{}\n```",
                    file_path(&resource.uri),
                    resource.text.trim_end_matches('\n')
                )),
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    let is_image =
                        (blob.mime_type.as_deref()).is_some_and(|m| m.starts_with("image/"));
                    if is_image {
                        Part::Image(Image {
                            media_type: blob.mime_type.clone(),
                            path: None,
                            data: Some(blob.blob.clone()),
                        })
                    } else {
                        text_part(format!(
                            "[file: {} (binary, not shown)]",
                            file_path(&blob.uri)
                        ))
                    }
                }
                _ => return Err("a resource of a kind ybs does not know".into()),
            },
            ContentBlock::Audio(_) => return Err("ybs does not take audio".into()),
            _ => return Err("a content block of a kind ybs does not know".into()),
        };
        parts.push(part);
    }
    if parts.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(Message::new(Role::User, parts))
}

/// A `file://` URI as its path; other URIs as they are.
fn file_path(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

fn text_part(content: String) -> Part {
    Part::Text { content }
}

/// The updates that show `conversation` again: user text, replies and reasoning as chunks,
/// each tool call with its result.
pub fn replay(
    conversation: &[Message],
    cwd: &Path,
    tools: &ybs_tools::ToolRegistry,
) -> Vec<SessionUpdate> {
    let chunk = |text: &str| ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    let mut updates = Vec::new();
    for message in conversation {
        for part in &message.parts {
            match (message.role, part) {
                (Role::User, Part::Text { content }) => {
                    updates.push(SessionUpdate::UserMessageChunk(chunk(content)));
                }
                (Role::Assistant, Part::Text { content }) => {
                    updates.push(SessionUpdate::AgentMessageChunk(chunk(content)));
                }
                (Role::Assistant, Part::Thinking(thinking)) if !thinking.content.is_empty() => {
                    updates.push(SessionUpdate::AgentThoughtChunk(chunk(&thinking.content)));
                }
                (_, Part::ToolCall(call)) => {
                    updates.push(SessionUpdate::ToolCall(calls::pending(tools, call, cwd)));
                }
                (_, Part::ToolResult(result)) => {
                    let (status, content) = calls::outcome(result, None);
                    let fields = ToolCallUpdateFields::new().status(status).content(content);
                    updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        result.call_id.clone(),
                        fields,
                    )));
                }
                _ => {}
            }
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agent_client_protocol::v1::schema::{
        AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextResourceContents,
    };
    use ybs_core::{ToolCall, ToolResult};

    use super::*;

    #[test]
    fn a_prompt_keeps_text_files_and_images() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}\n",
                    "file:///p/src/main.rs",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///p/a.rs")),
            ContentBlock::Image(ImageContent::new("aGk=", "image/png")),
        ];
        let message = prompt_message(&blocks).unwrap();
        assert_eq!(message.role, Role::User);
        let text = message.text_content();
        assert!(text.contains("look at"), "{text}");
        assert!(
            text.contains("[file: /p/src/main.rs]\n```\nfn main() {}\n```"),
            "{text}"
        );
        assert!(text.contains("[file: /p/a.rs]"), "{text}");
        assert!(matches!(
            &message.parts[3],
            Part::Image(Image { data: Some(data), media_type: Some(kind), .. })
                if data == "aGk=" && kind == "image/png"
        ));
        let audio = ContentBlock::Audio(AudioContent::new("AA==", "audio/wav"));
        assert_eq!(
            prompt_message(&[audio]).unwrap_err(),
            "ybs does not take audio"
        );
        assert_eq!(prompt_message(&[]).unwrap_err(), "the prompt is empty");
    }

    #[test]
    fn a_saved_conversation_replays_in_order() {
        let conversation = vec![
            Message::user("fix it"),
            Message::new(
                Role::Assistant,
                vec![
                    Part::Text {
                        content: "Reading.".into(),
                    },
                    Part::ToolCall(ToolCall::new(
                        "c1",
                        "read_file",
                        serde_json::json!({"path": "a.rs"}),
                    )),
                ],
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    name: Some("read_file".into()),
                    content: "{\"content\":\"x\"}".into(),
                    is_error: false,
                })],
            ),
            Message::assistant("Done."),
        ];
        let kinds: Vec<&str> = replay(
            &conversation,
            Path::new("/p"),
            &ybs_tools::ToolRegistry::new(),
        )
        .iter()
        .map(|update| match update {
            SessionUpdate::UserMessageChunk(_) => "user",
            SessionUpdate::AgentMessageChunk(_) => "agent",
            SessionUpdate::ToolCall(_) => "call",
            SessionUpdate::ToolCallUpdate(_) => "result",
            _ => "other",
        })
        .collect();
        assert_eq!(kinds, ["user", "agent", "call", "result", "agent"]);
    }
}
