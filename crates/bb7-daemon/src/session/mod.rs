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
//! This module holds the [`Session`] and what every handler needs (the store addressed, the
//! active chat, opening and activating a chat). The handlers live by domain, each file an
//! `impl Session` block: `init` and `bb7_init` in `project`, chat lifecycle (new, select,
//! delete, rename, move, search, unlock) in `chats`, history rewrites (`chat_edit`,
//! `fork_chat`, `message_delete`) in `rewind`, the draft, settings and system messages in
//! `messages`, the chat and customization views in `info`. The operations on the active
//! chat's files are [`context`] (snapshots) and [`files`] (outputs, statuses, applying);
//! [`history`] restores a message's context and searches chats. Which request calls which
//! handler is [`crate::server::dispatch`].

mod chats;
pub mod context;
pub mod file_status;
pub mod files;
pub mod history;
mod info;
mod messages;
mod project;
mod rewind;
#[cfg(test)]
pub(crate) mod test_support;

use std::path::{Path, PathBuf};

use ybs_core::{Message, Part, Role};

use crate::store::active::Active;
use crate::store::chats::ChatStore;
use crate::store::consent::IncludeConsent;
use crate::store::global::Home;
use crate::store::lock;
use crate::store::model::{Chat, now};
use crate::wire::error::{Error, Result};
use crate::wire::params::ConsentEntry;

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
    /// The `@include`s git does not vouch for that the user allowed (`allow_includes`), each
    /// bound to what it sent when allowed; forgotten at `init`.
    allowed_includes: Vec<IncludeConsent>,
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
            allowed_includes: Vec::new(),
        }
    }

    /// The includes the user allowed although git does not vouch for them.
    pub fn allowed_includes(&self) -> &[IncludeConsent] {
        &self.allowed_includes
    }

    /// `allow_includes`: the includes the user allowed, replacing those allowed before. An
    /// entry with a digest is kept as it is; a bare name is bound to what that include sends
    /// now (an include that cannot be read now is not allowed).
    pub fn allow_includes(&mut self, entries: Vec<ConsentEntry>) {
        let needs_current = entries
            .iter()
            .any(|entry| matches!(entry, ConsentEntry::Name(_)));
        let current = match self.project_root() {
            Some(root) if needs_current => {
                crate::store::instructions::info(
                    &self.home.global_instructions_path(),
                    Some(root),
                    &[],
                )
                .project_includes
            }
            _ => Vec::new(),
        };
        self.allowed_includes = entries
            .into_iter()
            .filter_map(|entry| match entry {
                ConsentEntry::Bound { path, digest } => Some(IncludeConsent { path, digest }),
                ConsentEntry::Name(path) => current
                    .iter()
                    .find(|included| included.path == path)
                    .and_then(|included| included.digest.clone())
                    .map(|digest| IncludeConsent { path, digest }),
            })
            .collect();
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
        match self.store(false).and_then(|store| Ok(store.ids()?)) {
            Ok(ids) if !ids.is_empty() => State::NoneActive,
            _ => State::NoChats,
        }
    }

    pub(crate) fn require_init(&self) -> Result<()> {
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

    /// Lets go of the active chat (its lock released), e.g. before `shutdown`.
    pub(crate) fn release_active(&mut self) {
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
            _ => Ok(store.load(id)?),
        }
    }
}

/// A required string field: empty counts as missing.
pub(crate) fn required(field: &'static str, value: &str) -> Result<String> {
    if value.is_empty() {
        Err(Error::MissingField(field))
    } else {
        Ok(value.to_owned())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release_active();
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
