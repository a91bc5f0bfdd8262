//! The session: the state machine of the spec and the handler of every action that does not
//! call a model.
//!
//! States: not initialized (no `init` yet) -> initialized without chats -> chats but none
//! active -> chat active. Actions that need a project before `init` fail with
//! `Not initialized. Run :BB7Init`; actions that need a chat without one fail with
//! `No active chat`; `bb7_init` on an initialized directory fails with `Already initialized`.
//! `init` in a directory without `.bb7/` succeeds in global-only mode (`global_only: true`):
//! chat actions then address the global chats under `~/.bb7/chats`.

use std::path::{Path, PathBuf};

use ybs_core::{Message, Part, Role};

use crate::active::Active;
use crate::error::{Error, Result};
use crate::global::{Config, GlobalState, Home, new_chat_model};
use crate::history::{self, SearchResult};
use crate::instructions;
use crate::lock;
use crate::model::{Chat, message_text, now};
use crate::protocol::{Reply, Request};
use crate::store::ChatStore;

/// The four states of the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No `init` yet.
    NotInitialized,
    /// Initialized, no chats in the store.
    NoChats,
    /// Chats exist, none selected in this session.
    NoneActive,
    /// A chat is selected.
    ChatActive,
}

/// What the daemon should do after a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading requests.
    Continue,
    /// Exit cleanly (after `shutdown`).
    Exit,
}

/// One daemon's session.
#[derive(Debug)]
pub struct Session {
    home: Home,
    /// The directory given to `init` (canonical), if any.
    root: Option<PathBuf>,
    /// Whether `root` has `.bb7/`.
    project: bool,
    initialized: bool,
    active: Option<Active>,
    /// The models list, fetched once per session.
    models: Option<Vec<ybs_providers::ModelInfo>>,
}

impl Session {
    /// A fresh session using the per-user files under `home`.
    pub fn new(home: Home) -> Session {
        Session {
            home,
            root: None,
            project: false,
            initialized: false,
            active: None,
            models: None,
        }
    }

    /// The per-user locations.
    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The active chat, if any.
    pub fn active(&self) -> Option<&Active> {
        self.active.as_ref()
    }

    /// The active chat for changes the sending half makes.
    pub fn active_mut(&mut self) -> Option<&mut Active> {
        self.active.as_mut()
    }

    /// The project root when the session has a project (`.bb7/` exists).
    pub fn project_root(&self) -> Option<&Path> {
        if self.project {
            self.root.as_deref()
        } else {
            None
        }
    }

    /// The cached models list.
    pub fn models(&self) -> Option<&[ybs_providers::ModelInfo]> {
        self.models.as_deref()
    }

    /// Caches the models list for the session.
    pub fn set_models(&mut self, models: Vec<ybs_providers::ModelInfo>) {
        self.models = Some(models);
    }

    /// Puts back the chat a stream worked on (a copy taken when it started). The name is
    /// kept from the session's copy, since a title may have arrived meanwhile.
    pub fn restore_active(&mut self, mut active: Active) {
        if let Some(current) = &self.active {
            if current.chat.id != active.chat.id {
                return;
            }
            if active.chat.name != current.chat.name {
                active.chat.name = current.chat.name.clone();
                if let Err(err) = active.save() {
                    tracing::warn!(error = %err, "could not save the chat after a stream");
                }
            }
        }
        self.active = Some(active);
    }

    /// The current state.
    pub fn state(&self) -> State {
        if !self.initialized {
            return State::NotInitialized;
        }
        if self.active.is_some() {
            return State::ChatActive;
        }
        match self.store(false).and_then(|store| store.ids()) {
            Ok(ids) if !ids.is_empty() => State::NoneActive,
            _ => State::NoChats,
        }
    }

    /// Handles one request; the reply has no request id yet.
    pub fn handle(&mut self, request: Request) -> (Reply, Flow) {
        let action = request.action();
        match self.dispatch(request) {
            Ok(Some(reply)) => (reply, Flow::Continue),
            Ok(None) => (Reply::ok(), Flow::Exit),
            Err(err) => {
                if !err.is_fatal() {
                    tracing::info!(action, error = %err, "request failed");
                }
                (Reply::error(err.to_string()), Flow::Continue)
            }
        }
    }

    /// Like [`handle`](Session::handle) but returns the error itself, so the caller can tell
    /// the fatal safety-guard error apart. `Ok(None)` means shut down.
    pub fn dispatch(&mut self, request: Request) -> Result<Option<Reply>> {
        use Request as R;
        let reply = match request {
            R::Ping => Reply::ok(),
            R::Version => Reply::typed("version").with("version", env!("CARGO_PKG_VERSION")),
            R::Shutdown => {
                self.release_active();
                return Ok(None);
            }
            R::Bb7Init { project_root } => self.bb7_init(&project_root)?,
            R::Init { project_root } => self.init(&project_root)?,
            R::ChatNew {
                name,
                model,
                global,
            } => {
                let id = self.chat_new(&name, model.as_deref(), global)?;
                Reply::ok().with("id", id)
            }
            R::ChatNewWithContext {
                source_chat_id,
                global,
            } => {
                let id = self
                    .chat_new_with_context(&required("source_chat_id", &source_chat_id)?, global)?;
                Reply::ok().with("id", id)
            }
            R::ChatList { global } => {
                let chats = self.store(global)?.list()?;
                Reply::typed("chat_list").with("chats", chats)
            }
            R::ChatSelect { id, global } => {
                self.chat_select(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::ChatGet => self.chat_get()?,
            R::ChatDelete { id, global } => {
                self.chat_delete(&required("id", &id)?, global)?;
                Reply::ok()
            }
            R::ChatRename { id, name, global } => {
                self.chat_rename(&required("id", &id)?, &required("name", &name)?, global)?;
                Reply::ok()
            }
            R::ChatMove { id, to } => {
                self.chat_move(&required("id", &id)?, &required("to", &to)?)?;
                Reply::ok().with("id", id)
            }
            R::ChatActive => {
                self.require_init()?;
                let mut reply = Reply::typed("chat_active");
                if let Some(active) = &self.active {
                    reply = reply.with("id", &active.chat.id);
                    if active.chat.global {
                        reply = reply.with("global", true);
                    }
                }
                reply
            }
            R::ChatForceUnlock { id, global } => {
                let store = self.store(global)?;
                let dir = store.chat_dir(&required("id", &id)?)?;
                if !store.fs().is_dir(&dir) {
                    return Err(Error::ChatNotFound);
                }
                lock::force_unlock(store.fs(), &dir)?;
                Reply::ok()
            }
            R::SearchChats { query, global } => {
                let results = self.search(&query, global)?;
                Reply::typed("search_results").with("results", results)
            }
            R::ChatEdit {
                chat_id,
                message_index,
                content,
            } => {
                let warnings = self.chat_edit(&chat_id, message_index, &content)?;
                Reply::ok().with("context_warnings", warnings)
            }
            R::ForkChat {
                chat_id,
                fork_message_index,
                global,
            } => self.fork(&required("chat_id", &chat_id)?, fork_message_index, global)?,
            R::SaveDraft { draft } => {
                let active = self.active_chat()?;
                active.chat.draft = draft;
                active.save()?;
                Reply::ok()
            }
            R::SaveChatSettings {
                model,
                reasoning_effort,
            } => {
                let home = self.home.clone();
                let active = self.active_chat()?;
                if let Some(model) = model.filter(|model| !model.is_empty()) {
                    GlobalState::record_model(&home, &model)?;
                    active.chat.model = model;
                }
                if let Some(effort) = reasoning_effort {
                    active.chat.reasoning_effort = effort;
                }
                active.save()?;
                Reply::ok()
            }
            R::AddSystemMessage { content, message } => {
                let text = content.or(message).unwrap_or_default();
                let active = self.active_chat()?;
                if text.trim().is_empty() {
                    return Err(Error::MissingField("content"));
                }
                active
                    .chat
                    .messages
                    .push(Message::system(text).with_timestamp(now()));
                active.save()?;
                Reply::ok()
            }
            R::ContextAdd {
                path,
                content,
                readonly,
            } => {
                self.active_chat()?
                    .add_file(&required("path", &path)?, &content, readonly)?;
                Reply::ok()
            }
            R::ContextAddSection {
                path,
                content,
                start_line,
                end_line,
            } => {
                self.active_chat()?.add_section(
                    &required("path", &path)?,
                    &content,
                    start_line,
                    end_line,
                )?;
                Reply::ok()
            }
            R::ContextUpdate { path, content } => {
                self.active_chat()?
                    .update_file(&required("path", &path)?, &content)?;
                Reply::ok()
            }
            R::ContextRemove { path } => {
                self.active_chat()?.remove_file(&required("path", &path)?)?;
                Reply::ok()
            }
            R::ContextRemoveSection {
                path,
                start_line,
                end_line,
            } => {
                self.active_chat()?.remove_section(
                    &required("path", &path)?,
                    start_line,
                    end_line,
                )?;
                Reply::ok()
            }
            R::ContextList => {
                let active = self.active_chat()?;
                Reply::typed("context_list").with("files", &active.chat.context_files)
            }
            R::ContextSetReadonly { path, readonly } => {
                self.active_chat()?
                    .set_readonly(&required("path", &path)?, readonly)?;
                Reply::ok()
            }
            R::SyncContext { path } => {
                let updated = self.active_chat()?.sync(path.as_deref())?;
                Reply::ok().with("updated", updated)
            }
            R::GetContextFile { path } => {
                let path = required("path", &path)?;
                let content = self.active_chat()?.context_content(&path)?;
                Reply::typed("file_content")
                    .with("path", path)
                    .with("content", content)
            }
            R::GetOutputFile { path } => {
                let path = required("path", &path)?;
                let content = self.active_chat()?.output_content(&path)?;
                Reply::typed("file_content")
                    .with("path", path)
                    .with("content", content)
            }
            R::GetDiffPaths { path } => {
                let path = required("path", &path)?;
                let (output, local) = self.active_chat()?.diff_paths(&path)?;
                Reply::typed("diff_paths")
                    .with("path", path)
                    .with("output_path", output.display().to_string())
                    .with("local_path", local.display().to_string())
            }
            R::GetFileStatuses => {
                let files = self.active_chat()?.file_statuses()?;
                Reply::typed("file_statuses").with("files", files)
            }
            R::ApplyFile { path } => {
                let content = self.active_chat()?.apply(&required("path", &path)?)?;
                Reply::ok().with("content", content)
            }
            R::ApplyFileAs { path, destination } => {
                let path = required("path", &path)?;
                let destination = required("destination", &destination)?;
                let content = self.active_chat()?.apply_as(&path, &destination)?;
                Reply::ok().with("content", content)
            }
            R::OutputDelete { path } => {
                self.active_chat()?
                    .reject_output(&required("path", &path)?)?;
                Reply::ok()
            }
            R::DiffLocalDone { path } => {
                let outcome = self
                    .active_chat()?
                    .diff_local_done(&required("path", &path)?)?;
                Reply::ok().with("outcome", outcome.as_str())
            }
            R::PrepareInstructions { level } => {
                let path = self.prepare_instructions(&required("level", &level)?)?;
                Reply::typed("instructions_path").with("path", path.display().to_string())
            }
            R::GetCustomizationInfo => self.customization_info(),
            R::Send { .. }
            | R::Cancel { .. }
            | R::GenerateTitle { .. }
            | R::EstimateTokens { .. }
            | R::EstimateTextTokens { .. }
            | R::GetModels { .. }
            | R::GetBalance { .. } => return Err(Error::NotAvailable(request.action().to_owned())),
        };
        Ok(Some(reply))
    }

    fn require_init(&self) -> Result<()> {
        if self.initialized {
            Ok(())
        } else {
            Err(Error::NotInitialized)
        }
    }

    /// The active chat, or the state's error (`Not initialized...`, `No active chat`).
    pub fn active_chat(&mut self) -> Result<&mut Active> {
        self.require_init()?;
        self.active.as_mut().ok_or(Error::NoActiveChat)
    }

    /// The store addressed by a request: the global one for `global: true` or in global-only
    /// mode, the project's otherwise.
    pub fn store(&self, global: bool) -> Result<ChatStore> {
        self.require_init()?;
        if global || !self.project {
            return Ok(ChatStore::new(self.home.global_chats_dir(), true));
        }
        let root = self.root.as_ref().ok_or(Error::NotInitialized)?;
        Ok(ChatStore::new(root.join(".bb7").join("chats"), false))
    }

    fn project_store(&self) -> Result<ChatStore> {
        if !self.project {
            return Err(Error::NotInitialized);
        }
        self.store(false)
    }

    fn bb7_init(&mut self, project_root: &str) -> Result<Reply> {
        let root = existing_dir(&required("project_root", project_root)?)?;
        let bb7 = root.join(".bb7");
        // Anything there counts, a dangling link too (creating through it would write
        // wherever it points).
        if bb7.symlink_metadata().is_ok() {
            return Err(Error::AlreadyInitialized);
        }
        let chats = bb7.join("chats");
        crate::confined::Confined::new(&root)
            .create_dir_all(&chats)
            .map_err(Error::io("create directory", &chats))?;
        Ok(Reply::ok())
    }

    /// Whether the session is already initialized on `project_root` (the same directory once
    /// canonicalized): a repeated `init` then keeps the active chat, so the UI may reopen
    /// while a stream runs.
    pub fn initialized_at(&self, project_root: &str) -> bool {
        self.initialized
            && !project_root.is_empty()
            && existing_dir(project_root).is_ok_and(|root| self.root.as_ref() == Some(&root))
    }

    fn init(&mut self, project_root: &str) -> Result<Reply> {
        let root = existing_dir(&required("project_root", project_root)?)?;
        let same_root = self.initialized && self.root.as_ref() == Some(&root);
        if !same_root {
            self.release_active();
        }
        self.project = root.join(".bb7").is_dir();
        self.root = Some(root);
        self.initialized = true;
        // The UI reopening on the same project keeps the active chat (a stream may be using
        // it); otherwise reopen, best effort, the chat this project had selected last.
        if self.active.is_none() {
            let store = self.store(false)?;
            if let Some(id) = store.remembered_active() {
                if let Some(why) = self.distrust(&store, &id) {
                    tracing::warn!(chat = %id, reason = %why, "not restoring the last active chat");
                } else if let Err(err) = self.chat_select(&id, false) {
                    tracing::info!(chat = %id, error = %err, "could not restore the last active chat");
                }
            }
        }
        let mut reply = Reply::ok();
        if !self.project {
            reply = reply.with("global_only", true);
        }
        if let Ok(Some(config)) = Config::load(&self.home) {
            if let Some(model) = config.explicit_default_model() {
                reply = reply.with("default_model", model);
            }
        }
        Ok(reply)
    }

    /// Makes `active` the active chat: releases the previous chat's lock and remembers the
    /// new one in its index. `active`'s lock must already be held.
    fn activate(&mut self, active: Active) -> Result<()> {
        if self
            .active
            .as_ref()
            .is_none_or(|old| old.chat.id != active.chat.id || old.store != active.store)
        {
            self.release_active();
        }
        active.store.remember_active(&active.chat.id)?;
        self.active = Some(active);
        Ok(())
    }

    fn release_active(&mut self) {
        if let Some(old) = self.active.take() {
            if let Ok(dir) = old.store.chat_dir(&old.chat.id) {
                lock::release(old.store.fs(), &dir);
            }
        }
    }

    /// Why the stored chat `id` is not to be selected without the user asking, if so.
    fn distrust(&self, store: &ChatStore, id: &str) -> Option<String> {
        let chat = read_for_search(store, id)?;
        crate::trust::audit(store, &chat, self.root.as_deref())
    }

    fn open(&self, store: ChatStore, chat: Chat) -> Result<Active> {
        lock::acquire(store.fs(), &store.chat_dir(&chat.id)?)?;
        Ok(Active {
            chat,
            store,
            root: self.root.clone(),
        })
    }

    fn chat_new(&mut self, name: &str, model: Option<&str>, global: bool) -> Result<String> {
        let store = self.store(global)?;
        let config = Config::load(&self.home).ok().flatten();
        let model = new_chat_model(config.as_ref(), model, &self.home);
        let name = if name.trim().is_empty() {
            default_name()
        } else {
            name.to_owned()
        };
        let chat = store.create(Chat::new(String::new(), name, model, store.is_global()))?;
        let id = chat.id.clone();
        let active = self.open(store, chat)?;
        self.activate(active)?;
        Ok(id)
    }

    /// Loads a chat, using the in-memory copy when it is the active one.
    fn load(&self, store: &ChatStore, id: &str) -> Result<Chat> {
        match &self.active {
            Some(active) if active.chat.id == id && active.store == *store => {
                Ok(active.chat.clone())
            }
            _ => store.load(id),
        }
    }

    fn chat_new_with_context(&mut self, source_id: &str, global: bool) -> Result<String> {
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
        let to = store.context_dir(&chat.id)?;
        let mut active = self.open(store, chat)?;
        for file in &source.context_files {
            let source_path = crate::active::storage_path(&from, file)?;
            let Ok(content) = active.store.fs().read(&source_path) else {
                tracing::info!(path = %file.path, "context snapshot missing; not inherited");
                continue;
            };
            crate::atomic::write_in(
                active.store.fs(),
                &crate::active::storage_path(&to, file)?,
                &content,
            )?;
            active.chat.context_files.push(file.clone());
        }
        active.save()?;
        let id = active.chat.id.clone();
        self.activate(active)?;
        Ok(id)
    }

    fn chat_select(&mut self, id: &str, global: bool) -> Result<()> {
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
                return Err(err);
            }
        };
        let active = self.open(store, chat)?;
        self.activate(active)
    }

    fn chat_get(&mut self) -> Result<Reply> {
        let home = self.home.clone();
        let root = if self.project {
            self.root.clone()
        } else {
            None
        };
        let active = self.active_chat()?;
        let chat = &active.chat;
        let project_root = if chat.global { None } else { root.as_deref() };
        let info = instructions::info(&home.global_instructions_path(), project_root);
        let model = if chat.model.is_empty() {
            chat.effective_model().to_owned()
        } else {
            chat.model.clone()
        };
        let mut reply = Reply::typed("chat")
            .with("id", &chat.id)
            .with("name", &chat.name)
            .with("created", &chat.created)
            .with("model", model)
            .with("reasoning_effort", &chat.reasoning_effort)
            .with("draft", &chat.draft)
            .with("messages", &chat.messages)
            .with("instructions_info", info);
        if chat.global {
            reply = reply.with("global", true);
        }
        if let Some(why) = crate::trust::audit(&active.store, chat, active.root.as_deref()) {
            reply = reply.with("untrusted", why);
        }
        Ok(reply)
    }

    fn chat_delete(&mut self, id: &str, global: bool) -> Result<()> {
        let store = self.store(global)?;
        if self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.id == id && active.store == store)
        {
            self.release_active();
            store.remember_active("")?;
        }
        store.delete(id)
    }

    /// Renames a chat (the active one in memory too).
    pub fn chat_rename(&mut self, id: &str, name: &str, global: bool) -> Result<()> {
        if name.trim().is_empty() {
            return Err(Error::Invalid("Chat name cannot be empty".into()));
        }
        let store = self.store(global)?;
        if let Some(active) = self
            .active
            .as_mut()
            .filter(|active| active.chat.id == id && active.store == store)
        {
            active.chat.name = name.to_owned();
            return active.save();
        }
        if let Some(pid) = lock::held_by_other(store.fs(), &store.chat_dir(id)?) {
            return Err(Error::ChatLocked { pid });
        }
        let mut chat = store.load(id)?;
        chat.name = name.to_owned();
        store.save(&chat)
    }

    fn chat_move(&mut self, id: &str, to: &str) -> Result<()> {
        let (from, into) = match to {
            "global" => (self.project_store()?, self.store(true)?),
            "project" => (self.store(true)?, self.project_store()?),
            other => {
                return Err(Error::Invalid(format!(
                    "Invalid destination: {other} (expected \"global\" or \"project\")"
                )));
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
        let was_active = self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.id == id && active.store == from);
        let mut chat = self.load(&from, id)?;
        let target_dir = into.chat_dir(id)?;
        if target_dir.exists() {
            return Err(Error::Invalid(format!(
                "A chat with id {id} already exists in the {to} chats"
            )));
        }
        std::fs::create_dir_all(into.dir()).map_err(Error::io("create directory", into.dir()))?;
        move_dir(&source_dir, &target_dir)?;
        chat.global = into.is_global();
        if chat.global {
            // Global chats expose no file tools: everything in context becomes read-only.
            for file in &mut chat.context_files {
                file.readonly = true;
            }
        }
        into.save(&chat)?;
        from.update_index(|index| {
            index.chats.retain(|entry| entry.id != id);
            if index.active_chat_id == id {
                index.active_chat_id.clear();
            }
        })?;
        if was_active {
            self.active = Some(Active {
                chat,
                store: into.clone(),
                root: self.root.clone(),
            });
            into.remember_active(id)?;
        }
        Ok(())
    }

    fn search(&self, query: &str, global: bool) -> Result<Vec<SearchResult>> {
        let store = self.store(global)?;
        let mut results = Vec::new();
        for id in store.ids()? {
            let chat = match &self.active {
                Some(active) if active.chat.id == id && active.store == store => {
                    active.chat.clone()
                }
                _ => match read_for_search(&store, &id) {
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

    fn chat_edit(
        &mut self,
        chat_id: &str,
        index: i64,
        content: &str,
    ) -> Result<Vec<history::ContextWarning>> {
        let active = self.active_chat()?;
        if !chat_id.is_empty() && chat_id != active.chat.id {
            return Err(Error::Invalid("Chat is not active".into()));
        }
        let index = user_message_index(&active.chat, index, "edit")?;
        let restored = history::restore(
            &active.chat,
            index,
            active.store.fs(),
            &active.context_dir()?,
            active.root.as_deref(),
        )?;
        let draft = if content.is_empty() {
            message_text(&active.chat.messages[index])
        } else {
            content.to_owned()
        };
        active.chat.messages.truncate(index);
        active.chat.draft = draft;
        active.chat.context_files = restored
            .files
            .iter()
            .map(|(file, _)| file.clone())
            .collect();
        if let Some(message) = restored.warning_message() {
            active.chat.messages.push(message);
        }
        active.save()?;
        Ok(restored.warnings)
    }

    fn fork(&mut self, chat_id: &str, index: i64, global: bool) -> Result<Reply> {
        let store = self.store(global)?;
        let source = self.load(&store, chat_id)?;
        let index = user_message_index(&source, index, "fork")?;
        let restored = history::restore(
            &source,
            index,
            store.fs(),
            &store.context_dir(&source.id)?,
            self.root.as_deref(),
        )?;
        let fork_text = message_text(&source.messages[index]);
        let name = if source.name.starts_with("Fork of ") {
            source.name.clone()
        } else {
            format!("Fork of {}", source.name)
        };
        let mut chat = Chat::new(String::new(), name, source.model.clone(), store.is_global());
        chat.reasoning_effort = source.reasoning_effort.clone();
        chat.draft = fork_text.clone();
        chat.messages = source.messages[..index].to_vec();
        let chat = store.create(chat)?;
        let context_dir = store.context_dir(&chat.id)?;
        let mut active = self.open(store, chat)?;
        for (file, content) in &restored.files {
            crate::atomic::write_in(
                active.store.fs(),
                &crate::active::storage_path(&context_dir, file)?,
                content.as_bytes(),
            )?;
            active.chat.context_files.push(file.clone());
        }
        if let Some(message) = restored.warning_message() {
            active.chat.messages.push(message);
        }
        active.save()?;
        let new_id = active.chat.id.clone();
        self.activate(active)?;
        Ok(Reply::typed("fork_result")
            .with("new_chat_id", new_id)
            .with("fork_message_content", fork_text)
            .with("context_warnings", restored.warnings))
    }

    fn prepare_instructions(&self, level: &str) -> Result<PathBuf> {
        let (path, template) = match level {
            "project" => {
                self.project_store()?;
                let root = self.root.as_ref().ok_or(Error::NotInitialized)?;
                (
                    instructions::project_file(root),
                    instructions::PROJECT_TEMPLATE,
                )
            }
            "global" => (
                self.home.global_instructions_path(),
                instructions::GLOBAL_TEMPLATE,
            ),
            "system" => (
                self.home.system_prompt_path(),
                instructions::SYSTEM_TEMPLATE,
            ),
            _ => {
                return Err(Error::Invalid(
                    "Invalid level: must be project, global, or system".into(),
                ));
            }
        };
        // The project file lives in `.bb7/`: neither it nor `.bb7` may be a link.
        let fs = match (level, self.root.as_deref()) {
            ("project", Some(root)) => crate::confined::Confined::new(root),
            _ => crate::confined::Confined::new(path.parent().unwrap_or(Path::new("/"))),
        };
        match fs.kind(&path) {
            Ok(None) => crate::atomic::write_in(&fs, &path, template.as_bytes())?,
            Ok(Some(crate::confined::Kind::File)) => {}
            Ok(Some(_)) => {
                return Err(Error::Instructions(format!(
                    "{} is not a regular file; bb7 does not follow links or read special files there",
                    path.display()
                )));
            }
            Err(err) => return Err(Error::io("inspect", &path)(err)),
        }
        Ok(path)
    }

    fn customization_info(&self) -> Reply {
        let global_chat = self
            .active
            .as_ref()
            .is_some_and(|active| active.chat.global);
        let root = if self.project && !global_chat {
            self.root.as_deref()
        } else {
            None
        };
        let info = instructions::info(&self.home.global_instructions_path(), root);
        Reply::typed("customization_info")
            .with("system_override", self.home.system_prompt_path().is_file())
            .with("global_instructions", info.global_exists)
            .with(
                "project_instructions",
                info.project_exists && info.project_error.is_empty(),
            )
            .with("project_instructions_error", info.project_error)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release_active();
    }
}

/// A required string field: empty counts as missing.
fn required(field: &'static str, value: &str) -> Result<String> {
    if value.is_empty() {
        Err(Error::MissingField(field))
    } else {
        Ok(value.to_owned())
    }
}

fn existing_dir(path: &str) -> Result<PathBuf> {
    let path = Path::new(path);
    match path.canonicalize() {
        Ok(real) if real.is_dir() => Ok(real),
        _ => Err(Error::Invalid("project_root must be a directory".into())),
    }
}

fn default_name() -> String {
    format!("Chat {}", chrono::Utc::now().format("%Y-%m-%d %H:%M"))
}

fn user_message_index(chat: &Chat, index: i64, verb: &str) -> Result<usize> {
    let index = usize::try_from(index)
        .ok()
        .filter(|index| *index < chat.messages.len())
        .ok_or_else(|| Error::Invalid(format!("Message index {index} out of range")))?;
    if chat.messages[index].role != Role::User {
        return Err(Error::Invalid(format!("Can only {verb} user messages")));
    }
    Ok(index)
}

/// Parses a chat for searching without migrating it on disk (search must not write).
fn read_for_search(store: &ChatStore, id: &str) -> Option<Chat> {
    let text = store
        .fs()
        .read_to_string(&store.chat_dir(id).ok()?.join("chat.json"))
        .ok()?;
    let mut chat: Chat = serde_json::from_str(&text).ok()?;
    chat.id = id.to_owned();
    chat.migrate();
    Some(chat)
}

/// Moves a directory, across file systems if need be.
fn move_dir(from: &Path, to: &Path) -> Result<()> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    copy_dir(from, to)?;
    std::fs::remove_dir_all(from).map_err(Error::io("remove", from))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(Error::io("create directory", to))?;
    for entry in std::fs::read_dir(from)
        .map_err(Error::io("list", from))?
        .flatten()
    {
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(Error::io("inspect", entry.path()))?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(Error::io("copy", entry.path()))?;
        }
    }
    Ok(())
}

/// Appends a user message recording the model and the current context snapshot, as the
/// sending half does before a request (also used by tests to build histories).
pub fn push_user_message(active: &mut Active, text: &str, model: &str) {
    let snapshot = active
        .chat
        .context_files
        .iter()
        .map(|file| file.snapshot_entry())
        .collect();
    let mut message = Message::new(Role::User, vec![Part::text(text)])
        .with_model(model)
        .with_timestamp(now());
    message.context_snapshot = Some(snapshot);
    active.chat.messages.push(message);
}
