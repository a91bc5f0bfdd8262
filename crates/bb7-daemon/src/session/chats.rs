//! Chat lifecycle handlers: new (empty or with another chat's context), select, delete,
//! rename, move between the project and the global store, search.

use std::path::Path;

use super::Session;
use crate::session::history::{self, SearchResult};
use crate::store::active::{Active, version_of};
use crate::store::dirs;
use crate::store::global::{Config, new_chat_model};
use crate::store::lock;
use crate::store::model::{Chat, ChatSummary, ContextFile};
use crate::store::paths;
use crate::wire::error::{Error, Result};
use ybs_fsguard::confined::Confined;

impl Session {
    pub(crate) fn chat_new(
        &mut self,
        name: &str,
        model: Option<&str>,
        global: bool,
    ) -> Result<String> {
        let store = self.store(global)?;
        let config = Config::load(&self.home).ok().flatten();
        let model = new_chat_model(config.as_ref(), model, &self.home);
        let name = if name.trim().is_empty() {
            default_name()
        } else {
            name.to_owned()
        };
        // Remembered as the active chat in the index update that adds it, so that `activate`
        // finds the index as it wants it and writes nothing.
        let chat = store.create_active(Chat::new(String::new(), name, model, store.is_global()))?;
        let id = chat.id.clone();
        let active = self.open(store, chat)?;
        self.activate(active)?;
        Ok(id)
    }

    /// `chat_new_with_context`: a new chat with the source chat's model, reasoning effort
    /// and context files as they are now: whole files are read again from disk (those that
    /// cannot be read are left out), sections keep their snapshot.
    pub(crate) fn chat_new_with_context(
        &mut self,
        source_id: &str,
        global: bool,
    ) -> Result<String> {
        let store = self.store(global)?;
        let source = self.load(&store, source_id)?;
        let mut chat = Chat::new(
            String::new(),
            default_name(),
            source.model.clone(),
            store.is_global(),
        );
        chat.reasoning_effort = source.reasoning_effort.clone();
        let chat = store.create(chat)?;
        let from = store.context_dir(&source.id)?;
        let mut active = self.open(store, chat)?;
        let project = self.root.as_deref().map(Confined::new);
        for file in &source.context_files {
            let content = if file.section().is_some() || file.external {
                // Sections keep their snapshot, and so do external entries: the daemon never
                // re-reads an external original on its own initiative (SECURITY.md).
                active
                    .store
                    .fs()
                    .read_to_string(&crate::store::active::storage_path(&from, file)?)
            } else {
                let (Some(root), Some(project)) = (self.root.as_deref(), project.as_ref()) else {
                    continue;
                };
                // Placed again now: a link swapped in since the file was added may lead
                // outside, and then the file is not read.
                let placed = match paths::place_in_project(root, &file.path) {
                    Ok(placed) if !placed.external => placed,
                    _ => {
                        tracing::warn!(path = %file.path, "context file no longer resolves inside the project; not inherited");
                        continue;
                    }
                };
                project.read_to_string(&root.join(&placed.path))
            };
            let Ok(content) = content else {
                tracing::info!(path = %file.path, "context file unreadable; not inherited");
                continue;
            };
            let file = ContextFile {
                version: version_of(file, &content),
                ..file.clone()
            };
            active.write_snapshot(&file, &content)?;
            active.chat.context_files.push(file);
        }
        active.save()?;
        let id = active.chat.id.clone();
        self.activate(active)?;
        Ok(id)
    }

    /// `chat_list`: the chats of the store addressed, newest first.
    pub(crate) fn chat_list(&self, global: bool) -> Result<Vec<ChatSummary>> {
        Ok(self.store(global)?.list()?)
    }

    /// `chat_active`: the active chat, if any.
    pub(crate) fn chat_active(&self) -> Result<Option<&Active>> {
        self.require_init()?;
        Ok(self.active.as_ref())
    }

    /// `chat_force_unlock`: removes the lock of a chat (a stale one, or another live
    /// daemon's when the user says so).
    pub(crate) fn chat_force_unlock(&self, id: &str, global: bool) -> Result<()> {
        let store = self.store(global)?;
        let dir = store.chat_dir(id)?;
        if !store.fs().is_dir(&dir) {
            return Err(Error::ChatNotFound);
        }
        Ok(lock::force_unlock(store.fs(), &dir)?)
    }

    pub(crate) fn chat_select(&mut self, id: &str, global: bool) -> Result<()> {
        let store = self.store(global)?;
        if let Some(active) = &self.active {
            if active.chat.id == id && active.store == store {
                return Ok(());
            }
        }
        let dir = store.chat_dir(id)?;
        if !store.fs().is_dir(&dir) {
            return Err(Error::ChatNotFound);
        }
        if let Some(pid) = lock::held_by_other(store.fs(), &dir) {
            return Err(Error::ChatLocked { pid });
        }
        // Locked before it is read, so a second daemon cannot load it meanwhile.
        lock::acquire(store.fs(), &dir)?;
        let chat = match store.load(id) {
            Ok(chat) => chat,
            Err(err) => {
                lock::release(store.fs(), &dir);
                return Err(err.into());
            }
        };
        let active = self.open(store, chat)?;
        self.activate(active)
    }

    pub(crate) fn chat_delete(&mut self, id: &str, global: bool) -> Result<()> {
        let store = self.store(global)?;
        if self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.id == id && active.store == store)
        {
            self.release_active();
            store.remember_active("", false)?;
        }
        Ok(store.delete(id)?)
    }

    /// The current name of a chat (the active one's in memory), if it can be read.
    pub fn chat_name(&self, id: &str, global: bool) -> Option<String> {
        let store = self.store(global).ok()?;
        match &self.active {
            Some(active) if active.chat.id == id && active.store == store => {
                Some(active.chat.name.clone())
            }
            _ => store.peek(id).map(|chat| chat.name),
        }
    }

    /// Renames a chat (the active one in memory too).
    pub fn chat_rename(&mut self, id: &str, name: &str, global: bool) -> Result<()> {
        if name.trim().is_empty() {
            return Err(Error::Invalid("chat name cannot be empty".into()));
        }
        let store = self.store(global)?;
        if let Some(active) = self
            .active
            .as_mut()
            .filter(|active| active.chat.id == id && active.store == store)
        {
            active.chat.name = name.to_owned();
            return Ok(active.save()?);
        }
        // Read and written under the chat's lock: a daemon holding it keeps it to itself.
        lock::with_lock(store.fs(), &store.chat_dir(id)?, || {
            let mut chat = store.load(id)?;
            chat.name = name.to_owned();
            store.save(&chat)
        })
        .map_err(Error::from)
    }

    /// `chat_move {id, to}`. To the global store: refused while the chat has pending output;
    /// `output/` is dropped, every context file becomes read-only and `created` is renewed.
    /// To the project: external files inside the project become relative, writable entries
    /// again (their snapshots follow). Either way the moved chat becomes the active one.
    pub(crate) fn chat_move(&mut self, id: &str, to: &str) -> Result<()> {
        self.move_chat(id, to, true)
    }

    /// `chat_move` while a stream runs (of another chat): the move happens, the active chat
    /// (the one streaming) stays.
    pub fn chat_move_keeping_active(&mut self, id: &str, to: &str) -> Result<()> {
        if self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.id == id)
        {
            return Err(Error::Busy);
        }
        self.move_chat(id, to, false)
    }

    fn move_chat(&mut self, id: &str, to: &str, activate: bool) -> Result<()> {
        let (from, into) = match to {
            "global" => (self.project_store()?, self.store(true)?),
            "project" => (self.store(true)?, self.project_store()?),
            _ => {
                return Err(Error::Invalid(
                    "Missing or invalid field: to (must be 'global' or 'project')".into(),
                ));
            }
        };
        let source_dir = from.chat_dir(id)?;
        if !from.fs().is_file(&source_dir.join("chat.json")) {
            return Err(Error::ChatNotFound);
        }
        if let Some(pid) = lock::held_by_other(from.fs(), &source_dir) {
            return Err(Error::ChatLocked { pid });
        }
        if let Some(why) = self.distrust(&from, id) {
            return Err(Error::Invalid(format!("Chat not moved: {why}")));
        }
        let to_global = into.is_global();
        let output = from.output_dir(id)?;
        if to_global
            && from
                .fs()
                .list(&output)
                .is_ok_and(|entries| !entries.is_empty())
        {
            return Err(Error::Invalid(
                "chat has pending file modifications — apply or reject changes before moving"
                    .into(),
            ));
        }
        let target_dir = into.chat_dir(id)?;
        let target_exists = into
            .fs()
            .kind(&target_dir)
            .map_err(Error::io("inspect", &target_dir))?
            .is_some();
        // A cross-device move killed after its copy reached the target: finish it.
        let finishing = target_exists && dirs::half_moved(from.fs(), &source_dir);
        if target_exists && !finishing {
            return Err(Error::Invalid(format!(
                "chat ID already exists in {to} scope"
            )));
        }
        let mut chat = if finishing {
            into.load(id)?
        } else {
            self.load(&from, id)?
        };
        if activate {
            self.release_active();
        }
        if finishing {
            from.fs()
                .remove_all(&source_dir)
                .map_err(Error::io("remove", &source_dir))?;
        } else {
            into.fs()
                .create_dir_all(into.dir())
                .map_err(Error::io("create directory", into.dir()))?;
            dirs::move_dir(from.fs(), &source_dir, into.fs(), &target_dir)
                .map_err(Error::io("move", &source_dir))?;
        }
        chat.global = to_global;
        chat.created = crate::store::model::now_rfc3339();
        if to_global {
            let _ = into.fs().remove_all(&into.output_dir(id)?);
            // Global chats expose no file tools: everything in context becomes read-only.
            for file in &mut chat.context_files {
                file.readonly = true;
            }
        } else if let Some(root) = self.root.clone() {
            let context_dir = into.context_dir(id)?;
            for file in &mut chat.context_files {
                if !Path::new(&file.path).is_absolute() || file.section().is_some() {
                    continue;
                }
                let Some(relative) = paths::relative_to(&root, Path::new(&file.path)) else {
                    continue;
                };
                let old = crate::store::active::storage_path(&context_dir, file)?;
                let moved = ContextFile {
                    path: relative,
                    external: false,
                    readonly: false,
                    ..file.clone()
                };
                let new = crate::store::active::storage_path(&context_dir, &moved)?;
                if let Ok(content) = into.fs().read_to_string(&old) {
                    crate::store::atomic::write_in(into.fs(), &new, content.as_bytes())?;
                    let _ = into.fs().remove_file(&old);
                    *file = ContextFile {
                        version: version_of(&moved, &content),
                        ..moved
                    };
                }
            }
        }
        into.save(&chat)?;
        from.update_index(|index| {
            index.chats.retain(|entry| entry.id != id);
            if index.active_chat_id == id {
                index.active_chat_id.clear();
                index.active_chat_global = false;
            }
        })?;
        if !activate {
            return Ok(());
        }
        if self.project {
            self.store(false)?.remember_active("", false)?;
        }
        if let Err(err) = self.chat_select(id, to_global) {
            tracing::info!(chat = %id, error = %err, "could not select the moved chat");
        }
        Ok(())
    }

    pub(crate) fn search(&self, query: &str, global: bool) -> Result<Vec<SearchResult>> {
        let store = self.store(global)?;
        let mut results = Vec::new();
        for id in store.ids()? {
            let chat = match &self.active {
                Some(active) if active.chat.id == id && active.store == store => {
                    active.chat.clone()
                }
                _ => match store.peek(&id) {
                    Some(chat) => chat,
                    None => continue,
                },
            };
            if let Some(result) = history::search_one(&chat, query) {
                results.push(result);
            }
        }
        history::sort_results(&mut results);
        Ok(results)
    }
}

pub(super) fn default_name() -> String {
    format!("Chat {}", chrono::Utc::now().format("%Y-%m-%d %H:%M"))
}
