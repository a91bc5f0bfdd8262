use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::part::{Part, ToolCall};

/// When a message was written. Serialized as RFC 3339 (`2025-01-19T22:01:00Z`).
pub type Timestamp = DateTime<FixedOffset>;

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model, or notes the program adds to a conversation.
    System,
    /// The person using the program.
    User,
    /// The model.
    Assistant,
    /// The result of a tool the model called.
    Tool,
}

impl Role {
    /// The lowercase name used on the wire and in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of a user message's `context_snapshot`: which file (or section of a file) was in
/// context, and its [`file_id`](crate::file_id), at the moment the message was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotEntry {
    /// Project-relative (or, for external files, absolute) path.
    pub path: String,
    /// The file id of the content that was in context.
    pub file_id: String,
    /// First line of a section, 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// Last line of a section, 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

/// One message of a conversation, in the JSON form of bb7's `chat.json` v2.
///
/// Fields this crate does not know (a legacy `content`, or whatever a newer writer adds) are
/// kept in [`extra`](Message::extra) and written back unchanged, so reading and saving a chat
/// loses nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// The model selected when a user message was sent, or that wrote an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When the message was written.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time")]
    pub timestamp: Option<Timestamp>,
    /// The context files at send time (user messages), used to fork and edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_snapshot: Option<Vec<SnapshotEntry>>,
    /// The files an assistant message wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_files: Option<Vec<String>>,
    /// Fields not modelled above, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Message {
    /// A message with the given role and parts and nothing else.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            role,
            parts,
            model: None,
            timestamp: None,
            context_snapshot: None,
            output_files: None,
            extra: Map::new(),
        }
    }

    /// A message holding one text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message::new(role, vec![Part::text(text)])
    }

    /// A system message holding one text part.
    pub fn system(text: impl Into<String>) -> Self {
        Message::text(Role::System, text)
    }

    /// A user message holding one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Message::text(Role::User, text)
    }

    /// An assistant message holding one text part.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::text(Role::Assistant, text)
    }

    /// Sets the model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the timestamp.
    pub fn with_timestamp(mut self, at: Timestamp) -> Self {
        self.timestamp = Some(at);
        self
    }

    /// The text parts joined together (no separator), which is what a reader sees as the
    /// message's body.
    pub fn text_content(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Text { content } => Some(content.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls of the message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|part| match part {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}
