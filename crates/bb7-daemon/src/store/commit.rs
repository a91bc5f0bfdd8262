//! The commit of a send: the reply's file writes and the messages recording them land
//! together or not at all, even when the daemon is killed half-way.
//!
//! 1. **Stage.** Every output and the new `chat.json` are written into a fresh directory
//!    `chats/{id}/.send-{pid}-{n}/` (`output/...` and `chat.json`), each file fsynced. A
//!    failure here removes the directory: nothing changed.
//! 2. **Commit point.** One rename turns the staging directory into `chats/{id}/.commit/`.
//! 3. **Apply.** Each staged output is renamed into `output/`, then `chat.json` over the
//!    chat's, then `.commit/` is removed. Every step can be repeated, so
//!    [`recovery`](crate::store::recovery) finishes a commit that was killed after its commit
//!    point (rolls forward) and removes staging directories of commits killed before it (rolls
//!    back) the next time the chat is loaded.
//!
//! All of it happens beneath the chat directory without following links (see
//! [`ybs_fsguard::confined`]); a link on the way into `output/` is the spec's fatal escape.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use ybs_core::{ContextAction, Message, Part};
use ybs_edit::FileWrite;

use crate::store::active::Active;
use crate::store::error::{Error, Result};
use crate::store::events::Event;
use crate::store::paths::{self, escape_or_io};
use crate::store::recovery::{COMMITTED, STAGING_PREFIX, STAMP, recover, roll_forward, stamp};

/// Commits `writes` to `output/` and appends `messages` to the chat (the `AssistantWriteFile`
/// events and `output_files` go on the first one), all or nothing. Returns the paths written,
/// each of which exists afterwards. On an error nothing is changed, on disk or in `active`.
pub fn commit(
    active: &mut Active,
    writes: &[FileWrite],
    mut messages: Vec<Message>,
) -> Result<Vec<String>> {
    if writes.is_empty() {
        let before = active.chat.messages.len();
        active.chat.messages.extend(messages);
        if let Err(err) = active.save() {
            active.chat.messages.truncate(before);
            return Err(err);
        }
        return Ok(Vec::new());
    }
    if active.chat.global {
        return Err(Error::Invalid("Global chats cannot write files".into()));
    }
    let root = active.require_root()?.to_path_buf();
    let store = active.store.clone();
    let fs = store.fs();
    let chat_dir = store.chat_dir(&active.chat.id)?;
    let output_dir = store.output_dir(&active.chat.id)?;
    recover(fs, &chat_dir)?;

    // Before anything is written: every target is a valid path whose directories are not
    // links (a link there is the spec's escape, which stops the daemon).
    let mut targets = Vec::with_capacity(writes.len());
    for write in writes {
        let target = paths::join(&output_dir, &write.path)?;
        if let Some(parent) = target.parent() {
            match fs.open_dir(parent, false) {
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(escape_or_io(&root, &target, err)),
            }
        }
        if fs.is_dir(&target) {
            return Err(Error::Io {
                what: "write",
                path: target,
                source: std::io::ErrorKind::IsADirectory.into(),
            });
        }
        targets.push((paths::validate_relative(&write.path)?, target));
    }

    let mut chat = active.chat.clone();
    if let Some(first) = messages.first_mut() {
        first.parts.extend(events(active, writes));
        first.output_files = Some(targets.iter().map(|(path, _)| path.clone()).collect());
    }
    chat.messages.extend(messages);

    let staging = chat_dir.join(staging_name());
    fs.create_dir(&staging)
        .map_err(Error::io("create directory", &staging))?;
    let staged = (|| -> Result<()> {
        let path = staging.join(STAMP);
        fs.write_new(&path, stamp(fs, &chat_dir)?.as_bytes())
            .map_err(Error::io("write", &path))?;
        for ((relative, _), write) in targets.iter().zip(writes) {
            let path = staging.join("output").join(relative);
            // A repeated path in one reply: the later write wins, as it would in place.
            if fs.is_file(&path) {
                fs.remove_file(&path).map_err(Error::io("replace", &path))?;
            }
            fs.write_new(&path, write.content.as_bytes())
                .map_err(Error::io("write", &path))?;
        }
        let path = staging.join("chat.json");
        let mut text = serde_json::to_vec_pretty(&chat)
            .map_err(|err| Error::Invalid(format!("cannot encode the chat: {err}")))?;
        text.push(b'\n');
        fs.write_new(&path, &text)
            .map_err(Error::io("write", &path))
    })();
    if let Err(err) = staged {
        let _ = fs.remove_all(&staging);
        return Err(err);
    }
    let committed = chat_dir.join(COMMITTED);
    if let Err(err) = fs.rename(&staging, &committed) {
        let _ = fs.remove_all(&staging);
        return Err(Error::io("commit", &committed)(err));
    }
    // Past the commit point: the chat is the committed one even if applying is cut short
    // (the next load finishes it).
    active.chat = chat;
    roll_forward(fs, &root, &chat_dir, &output_dir)?;
    if let Err(err) = store.update_index_entry(&active.chat) {
        tracing::warn!(error = %err, "could not update the chat index after a send");
    }
    Ok(targets
        .into_iter()
        .filter(|(_, target)| fs.is_file(target))
        .map(|(relative, _)| relative)
        .collect())
}

fn staging_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{STAGING_PREFIX}{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The `AssistantWriteFile` events of `writes` (`readonly`/`external` from the context
/// entry, `added` when there is none, as the first bb7 marks a file the model created).
fn events(active: &Active, writes: &[FileWrite]) -> Vec<Part> {
    writes
        .iter()
        .map(|write| {
            let existing = active.chat.find_file(&write.path).cloned();
            let event = Event {
                action: ContextAction::AssistantWriteFile,
                path: write.path.clone(),
                version: Some(write.file_id()),
                prev_version: existing
                    .as_ref()
                    .map(|file| file.version.clone())
                    .filter(|version| !version.is_empty()),
                readonly: existing.as_ref().is_some_and(|file| file.readonly),
                external: existing.as_ref().is_some_and(|file| file.external),
                lines: None,
                original_path: None,
            };
            let mut part = event.into_part();
            if let (Part::ContextEvent(event), None) = (&mut part, &existing) {
                event.extra.insert("added".into(), Value::Bool(true));
            }
            part
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::store::chats::ChatStore;
    use crate::store::recovery::{STAMP, stamp};

    #[test]
    fn recovery_rolls_a_committed_send_forward_and_a_staged_one_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::new(dir.path().join(".bb7/chats"), false);
        let chat = store
            .create(crate::store::model::Chat::new(
                String::new(),
                "c".into(),
                "m".into(),
                false,
            ))
            .unwrap();
        let chat_dir = store.chat_dir(&chat.id).unwrap();
        // Killed half-way through applying: one output moved already, one still staged.
        std::fs::write(chat_dir.join("output/moved.txt"), "1").unwrap();
        std::fs::create_dir_all(chat_dir.join(".commit/output/sub")).unwrap();
        std::fs::write(chat_dir.join(".commit/output/sub/left.txt"), "2").unwrap();
        let mut committed = chat.clone();
        committed.name = "committed".into();
        std::fs::write(
            chat_dir.join(".commit/chat.json"),
            serde_json::to_string(&committed).unwrap(),
        )
        .unwrap();
        std::fs::write(
            chat_dir.join(".commit").join(STAMP),
            stamp(store.fs(), &chat_dir).unwrap(),
        )
        .unwrap();
        // And a later send killed before its commit point.
        std::fs::create_dir_all(chat_dir.join(".send-1-0/output")).unwrap();
        std::fs::write(chat_dir.join(".send-1-0/output/never.txt"), "3").unwrap();

        let loaded = store.load(&chat.id).unwrap();
        assert_eq!(loaded.name, "committed");
        assert_eq!(
            std::fs::read_to_string(chat_dir.join("output/sub/left.txt")).unwrap(),
            "2"
        );
        assert!(chat_dir.join("output/moved.txt").exists());
        assert!(!chat_dir.join("output/never.txt").exists());
        assert!(!chat_dir.join(".commit").exists());
        assert!(!chat_dir.join(".send-1-0").exists());

        // A `.commit/` without this directory's stamp (shipped, or stamped elsewhere) is
        // discarded, never rolled forward.
        for shipped_stamp in [None, Some("1:2\n")] {
            std::fs::create_dir_all(chat_dir.join(".commit/output")).unwrap();
            std::fs::write(chat_dir.join(".commit/output/planted.txt"), "x").unwrap();
            let mut planted = loaded.clone();
            planted.name = "planted".into();
            std::fs::write(
                chat_dir.join(".commit/chat.json"),
                serde_json::to_string(&planted).unwrap(),
            )
            .unwrap();
            if let Some(text) = shipped_stamp {
                std::fs::write(chat_dir.join(".commit").join(STAMP), text).unwrap();
            }
            assert_eq!(store.load(&chat.id).unwrap().name, "committed");
            assert!(!chat_dir.join("output/planted.txt").exists());
            assert!(!chat_dir.join(".commit").exists());
        }
    }
}
