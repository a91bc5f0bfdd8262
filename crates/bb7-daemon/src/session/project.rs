//! Opening a project: `bb7_init` (creates `.bb7/`) and `init` (a project with `.bb7/`, or
//! global-only mode for an empty `project_root`), which reopens the chat the project had
//! selected last. Neither accepts the home directory: `~/.bb7` is the global store.

use std::path::{Path, PathBuf};

use super::{Session, required};
use crate::store::global::Config;
use crate::wire::error::{Error, Result};
use crate::wire::replies::Opened;
use ybs_fsguard::confined::Confined;

/// `.bb7/.gitignore`, written by `bb7_init`: everything bb7 keeps stays out of git.
const BB7_GITIGNORE: &str = "# bb7's chats, context snapshots and outputs stay out of git.\n*\n";

impl Session {
    /// `bb7_init`: creates `.bb7/chats` in `project_root` (refused in the home directory and
    /// where anything named `.bb7` exists).
    pub(crate) fn bb7_init(&mut self, project_root: &str) -> Result<()> {
        let root = existing_dir(&required("project_root", project_root)?)?;
        self.refuse_home(&root)?;
        let bb7 = root.join(".bb7");
        // Anything there counts, a dangling link too (creating through it would write
        // wherever it points).
        if bb7.symlink_metadata().is_ok() {
            return Err(Error::AlreadyInitialized);
        }
        let chats = bb7.join("chats");
        let fs = Confined::new(&root);
        fs.create_dir_all(&chats)
            .map_err(Error::io("create directory", &chats))?;
        // Chats hold snapshots of private files (`.env`, external credentials): `git add -A`
        // must not commit them.
        let ignore = bb7.join(".gitignore");
        fs.write(&ignore, BB7_GITIGNORE.as_bytes())
            .map_err(Error::io("write", &ignore))?;
        Ok(())
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
    pub(crate) fn init(&mut self, project_root: &str) -> Result<Opened> {
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
            self.allow_includes(Vec::new());
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
        let default_model = Config::load(&self.home)
            .ok()
            .flatten()
            .and_then(|config| config.explicit_default_model().map(str::to_owned));
        Ok(Opened {
            global_only: !self.project,
            default_model,
        })
    }
}

fn existing_dir(path: &str) -> Result<PathBuf> {
    let path = Path::new(path);
    match path.canonicalize() {
        Ok(real) if real.is_dir() => Ok(real),
        _ => Err(Error::Invalid("project_root must be a directory".into())),
    }
}
