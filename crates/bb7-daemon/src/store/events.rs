//! Context events: every change to a chat's context is recorded in its history as an
//! assistant-role message holding one `context_event` part, so the model later sees what was
//! added, removed, updated or applied.

use ybs_core::{ContextAction, ContextEvent, Message, Part, Role};

use crate::store::model::ContextFile;

/// What happened to which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The action.
    pub action: ContextAction,
    /// The file.
    pub path: String,
    /// File id after the event.
    pub version: Option<String>,
    /// File id before the event.
    pub prev_version: Option<String>,
    /// Read-only flag after the event.
    pub readonly: bool,
    /// External flag.
    pub external: bool,
    /// Section lines.
    pub lines: Option<(u32, u32)>,
    /// For `UserSaveAs`: the output path the file came from.
    pub original_path: Option<String>,
}

impl Event {
    /// An event about `file` with its current version.
    pub fn about(action: ContextAction, file: &ContextFile) -> Event {
        Event {
            action,
            path: file.path.clone(),
            version: Some(file.version.clone()).filter(|version| !version.is_empty()),
            prev_version: None,
            readonly: file.readonly,
            external: file.external,
            lines: file.section(),
            original_path: None,
        }
    }

    /// Sets the previous version.
    pub fn with_prev(mut self, prev: impl Into<String>) -> Event {
        self.prev_version = Some(prev.into()).filter(|prev| !prev.is_empty());
        self
    }

    /// The part to store.
    pub fn into_part(self) -> Part {
        let (start_line, end_line) = self.lines.unzip();
        Part::ContextEvent(ContextEvent {
            version: self.version,
            prev_version: self.prev_version,
            readonly: Some(self.readonly),
            external: Some(self.external),
            start_line,
            end_line,
            original_path: self.original_path,
            ..ContextEvent::new(self.action, self.path)
        })
    }

    /// The history message holding this event.
    pub fn into_message(self) -> Message {
        Message::new(Role::Assistant, vec![self.into_part()])
            .with_timestamp(crate::store::model::now())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sections_keep_their_lines() {
        let file = ContextFile {
            path: "a.rs".into(),
            readonly: true,
            external: false,
            version: "12345678".into(),
            start_line: Some(3),
            end_line: Some(9),
        };
        let json =
            serde_json::to_value(Event::about(ContextAction::UserAddSection, &file).into_part())
                .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "context_event", "action": "UserAddSection", "path": "a.rs",
                "version": "12345678", "readonly": true, "external": false, "start_line": 3, "end_line": 9})
        );
        let whole = ContextFile {
            start_line: None,
            end_line: None,
            ..file
        };
        let part = Event::about(ContextAction::UserAddFile, &whole)
            .with_prev("")
            .into_part();
        assert!(matches!(part, Part::ContextEvent(_)));
    }
}
