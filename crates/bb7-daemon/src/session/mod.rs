//! The session: the state machine of the spec and the handler of every action that does not
//! call a model.
//!
//! States: not initialized (no `init` yet) -> initialized without chats -> chats but none
//! active -> chat active. Actions before `init` fail with `Not initialized`; actions that
//! need a chat without one fail with `No active chat`; `bb7_init` on an initialized
//! directory fails with `Already initialized`. `init` on a directory without `.bb7/` fails
//! with `Not initialized. Run :BB7Init`; `init` with an empty `project_root` is global-only
//! mode (`global_only: true`): chat actions then address the global chats under
//! `~/.bb7/chats`. Neither `init` nor `bb7_init` accepts the home directory.
//!
//! The handlers live by domain: chat lifecycle in [`chats`](self::chats), history rewrites
//! (`chat_edit`, `fork_chat`, `message_delete`) in [`rewind`](self::rewind), the chat and
//! customization views in [`info`](self::info).

mod chats;
pub mod context;
pub mod files;
pub mod history;
mod info;
mod rewind;
#[cfg(test)]
pub(crate) mod test_support;

use std::path::{Path, PathBuf};

use ybs_core::{Message, Part, Role};

use crate::protocol::error::{Error, Result};
use crate::protocol::{Reply, Request};
use crate::store::active::Active;
use crate::store::chats::ChatStore;
use crate::store::global::{Config, GlobalState, Home};
use crate::store::lock;
use crate::store::model::{Chat, now};

/// How long a fetched models list is used before it is fetched again.
pub const MODELS_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

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
    /// The models list and when it was fetched (refreshed after [`MODELS_MAX_AGE`]).
    models: Option<(std::time::Instant, Vec<ybs_providers::ModelInfo>)>,
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

    /// The cached models list, however old.
    pub fn models(&self) -> Option<&[ybs_providers::ModelInfo]> {
        self.models.as_ref().map(|(_, models)| models.as_slice())
    }

    /// The cached models list when it is younger than [`MODELS_MAX_AGE`].
    pub fn fresh_models(&self) -> Option<&[ybs_providers::ModelInfo]> {
        self.models
            .as_ref()
            .filter(|(fetched, _)| fetched.elapsed() < MODELS_MAX_AGE)
            .map(|(_, models)| models.as_slice())
    }

    /// Caches the models list.
    pub fn set_models(&mut self, models: Vec<ybs_providers::ModelInfo>) {
        self.models = Some((std::time::Instant::now(), models));
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
                self.chat_move(&required("id", &id)?, &to)?;
                Reply::ok()
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
            R::MessageDelete { chat_id, index } => {
                self.message_delete(&chat_id, index)?;
                Reply::ok()
            }
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
                let text = message.or(content).unwrap_or_default();
                let active = self.active_chat()?;
                if text.is_empty() {
                    return Err(Error::MissingField("message"));
                }
                // As the first bb7: blank text is accepted and adds nothing.
                if text.trim().is_empty() {
                    return Ok(Some(Reply::ok()));
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
                let path = required("path", path.as_deref().unwrap_or_default())?;
                self.active_chat()?.sync_one(&path)?;
                Reply::ok()
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
        self.require_init()?;
        if !self.project {
            return Err(Error::NotBb7Project);
        }
        self.store(false)
    }

    fn bb7_init(&mut self, project_root: &str) -> Result<Reply> {
        let root = existing_dir(&required("project_root", project_root)?)?;
        self.refuse_home(&root)?;
        let bb7 = root.join(".bb7");
        // Anything there counts, a dangling link too (creating through it would write
        // wherever it points).
        if bb7.symlink_metadata().is_ok() {
            return Err(Error::AlreadyInitialized);
        }
        let chats = bb7.join("chats");
        crate::store::confined::Confined::new(&root)
            .create_dir_all(&chats)
            .map_err(Error::io("create directory", &chats))?;
        Ok(Reply::ok())
    }

    /// `~/.bb7` is the global store: the home directory never becomes a project.
    fn refuse_home(&self, root: &Path) -> Result<()> {
        let home = self
            .home
            .home
            .canonicalize()
            .unwrap_or_else(|_| self.home.home.clone());
        if root == home {
            return Err(Error::Invalid(
                "cannot initialize BB-7 in home directory (conflicts with global data)".into(),
            ));
        }
        Ok(())
    }

    /// Whether the session is already initialized on `project_root` (the same directory once
    /// canonicalized): a repeated `init` then keeps the active chat, so the UI may reopen
    /// while a stream runs.
    pub fn initialized_at(&self, project_root: &str) -> bool {
        if !self.initialized {
            return false;
        }
        if project_root.is_empty() {
            return !self.project;
        }
        existing_dir(project_root).is_ok_and(|root| self.root.as_ref() == Some(&root))
    }

    /// `init`: an empty `project_root` is global-only mode (chats under `~/.bb7/chats`);
    /// otherwise the directory must have `.bb7/` (`Not initialized. Run :BB7Init`) and must
    /// not be the home directory.
    fn init(&mut self, project_root: &str) -> Result<Reply> {
        let root = if project_root.is_empty() {
            None
        } else {
            let root = existing_dir(project_root)?;
            self.refuse_home(&root)?;
            if !root.join(".bb7").is_dir() {
                return Err(Error::NotBb7Project);
            }
            Some(root)
        };
        let same_root = self.initialized && self.root == root;
        if !same_root {
            self.release_active();
        }
        self.project = root.is_some();
        self.root = root;
        self.initialized = true;
        if !self.project {
            let dir = self.home.global_chats_dir();
            std::fs::create_dir_all(&dir).map_err(Error::io("create directory", &dir))?;
        }
        // The UI reopening on the same project keeps the active chat (a stream may be using
        // it); otherwise reopen, best effort, the chat this project had selected last (a
        // global one when the index says so).
        if self.active.is_none() {
            let store = self.store(false)?;
            if let Some((id, global)) = store.remembered_active() {
                let global = global || !self.project;
                let distrust = self
                    .store(global)
                    .ok()
                    .and_then(|chats| self.distrust(&chats, &id));
                if let Some(why) = distrust {
                    tracing::warn!(chat = %id, reason = %why, "not restoring the last active chat");
                } else if let Err(err) = self.chat_select(&id, global) {
                    tracing::info!(chat = %id, error = %err, "could not restore the last active chat");
                    // A chat another daemon holds stays remembered: it still exists.
                    if !matches!(err, Error::ChatLocked { .. }) {
                        let _ = store.remember_active("", false);
                    }
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
        active.store.remember_active(&active.chat.id, false)?;
        if active.store.is_global() && self.project {
            // The project remembers a selected global chat too, so reopening restores it.
            self.store(false)?.remember_active(&active.chat.id, true)?;
        }
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
        let chat = store.peek(id)?;
        crate::store::trust::audit(store, &chat, self.root.as_deref())
    }

    fn open(&self, store: ChatStore, chat: Chat) -> Result<Active> {
        lock::acquire(store.fs(), &store.chat_dir(&chat.id)?)?;
        Ok(Active {
            chat,
            store,
            root: self.root.clone(),
        })
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

/// Appends a user message recording the model and the current context snapshot, as the
/// sending half does before a request (also used by tests to build histories).
pub fn push_user_message(active: &mut Active, text: &str, model: &str) {
    let snapshot: Vec<_> = active
        .chat
        .context_files
        .iter()
        .map(|file| file.snapshot_entry())
        .collect();
    let mut message = Message::new(Role::User, vec![Part::text(text)])
        .with_model(model)
        .with_timestamp(now());
    // An empty snapshot is left out of chat.json, as the first bb7 leaves it out (restoring
    // reads a missing and an empty one alike).
    message.context_snapshot = (!snapshot.is_empty()).then_some(snapshot);
    active.chat.messages.push(message);
}
