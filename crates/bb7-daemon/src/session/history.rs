//! Going back in a chat: restoring the context of a user message from its `context_snapshot`
//! (for `fork_chat` and `chat_edit`) with warnings for files modified or deleted since, and
//! searching chats by title and content.

use std::path::{Path, PathBuf};

use serde::Serialize;
use ybs_core::{ContextAction, ContextEvent, Message, Part, Role, SnapshotEntry};

use crate::store::active::{normalize, storage_path, version_of};
use crate::store::model::{Chat, ContextFile, newest_first, search_text};
use crate::wire::error::Result;

/// A file of a snapshot that is not as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextWarning {
    /// The file.
    pub path: String,
    /// `modified` or `deleted`.
    pub issue: &'static str,
    /// Its file id in the snapshot.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub original_version: String,
}

/// The context rebuilt from a snapshot.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// The context files, with the content to store for each.
    pub files: Vec<(ContextFile, String)>,
    /// What differs from the snapshot.
    pub warnings: Vec<ContextWarning>,
}

impl Restored {
    /// The system message the first bb7 appends for the warnings (the client draws fork
    /// warnings only from system messages): one `ForkWarningModified` / `ForkWarningDeleted`
    /// context event per warning, its `version` the file id in the snapshot. `None` when
    /// nothing differs.
    pub fn warning_message(&self) -> Option<Message> {
        if self.warnings.is_empty() {
            return None;
        }
        let parts = self
            .warnings
            .iter()
            .map(|warning| {
                let action = if warning.issue == "deleted" {
                    ContextAction::ForkWarningDeleted
                } else {
                    ContextAction::ForkWarningModified
                };
                Part::ContextEvent(ContextEvent {
                    version: Some(warning.original_version.clone()).filter(|v| !v.is_empty()),
                    ..ContextEvent::new(action, warning.path.clone())
                })
            })
            .collect();
        Some(Message::new(Role::System, parts).with_timestamp(crate::store::model::now()))
    }
}

/// Rebuilds the context of `message_index` of `source` (stored under `context_dir`). Files
/// whose snapshot or local file is gone are left out with a `deleted` warning; files whose
/// stored content no longer has the snapshot's id are kept with a `modified` warning. A
/// message without a snapshot (older chats) restores the chat's current context.
pub fn restore(
    source: &Chat,
    message_index: usize,
    fs: &ybs_fsguard::confined::Confined,
    context_dir: &Path,
    root: Option<&Path>,
) -> Result<Restored> {
    let snapshot: Vec<SnapshotEntry> = source
        .messages
        .get(message_index)
        .and_then(|message| message.context_snapshot.clone())
        .filter(|snapshot| !snapshot.is_empty())
        .unwrap_or_else(|| {
            source
                .context_files
                .iter()
                .map(ContextFile::snapshot_entry)
                .collect()
        });
    let mut restored = Restored::default();
    for entry in snapshot {
        let lines = entry.start_line.zip(entry.end_line);
        let known = source
            .context_files
            .iter()
            .find(|file| file.path == entry.path && file.section() == lines);
        let external = known.map_or(Path::new(&entry.path).is_absolute(), |file| file.external);
        let file = ContextFile {
            path: entry.path.clone(),
            readonly: known.map_or(external || lines.is_some(), |file| file.readonly),
            external,
            version: entry.file_id.clone(),
            start_line: entry.start_line,
            end_line: entry.end_line,
        };
        let deleted = ContextWarning {
            path: entry.path.clone(),
            issue: "deleted",
            original_version: entry.file_id.clone(),
        };
        let Ok(content) = storage_path(context_dir, &file).and_then(|path| {
            fs.read_to_string(&path)
                .map_err(crate::store::error::Error::io("read", path))
        }) else {
            restored.warnings.push(deleted);
            continue;
        };
        if let Some(local) = local_path(&file, root) {
            if !local.exists() {
                restored.warnings.push(deleted);
                continue;
            }
        }
        let version = version_of(&file, &content);
        if version != entry.file_id {
            restored.warnings.push(ContextWarning {
                path: entry.path.clone(),
                issue: "modified",
                original_version: entry.file_id.clone(),
            });
        }
        restored
            .files
            .push((ContextFile { version, ..file }, content));
    }
    Ok(restored)
}

fn local_path(file: &ContextFile, root: Option<&Path>) -> Option<PathBuf> {
    if file.external || Path::new(&file.path).is_absolute() {
        return Some(PathBuf::from(&file.path));
    }
    root.and_then(|root| crate::store::paths::join(root, &file.path).ok())
}

/// One `search_chats` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchResult {
    /// Chat id.
    pub id: String,
    /// Chat name.
    pub name: String,
    /// Creation time.
    pub created: String,
    /// `title` or `content`.
    pub match_type: &'static str,
    /// For content matches: the text around the match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

/// Matches one chat: a name match gives `title`; otherwise the first message containing the
/// query gives `content` with an excerpt. Case-insensitive; an empty query matches every chat
/// as `title`.
pub fn search_one(chat: &Chat, query: &str) -> Option<SearchResult> {
    let result = |match_type, excerpt| SearchResult {
        id: chat.id.clone(),
        name: chat.name.clone(),
        created: chat.created.clone(),
        match_type,
        excerpt,
    };
    let needle = fold(query);
    if needle.is_empty() || find(&fold(&chat.name), &needle).is_some() {
        return Some(result("title", None));
    }
    chat.messages.iter().find_map(|message| {
        let text: Vec<char> = search_text(message).chars().collect();
        let at = find(
            &text.iter().map(|c| fold_char(*c)).collect::<Vec<_>>(),
            &needle,
        )?;
        Some(result("content", Some(excerpt(&text, at, needle.len()))))
    })
}

/// Sorts results newest first.
pub fn sort_results(results: &mut [SearchResult]) {
    results.sort_by(|a, b| newest_first(&a.created, &b.created).then_with(|| a.id.cmp(&b.id)));
}

fn fold(text: &str) -> Vec<char> {
    text.chars().map(fold_char).collect()
}

/// Lowercases one character to one character, so indices line up with the original text.
fn fold_char(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

fn find(haystack: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// About 30 characters before and 50 after the match, newlines as spaces, `...` on cut sides.
fn excerpt(text: &[char], at: usize, len: usize) -> String {
    let start = at.saturating_sub(30);
    let end = (at + len + 50).min(text.len());
    let body: String = text[start..end].iter().collect();
    let mut out = String::new();
    if start > 0 {
        out.push_str("...");
    }
    out.push_str(normalize(&body).replace('\n', " ").trim());
    if end < text.len() {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ybs_core::Message;

    fn chat(name: &str, texts: &[&str]) -> Chat {
        let mut chat = Chat::new("abc".into(), name.into(), "m".into(), false);
        chat.messages = texts.iter().map(|text| Message::user(*text)).collect();
        chat
    }

    #[test]
    fn title_then_content_matches() {
        let c = chat("Physics Chat", &["nothing"]);
        assert_eq!(search_one(&c, "PHYS").unwrap().match_type, "title");
        assert_eq!(search_one(&c, "").unwrap().match_type, "title");
        let long = format!(
            "{}the physics engine\nworks{}",
            "x".repeat(40),
            "y".repeat(60)
        );
        let c = chat("Game", &["no", &long]);
        let hit = search_one(&c, "Physics").unwrap();
        assert_eq!(hit.match_type, "content");
        let excerpt = hit.excerpt.unwrap();
        assert!(excerpt.starts_with("...xxxxx"), "{excerpt}");
        assert!(excerpt.contains("the physics engine works"), "{excerpt}");
        assert!(excerpt.ends_with("..."), "{excerpt}");
        assert!(search_one(&c, "absent").is_none());
    }

    #[test]
    fn a_file_name_finds_the_chats_whose_context_events_name_it() {
        let mut c = chat("Game", &["hello"]);
        let mut event =
            ybs_core::ContextEvent::new(ybs_core::ContextAction::UserAddFile, "src/engine.rs");
        event.version = Some("0a1b2c3d".into());
        let mut message = Message::user("add");
        message.parts.push(ybs_core::Part::ContextEvent(event));
        c.messages.push(message);
        let hit = search_one(&c, "engine.rs").unwrap();
        assert_eq!(hit.match_type, "content");
        // About 30 characters before the match, as every excerpt.
        assert_eq!(
            hit.excerpt.as_deref(),
            Some("...action=UserAddFile path=\"src/engine.rs\" version=0a1b2c3d]")
        );
    }

    #[test]
    fn excerpt_handles_multibyte_text() {
        let c = chat("x", &["ÄÖÜ größe"]);
        assert_eq!(search_one(&c, "GRÖSSE"), None);
        assert_eq!(
            search_one(&c, "GRÖ").unwrap().excerpt.as_deref(),
            Some("ÄÖÜ größe")
        );
    }
}
