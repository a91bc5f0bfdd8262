//! What `.bb7/` holds: `chat.json` (format version 2), its context file list, and the chat
//! index. Unknown fields are kept (`extra`) and written back, so a chat written by another bb7
//! loses nothing when we save it.

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ybs_core::{Message, Part, Role, SnapshotEntry};

/// The chat format version this build writes.
pub const CHAT_VERSION: u64 = 2;

/// The chat index format version.
pub const INDEX_VERSION: u64 = 1;

/// One chat, as stored in `chats/{id}/chat.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chat {
    /// Format version (0 when absent: the oldest chats had none).
    #[serde(default)]
    pub version: u64,
    /// 10 lowercase hex characters.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// Creation time, RFC 3339, kept as written.
    #[serde(default)]
    pub created: String,
    /// The chat's model.
    #[serde(default)]
    pub model: String,
    /// Reasoning effort chosen for the chat (`save_chat_settings`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning_effort: String,
    /// Whether the chat lives under `~/.bb7/chats`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
    /// Unsent input (left out of chat.json when empty, as the first bb7 does).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub draft: String,
    /// Files and sections in context.
    #[serde(default)]
    pub context_files: Vec<ContextFile>,
    /// The conversation, including context events.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Fields this build does not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One entry of `context_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFile {
    /// Project-relative path, or absolute for external files.
    pub path: String,
    /// The model may not write it.
    #[serde(default)]
    pub readonly: bool,
    /// It lives outside the project.
    #[serde(default)]
    pub external: bool,
    /// File id of the snapshot.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// First line of a section (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// Last line of a section (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

impl ContextFile {
    /// The line range when this is a section.
    pub fn section(&self) -> Option<(u32, u32)> {
        match (self.start_line, self.end_line) {
            (Some(start), Some(end)) if start > 0 && end > 0 => Some((start, end)),
            _ => None,
        }
    }

    /// The snapshot entry recorded on user messages.
    pub fn snapshot_entry(&self) -> SnapshotEntry {
        let section = self.section();
        SnapshotEntry {
            path: self.path.clone(),
            file_id: self.version.clone(),
            start_line: section.map(|(start, _)| start),
            end_line: section.map(|(_, end)| end),
        }
    }
}

/// One chat in `chats/index.json` and in `chat_list` replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatSummary {
    /// Chat id.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// Creation time as stored.
    #[serde(default)]
    pub created: String,
    /// Set in replies for global chats.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
    /// Set in `chat_list` replies when another live process holds the chat.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

/// `chats/index.json`: a cache of the chats' summaries, rebuilt from the directories when it
/// disagrees with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Index format version.
    #[serde(default)]
    pub version: u64,
    /// The chat last selected in this project, restored by `init`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub active_chat_id: String,
    /// Whether `active_chat_id` names a global chat (a project remembers a selected global
    /// chat this way, as the first bb7 does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub active_chat_global: bool,
    /// Newest first.
    #[serde(default)]
    pub chats: Vec<ChatSummary>,
    /// Fields this version does not know, kept as written.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Chat {
    /// A new, empty chat.
    pub fn new(id: String, name: String, model: String, global: bool) -> Chat {
        Chat {
            version: CHAT_VERSION,
            id,
            name,
            created: now_rfc3339(),
            model,
            reasoning_effort: String::new(),
            global,
            draft: String::new(),
            context_files: Vec::new(),
            messages: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Its index entry.
    pub fn summary(&self) -> ChatSummary {
        ChatSummary {
            id: self.id.clone(),
            name: self.name.clone(),
            created: self.created.clone(),
            global: false,
            locked: false,
        }
    }

    /// The context entry for a whole file at `path`.
    pub fn find_file(&self, path: &str) -> Option<&ContextFile> {
        self.context_files
            .iter()
            .find(|file| file.path == path && file.section().is_none())
    }

    /// Mutable [`find_file`](Chat::find_file).
    pub fn find_file_mut(&mut self, path: &str) -> Option<&mut ContextFile> {
        self.context_files
            .iter_mut()
            .find(|file| file.path == path && file.section().is_none())
    }

    /// Upgrades a version 0 or 1 chat to version 2: a message's legacy `content` (kept in
    /// [`Message::extra`]) becomes a leading text part. Returns whether anything changed.
    pub fn migrate(&mut self) -> bool {
        if self.version >= CHAT_VERSION {
            return false;
        }
        for message in &mut self.messages {
            if let Some(content) = message.extra.remove("content") {
                let text = match content {
                    Value::String(text) => text,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                if !text.is_empty() && message.parts.is_empty() {
                    message.parts.push(Part::text(text));
                } else if !text.is_empty() {
                    message.parts.insert(0, Part::text(text));
                }
            }
        }
        self.version = CHAT_VERSION;
        true
    }

    /// The model of the last user message, falling back to the chat's model: what a
    /// continued chat sends with.
    pub fn effective_model(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .filter(|message| message.role == Role::User)
            .find_map(|message| message.model.as_deref())
            .filter(|model| !model.is_empty())
            .unwrap_or(&self.model)
    }
}

/// The current time as RFC 3339 in UTC, with fractional seconds only when present.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// The current time as a message timestamp.
pub fn now() -> DateTime<FixedOffset> {
    Utc::now().fixed_offset()
}

/// Orders two stored `created` values, newest first (unparseable ones last).
pub fn newest_first(a: &str, b: &str) -> std::cmp::Ordering {
    let parse = |text: &str| DateTime::parse_from_rfc3339(text).ok();
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => b.cmp(&a),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.cmp(a),
    }
}

/// A message's text for drafts: text, thinking, code and raw parts joined by newlines.
pub fn message_text(message: &Message) -> String {
    joined_text(message, false)
}

/// A message's text for `search_chats`, as the first bb7 searches it: [`message_text`] with
/// each context event in its place as `[context_event action=A path="P" ...]`, so a file
/// name finds the chats that added, wrote or applied it.
pub fn search_text(message: &Message) -> String {
    joined_text(message, true)
}

fn joined_text(message: &Message, with_events: bool) -> String {
    let mut out = String::new();
    for part in &message.parts {
        let event;
        let text = match part {
            Part::Text { content } | Part::Code { content, .. } | Part::Raw { content } => content,
            Part::Thinking(thinking) => &thinking.content,
            Part::ContextEvent(context_event) if with_events => {
                event = event_line(context_event);
                &event
            }
            _ => continue,
        };
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

/// `[context_event action=A path="P" lines=S-E readonly=B external=B prev_version=V
/// version=V]`, the fields that are set, in that order.
fn event_line(event: &ybs_core::ContextEvent) -> String {
    use std::fmt::Write as _;
    let mut line = format!("[context_event action={}", event.action);
    if !event.path.is_empty() {
        let quoted = serde_json::to_string(&event.path).unwrap_or_default();
        let _ = write!(line, " path={quoted}");
    }
    if let (Some(start), Some(end)) = (event.start_line, event.end_line) {
        if start > 0 && end > 0 {
            let _ = write!(line, " lines={start}-{end}");
        }
    }
    if let Some(readonly) = event.readonly {
        let _ = write!(line, " readonly={readonly}");
    }
    if let Some(external) = event.external {
        let _ = write!(line, " external={external}");
    }
    if let Some(prev) = event.prev_version.as_deref().filter(|v| !v.is_empty()) {
        let _ = write!(line, " prev_version={prev}");
    }
    if let Some(version) = event.version.as_deref().filter(|v| !v.is_empty()) {
        let _ = write!(line, " version={version}");
    }
    line.push(']');
    line
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn v1_content_becomes_a_text_part() {
        let mut chat: Chat = serde_json::from_value(serde_json::json!({
            "version": 1, "id": "abcdef0123", "name": "old", "created": "2025-01-19T22:00:00Z",
            "model": "m", "context_files": [],
            "messages": [{"role": "user", "content": "hello", "timestamp": "2025-01-19T22:01:00Z",
                          "usage": {"prompt_tokens": 3}}]
        }))
        .unwrap();
        assert!(chat.migrate());
        assert_eq!(chat.version, 2);
        let message = &chat.messages[0];
        assert_eq!(message.parts, vec![Part::text("hello")]);
        assert!(!message.extra.contains_key("content"));
        assert!(
            message.extra.contains_key("usage"),
            "unknown fields survive"
        );
        assert!(!chat.migrate());
    }

    #[test]
    fn ordering_is_newest_first() {
        assert_eq!(
            newest_first("2025-01-02T00:00:00Z", "2025-01-01T00:00:00Z"),
            std::cmp::Ordering::Less
        );
    }
}
