//! Whether a chat found on disk may be used as the user's own. A `.bb7/` can arrive with a
//! `git clone`, so a chat is suspect when its directory holds a symbolic link or a special
//! file anywhere (its `context/` linked to the user's home, say), or when its `chat.json`
//! names a project context file that resolves outside the project (through an in-project
//! link, an absolute path or `..`). `init` does not select such a chat, `chat_get` reports
//! why in `untrusted`, and `send` refuses it.
//!
//! External context entries are not suspect by themselves: their content is the snapshot in
//! `context/_external/` (checked by the walk above); the daemon never reads the original.
//! One that names something other than a regular file (`/dev/tty`, a FIFO) is suspect in a
//! project chat: a client re-reading it would block.

use std::path::Path;

use crate::store::active::Active;
use crate::store::chats::ChatStore;
use crate::store::error::{Error, Result};
use crate::store::model::Chat;
use crate::store::paths;

/// Why `chat` (stored in `store`, of the project at `root`) is not to be trusted, if it is not.
pub fn audit(store: &ChatStore, chat: &Chat, root: Option<&Path>) -> Option<String> {
    let dir = match store.chat_dir(&chat.id) {
        Ok(dir) => dir,
        Err(err) => return Some(err.to_string()),
    };
    let mut odd = Vec::new();
    if let Err(err) = store.fs().walk_files(&dir, &mut odd) {
        return Some(format!("its directory cannot be read safely: {err}"));
    }
    if let Some(first) = odd.first() {
        return Some(format!(
            "its directory contains a symbolic link or special file ({first}), which bb7 never creates"
        ));
    }
    if chat.global {
        return None;
    }
    // A shipped chat naming `/dev/tty` or a FIFO as an external file would make a client
    // that re-reads it hang; `stat` alone tells, without opening anything.
    for file in chat.context_files.iter().filter(|file| file.external) {
        if std::fs::metadata(&file.path).is_ok_and(|meta| !meta.is_file()) {
            return Some(format!(
                "its chat.json names an external context file that is not a regular file ({})",
                file.path
            ));
        }
    }
    let root = root?;
    for file in chat.context_files.iter().filter(|file| !file.external) {
        match paths::place_in_project(root, &file.path) {
            Ok(placed) if !placed.external => {}
            _ => {
                return Some(format!(
                    "its chat.json names a project file outside the project ({})",
                    file.path
                ));
            }
        }
    }
    None
}

/// [`audit`] of the active chat as the error that stops a send.
pub fn require_trusted(active: &Active) -> Result<()> {
    match audit(&active.store, &active.chat, active.root.as_deref()) {
        None => Ok(()),
        Some(why) => Err(Error::Invalid(format!(
            "Chat not sent: {why}. It may come from a cloned repository; inspect {} and remove what does not belong, or delete the chat.",
            active
                .store
                .chat_dir(&active.chat.id)
                .map(|dir| dir.display().to_string())
                .unwrap_or_default()
        ))),
    }
}
