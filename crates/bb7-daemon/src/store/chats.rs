//! One chats directory (a project's `.bb7/chats` or the global `~/.bb7/chats`): loading and
//! saving `chat.json` (with migration and version checks), creating and deleting chats, and the
//! index, which is only ever changed under an advisory lock so that two daemons on one project
//! never lose each other's entries.
//!
//! Every file access goes through [`Confined`]: for a project store it walks from the project
//! root through `.bb7/chats` without following links, for the global store from
//! `~/.bb7/chats` itself (the user's own directory, which may be a link).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fs4::fs_std::FileExt;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store::error::{Error, Result};
use crate::store::model::{CHAT_VERSION, Chat, ChatSummary, INDEX_VERSION, Index, newest_first};
use crate::store::{atomic, lock};
use ybs_fsguard::ConfinedDir;
use ybs_fsguard::confined::{Confined, Kind};

/// A chats directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatStore {
    dir: PathBuf,
    global: bool,
    fs: Confined,
}

impl ChatStore {
    /// The store rooted at `dir` (`.../chats`); `global` marks `~/.bb7/chats`.
    /// A project store is confined beneath the directory holding `.bb7/` (two levels up),
    /// so `.bb7` and `chats` themselves may not be links either.
    pub fn new(dir: impl Into<PathBuf>, global: bool) -> ChatStore {
        let dir = dir.into();
        let anchor = match dir.parent().and_then(Path::parent) {
            Some(anchor) if !global && !anchor.as_os_str().is_empty() => anchor.to_path_buf(),
            _ => dir.clone(),
        };
        ChatStore {
            dir,
            global,
            fs: Confined::new(anchor),
        }
    }

    /// The confined file access of this store.
    pub fn fs(&self) -> &Confined {
        &self.fs
    }

    /// The chats directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether this is the global store.
    pub fn is_global(&self) -> bool {
        self.global
    }

    /// `chats/{id}`, after checking the id cannot name anything else.
    pub fn chat_dir(&self, id: &str) -> Result<PathBuf> {
        let valid = !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(Error::ChatNotFound);
        }
        Ok(self.dir.join(id))
    }

    /// `chats/{id}/context`.
    pub fn context_dir(&self, id: &str) -> Result<PathBuf> {
        Ok(self.chat_dir(id)?.join("context"))
    }

    /// `chats/{id}/output`.
    pub fn output_dir(&self, id: &str) -> Result<PathBuf> {
        Ok(self.chat_dir(id)?.join("output"))
    }

    /// `chats/index.json`.
    pub fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    /// Loads a chat, migrating (and re-saving) a version 0 or 1 chat. A chat newer than
    /// [`CHAT_VERSION`] or one that does not parse is an error and the file is not touched.
    pub fn load(&self, id: &str) -> Result<Chat> {
        let dir = self.chat_dir(id)?;
        // A send cut short is finished or undone first, unless another live process holds
        // the chat (then it may be committing right now).
        if lock::held_by_other(&self.fs, &dir).is_none() {
            crate::store::recovery::recover(&self.fs, &dir)?;
        }
        let path = dir.join("chat.json");
        let text = match self.fs.read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::ChatNotFound);
            }
            Err(err) => return Err(Error::io("read", &path)(err)),
        };
        let corrupt = |why: String| Error::Corrupt {
            path: path.clone(),
            why,
        };
        let value: Value = serde_json::from_str(&text).map_err(|err| corrupt(err.to_string()))?;
        let version = value.get("version").and_then(Value::as_u64).unwrap_or(0);
        if version > CHAT_VERSION {
            return Err(Error::NewerVersion {
                path: path.clone(),
                found: version,
                known: CHAT_VERSION,
            });
        }
        let mut chat: Chat =
            serde_json::from_value(value).map_err(|err| corrupt(err.to_string()))?;
        // A chat is its directory: a copied directory whose chat.json still carries the
        // original's id must never be saved over the original.
        if chat.id != id {
            if !chat.id.is_empty() {
                tracing::warn!(directory = %id, recorded = %chat.id, "chat.json names another chat's id; using the directory's");
            }
            chat.id = id.to_owned();
        }
        chat.global = self.global;
        if chat.migrate() {
            tracing::info!(chat = %id, "migrated chat to format version {CHAT_VERSION}");
            self.write_chat(&chat)?;
        }
        Ok(chat)
    }

    /// Parses a chat as it is on disk, without finishing a cut-short send or migrating it
    /// (searching and trust checks must not write); `None` when it cannot be read.
    pub fn peek(&self, id: &str) -> Option<Chat> {
        let text = self
            .fs
            .read_to_string(&self.chat_dir(id).ok()?.join("chat.json"))
            .ok()?;
        let mut chat: Chat = serde_json::from_str(&text).ok()?;
        chat.id = id.to_owned();
        chat.migrate();
        Some(chat)
    }

    /// Saves a chat atomically and updates its index entry.
    pub fn save(&self, chat: &Chat) -> Result<()> {
        self.write_chat(chat)?;
        self.update_index_entry(chat)
    }

    /// Updates the index entry of `chat` (its `chat.json` already written).
    pub fn update_index_entry(&self, chat: &Chat) -> Result<()> {
        let summary = chat.summary();
        self.update_index(|index| {
            match index.chats.iter_mut().find(|entry| entry.id == summary.id) {
                Some(entry) => *entry = summary,
                None => index.chats.push(summary),
            }
        })
        .map(drop)
    }

    /// Saves `chat.json` with one `fsync` (the file's, before its rename): never torn, but
    /// the rename reaches the disk with the file system's next journal commit (see
    /// [`Confined::write_unsynced_dir`]).
    ///
    /// [`Confined::write_unsynced_dir`]: ybs_fsguard::confined::Confined::write_unsynced_dir
    fn write_chat(&self, chat: &Chat) -> Result<()> {
        let path = self.chat_dir(&chat.id)?.join("chat.json");
        atomic::write_json_unsynced_dir_in(&self.fs, &path, chat)
    }

    /// Creates a new chat directory (with `context/` and `output/`) under a fresh id, saves
    /// `chat` there (its id replaced) and adds it to the index.
    pub fn create(&self, chat: Chat) -> Result<Chat> {
        self.create_with(chat, false)
    }

    /// [`create`](ChatStore::create), remembering the new chat as the active one in the same
    /// index update (what selecting it next would write).
    pub fn create_active(&self, chat: Chat) -> Result<Chat> {
        self.create_with(chat, true)
    }

    fn create_with(&self, mut chat: Chat, remember: bool) -> Result<Chat> {
        self.fs
            .create_dir_all(&self.dir)
            .map_err(Error::io("create directory", &self.dir))?;
        let dir = loop {
            let id = new_id();
            let dir = self.dir.join(&id);
            // create_dir fails if the id is taken, also by a concurrent daemon.
            match self.fs.create_dir(&dir) {
                Ok(()) => {
                    chat.id = id;
                    break dir;
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(Error::io("create directory", &dir)(err)),
            }
        };
        for sub in ["context", "output"] {
            let path = dir.join(sub);
            self.fs
                .create_dir_all(&path)
                .map_err(Error::io("create directory", &path))?;
        }
        chat.global = self.global;
        // One `fsync`, `chat.json`'s: the new directory's entry and the file's rename reach
        // the disk with the file system's next journal commit. Until then a power loss leaves
        // no chat, or a directory without `chat.json`, which is not listed.
        let saved = self.write_chat(&chat).and_then(|()| {
            let summary = chat.summary();
            self.update_index(|index| {
                index.chats.retain(|entry| entry.id != summary.id);
                if remember {
                    index.active_chat_id = summary.id.clone();
                    index.active_chat_global = false;
                }
                index.chats.push(summary);
            })
        });
        if let Err(err) = saved {
            let _ = self.fs.remove_all(&dir);
            return Err(err);
        }
        Ok(chat)
    }

    /// Deletes a chat and its index entry.
    pub fn delete(&self, id: &str) -> Result<()> {
        let dir = self.chat_dir(id)?;
        let remove = || self.fs.remove_all(&dir).map_err(Error::io("remove", &dir));
        match self.fs.kind(&dir).ok().flatten() {
            None => return Err(Error::ChatNotFound),
            // Under the chat's lock, so a second daemon can neither hold it nor delete it too.
            Some(Kind::Dir) => lock::with_lock(&self.fs, &dir, remove)?,
            // A planted link (or file) is removed itself, never what it points to.
            Some(_) => remove()?,
        }
        self.update_index(|index| {
            index.chats.retain(|entry| entry.id != id);
            if index.active_chat_id == id {
                index.active_chat_id.clear();
            }
        })
        .map(drop)
    }

    /// The chats, newest first, with `locked` set for chats another live process holds. The
    /// index is repaired first (entries whose chat is gone dropped, chats it misses added from
    /// their `chat.json`), in the same scan of the chats directory that reads the locks.
    pub fn list(&self) -> Result<Vec<ChatSummary>> {
        if !self.fs.is_dir(&self.dir) {
            return Ok(Vec::new());
        }
        let mut locked = Vec::new();
        let index = self.with_index_lock(|| {
            let scan = self.scan()?;
            let ids: Vec<String> = scan
                .into_iter()
                .map(|(id, pid)| {
                    if pid.is_some() {
                        locked.push(id.clone());
                    }
                    id
                })
                .collect();
            self.update_index_locked(|_| {}, Some(&ids))
        })?;
        let mut chats = index.chats;
        for chat in &mut chats {
            chat.global = self.global;
            chat.locked = locked.binary_search(&chat.id).is_ok();
        }
        Ok(chats)
    }

    /// The ids of all chat directories holding a `chat.json` (links to directories and
    /// links named `chat.json` do not count).
    pub fn ids(&self) -> Result<Vec<String>> {
        Ok(self.scan()?.into_iter().map(|(id, _)| id).collect())
    }

    /// The chat directories holding a `chat.json`, sorted, each with the PID of another live
    /// process holding its lock: one open of the chats directory, then two system calls per
    /// chat (a `stat` of its `chat.json`, a no-follow open of its lock).
    fn scan(&self) -> Result<Vec<(String, Option<u32>)>> {
        let chats = match ConfinedDir::open(&self.fs, &self.dir) {
            Ok(chats) => chats,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(Error::io("list", &self.dir)(err)),
        };
        let entries = chats.list().map_err(Error::io("list", &self.dir))?;
        let mut found = Vec::new();
        for (name, kind) in entries {
            // A name that is no id (a move's temporary copy) is not a chat.
            if kind != Kind::Dir || self.chat_dir(&name).is_err() {
                continue;
            }
            if chats.kind_below(&name, "chat.json") != Some(Kind::File) {
                continue;
            }
            let pid = lock::held_by_other_in(&self.fs, &chats, &name, &self.dir.join(&name));
            found.push((name, pid));
        }
        Ok(found)
    }

    /// The active chat id remembered in the index, and whether it is a global chat.
    pub fn remembered_active(&self) -> Option<(String, bool)> {
        let text = self.fs.read_to_string(&self.index_path()).ok()?;
        let index: Index = serde_json::from_str(&text).ok()?;
        (!index.active_chat_id.is_empty())
            .then_some((index.active_chat_id, index.active_chat_global))
    }

    /// Remembers (or forgets, with "") the active chat in the index; `global` marks a global
    /// chat remembered by a project.
    pub fn remember_active(&self, id: &str, global: bool) -> Result<()> {
        self.update_index(|index| {
            index.active_chat_id = id.to_owned();
            index.active_chat_global = global && !id.is_empty();
        })
        .map(drop)
    }

    /// Runs `change` on the index under the advisory lock: the index is read (rebuilt from the
    /// chat directories when missing or corrupt), changed, sorted newest first and written
    /// back atomically. Returns the index as written. Entries of chats that appeared or went
    /// away meanwhile are set right by [`list`](ChatStore::list), which scans the directories
    /// anyway; this only changes what `change` changes.
    ///
    /// The index is a rebuildable cache, so it is written without `fsync`: after a power loss
    /// it may hold the previous version, or be unreadable and then rebuilt (the remembered
    /// active chat is then forgotten); no chat is lost, since a chat is its directory.
    pub fn update_index(&self, change: impl FnOnce(&mut Index)) -> Result<Index> {
        self.with_index_lock(|| self.update_index_locked(change, None))
    }

    fn with_index_lock<T>(&self, locked: impl FnOnce() -> Result<T>) -> Result<T> {
        self.fs
            .create_dir_all(&self.dir)
            .map_err(Error::io("create directory", &self.dir))?;
        let lock_path = self.dir.join(".index.lock");
        let lock_file: File = self
            .fs
            .open_rw(&lock_path)
            .map_err(Error::io("open", &lock_path))?;
        lock_file
            .lock_exclusive()
            .map_err(Error::io("lock", &lock_path))?;
        let result = locked();
        let _ = FileExt::unlock(&lock_file);
        result
    }

    /// The index update under the lock; `ids` (the chats on disk, sorted) repairs it, and
    /// without them it is repaired only when missing or corrupt.
    fn update_index_locked(
        &self,
        change: impl FnOnce(&mut Index),
        ids: Option<&[String]>,
    ) -> Result<Index> {
        let path = self.index_path();
        let before: Option<Index> = self
            .fs
            .read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        let mut index = before.clone().unwrap_or_default();
        match ids {
            Some(ids) => self.repair(&mut index, ids),
            None if before.is_none() => self.repair(&mut index, &self.ids()?),
            None => {}
        }
        for entry in &mut index.chats {
            entry.global = false;
            entry.locked = false;
        }
        change(&mut index);
        index.version = INDEX_VERSION;
        index
            .chats
            .sort_by(|a, b| newest_first(&a.created, &b.created).then_with(|| a.id.cmp(&b.id)));
        if before.as_ref() != Some(&index) {
            atomic::write_rebuildable_json_in(&self.fs, &path, &index)?;
        }
        Ok(index)
    }

    /// Drops entries whose chat is gone and adds chats missing from the index (`ids`: the
    /// chats on disk, sorted).
    fn repair(&self, index: &mut Index, ids: &[String]) {
        index
            .chats
            .retain(|entry| ids.binary_search(&entry.id).is_ok());
        let known: std::collections::HashSet<&str> =
            index.chats.iter().map(|entry| entry.id.as_str()).collect();
        let missing: Vec<&String> = ids
            .iter()
            .filter(|id| !known.contains(id.as_str()))
            .collect();
        for id in missing {
            if let Some(summary) = self.read_summary(id) {
                index.chats.push(summary);
            }
        }
    }

    fn read_summary(&self, id: &str) -> Option<ChatSummary> {
        #[derive(Deserialize)]
        struct Head {
            #[serde(default)]
            name: String,
            #[serde(default)]
            created: String,
        }
        let text = self
            .fs
            .read_to_string(&self.dir.join(id).join("chat.json"))
            .ok()?;
        let head: Head = serde_json::from_str(&text).ok()?;
        Some(ChatSummary {
            id: id.to_owned(),
            name: head.name,
            created: head.created,
            global: false,
            locked: false,
        })
    }
}

/// A fresh chat id: 10 lowercase hex characters.
pub fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = Sha256::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    hasher.update(now.to_le_bytes());
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let local = 0u8;
    hasher.update(format!("{:p}", &local).as_bytes());
    hex::encode(&hasher.finalize()[..5])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn chat(name: &str) -> Chat {
        Chat::new(String::new(), name.into(), "m".into(), false)
    }

    #[test]
    fn ids_are_ten_hex_chars() {
        let id = new_id();
        assert_eq!(id.len(), 10);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(new_id(), new_id());
    }

    #[test]
    fn create_list_delete_and_repair() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::new(dir.path().join("chats"), false);
        let a = store.create(chat("a")).unwrap();
        let b = store.create(chat("b")).unwrap();
        assert_eq!(store.list().unwrap().len(), 2);
        std::fs::write(store.index_path(), "{ not json").unwrap();
        let listed = store.list().unwrap();
        assert_eq!(
            listed.len(),
            2,
            "a corrupt index is rebuilt from the directories"
        );
        store.delete(&a.id).unwrap();
        let listed: Vec<_> = store.list().unwrap().into_iter().map(|c| c.id).collect();
        assert_eq!(listed, vec![b.id.clone()]);
        assert!(matches!(store.delete(&a.id), Err(Error::ChatNotFound)));
        assert!(matches!(store.load("../x"), Err(Error::ChatNotFound)));
    }

    #[test]
    fn event_fields_core_does_not_model_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::new(dir.path().join("chats"), false);
        let chat = store.create(chat("a")).unwrap();
        let path = store.chat_dir(&chat.id).unwrap().join("chat.json");
        let section = serde_json::json!({"type": "context_event", "action": "UserAddSection", "path": "a.rs",
            "version": "12345678", "readonly": true, "external": false, "start_line": 3, "end_line": 9});
        let plain = serde_json::json!({"type": "context_event", "action": "UserAddFile", "path": "b.rs",
            "readonly": false, "external": false});
        let text = serde_json::json!({"version": 2, "id": chat.id, "messages": [
            {"role": "assistant", "parts": [section.clone(), plain.clone()]}]});
        std::fs::write(&path, text.to_string()).unwrap();
        let loaded = store.load(&chat.id).unwrap();
        store.save(&loaded).unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            saved["messages"][0]["parts"],
            serde_json::json!([section, plain])
        );
        assert!(matches!(
            loaded.messages[0].parts[1],
            ybs_core::Part::ContextEvent(_)
        ));
    }

    #[test]
    fn newer_versions_and_corrupt_files_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::new(dir.path().join("chats"), false);
        let chat = store.create(chat("a")).unwrap();
        let path = store.chat_dir(&chat.id).unwrap().join("chat.json");
        let newer = format!(r#"{{"version": 3, "id": "{}", "future": true}}"#, chat.id);
        std::fs::write(&path, &newer).unwrap();
        let err = store.load(&chat.id).unwrap_err().to_string();
        assert!(
            err.contains("has chat format version 3, newer than this bb7 understands (up to 2)"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
        std::fs::write(&path, "{\"id\": ").unwrap();
        let err = store.load(&chat.id).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "Cannot read {}: EOF while parsing",
                path.display()
            )),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"id\": ");
    }
}
