//! The active chat: the loaded `chat.json`, the store it lives in and the project root, with
//! the storage layout of its snapshots and outputs. Context operations are in
//! [`crate::session::context`], output and status operations in [`crate::session::files`].

use std::path::{Path, PathBuf};

use crate::store::chats::ChatStore;
use crate::store::error::{Error, Result};
use crate::store::events::Event;
use crate::store::model::{Chat, ContextFile};
use crate::store::paths;

/// A chat selected in this session.
#[derive(Debug, Clone)]
pub struct Active {
    /// The chat as loaded (and changed since).
    pub chat: Chat,
    /// Where it is stored.
    pub store: ChatStore,
    /// The project root (the directory given to `init`), if any.
    pub root: Option<PathBuf>,
}

impl Active {
    /// `chats/{id}/context`.
    pub fn context_dir(&self) -> Result<PathBuf> {
        self.store.context_dir(&self.chat.id)
    }

    /// `chats/{id}/output`.
    pub fn output_dir(&self) -> Result<PathBuf> {
        self.store.output_dir(&self.chat.id)
    }

    /// Where the snapshot of `file` is stored.
    pub fn storage_path(&self, file: &ContextFile) -> Result<PathBuf> {
        storage_path(&self.context_dir()?, file)
    }

    /// The snapshot content of `file`.
    pub fn read_snapshot(&self, file: &ContextFile) -> Result<String> {
        let path = self.storage_path(file)?;
        self.store
            .fs()
            .read_to_string(&path)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound => Error::FileNotFound,
                _ => Error::io("read", &path)(err),
            })
    }

    /// Saves the chat.
    pub fn save(&self) -> Result<()> {
        self.store.save(&self.chat)
    }

    /// Appends a context event to the history (not saved yet).
    pub fn record(&mut self, event: Event) {
        self.chat.messages.push(event.into_message());
    }

    /// The project root, or [`Error::NotInitialized`] when there is none.
    pub fn require_root(&self) -> Result<&Path> {
        self.root.as_deref().ok_or(Error::NotInitialized)
    }

    /// Finds a context entry by path as the client names it: exact first, then (for an
    /// absolute path inside the project) by its project-relative form.
    pub fn lookup_path(&self, path: &str) -> String {
        if self.chat.context_files.iter().any(|file| file.path == path) {
            return path.to_owned();
        }
        if let Some(root) = &self.root {
            // Resolved as `context_add` places it: a relative path through a link that
            // leaves the project is known under its absolute form.
            if let Ok(placed) = paths::place_in_project(root, path) {
                return placed.path;
            }
        }
        path.to_owned()
    }
}

/// Where the snapshot of `file` is stored under `context_dir`: `_sections/{hash}` for
/// sections, `_external/{hash}` for external files, the relative path otherwise.
pub fn storage_path(context_dir: &Path, file: &ContextFile) -> Result<PathBuf> {
    if let Some((start, end)) = file.section() {
        return Ok(context_dir
            .join("_sections")
            .join(paths::section_storage_name(&file.path, start, end)));
    }
    if file.external || Path::new(&file.path).is_absolute() {
        return Ok(context_dir
            .join("_external")
            .join(paths::external_storage_name(&file.path)));
    }
    paths::join(context_dir, &file.path)
}

/// The file id of a snapshot: over the path for whole files, over `path:start:end` for sections.
pub fn version_of(file: &ContextFile, content: &str) -> String {
    match file.section() {
        Some((start, end)) => {
            ybs_core::file_id(&paths::section_key(&file.path, start, end), content)
        }
        None => ybs_core::file_id(&file.path, content),
    }
}

/// Line endings normalised, for "same content" comparisons.
pub fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}
