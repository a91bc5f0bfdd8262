//! Finishing or undoing a send's commit that was cut short (see [`crate::store::commit`] for
//! the steps): a commit past its commit point (`chats/{id}/.commit/`) is applied (rolled
//! forward), staging directories of commits that never reached it (`chats/{id}/.send-*`) are
//! removed (rolled back). Every step can be repeated, so a second cut changes nothing.
//!
//! Everything happens beneath the chat directory through [`Confined`]: a link on the way into
//! `output/` is the spec's fatal escape, never followed.

use std::path::Path;

use crate::store::error::{Error, Result};
use crate::store::paths::escape_or_io;
use ybs_fsguard::confined::Confined;

/// Prefix of staging directories (inside the chat directory, never inside `output/`).
pub const STAGING_PREFIX: &str = ".send-";
/// The committed, not yet applied, commit.
pub const COMMITTED: &str = ".commit";
/// The file in a staged commit naming the chat directory it was staged in (see [`stamp`]).
pub const STAMP: &str = "stamp";

/// The device and inode of `chat_dir`, written into every commit the daemon stages. A
/// `.commit/` a repository ships cannot carry it (a clone's directories get new inodes), so
/// recovery never rolls forward a commit this daemon did not stage in this very directory.
pub fn stamp(fs: &Confined, chat_dir: &Path) -> Result<String> {
    let (dev, ino) = fs
        .identity(chat_dir)
        .map_err(Error::io("inspect", chat_dir))?;
    Ok(format!("{dev}:{ino}\n"))
}

/// Brings the chat directory `chat_dir` to a consistent state: a commit past its commit point
/// is applied, staging directories of commits that never reached it are removed. Only call it
/// when no other live process holds the chat.
pub fn recover(fs: &Confined, chat_dir: &Path) -> Result<()> {
    let id = chat_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let entries = match fs.list(chat_dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(Error::io("list", chat_dir)(err)),
    };
    for (name, _) in &entries {
        if name.starts_with(STAGING_PREFIX) {
            tracing::warn!(chat = %id, staging = %name, "removing a send that was cut short before its commit");
            let path = chat_dir.join(name);
            fs.remove_all(&path).map_err(Error::io("remove", &path))?;
        }
    }
    if entries.iter().any(|(name, _)| name == COMMITTED) {
        let committed = chat_dir.join(COMMITTED);
        let staged_here = fs
            .read_to_string(&committed.join(STAMP))
            .is_ok_and(|found| stamp(fs, chat_dir).is_ok_and(|expected| found == expected));
        if !staged_here {
            tracing::warn!(chat = %id, "discarding a .commit/ this daemon did not stage (shipped or copied)");
            fs.remove_all(&committed)
                .map_err(Error::io("remove", &committed))?;
            return Ok(());
        }
        tracing::warn!(chat = %id, "finishing a send that was cut short after its commit");
        let root = fs.anchor().to_path_buf();
        if let Err(err) = roll_forward(fs, &root, chat_dir, &chat_dir.join("output")) {
            // A link planted in output/ since: what is left is dropped, never written
            // through (the link also makes the chat suspect, see crate::store::trust).
            tracing::error!(chat = %id, error = %err, "abandoning the rest of a commit");
            let committed = chat_dir.join(COMMITTED);
            fs.remove_all(&committed)
                .map_err(Error::io("remove", &committed))?;
        }
    }
    Ok(())
}

/// Moves everything in `.commit/` into place and removes it.
pub fn roll_forward(fs: &Confined, root: &Path, chat_dir: &Path, output_dir: &Path) -> Result<()> {
    let committed = chat_dir.join(COMMITTED);
    let staged_outputs = committed.join("output");
    let mut odd = Vec::new();
    let files = fs
        .walk_files(&staged_outputs, &mut odd)
        .map_err(Error::io("list", &staged_outputs))?;
    // Past the commit point only a link (the fatal escape) stops this; a file that cannot
    // be moved (something appeared in its way since the checks) is logged and left out, so
    // a chat is never wedged by a half-applied commit.
    for relative in files {
        let from = staged_outputs.join(&relative);
        let to = output_dir.join(&relative);
        if let Err(err) = fs.rename(&from, &to) {
            match escape_or_io(root, &to, err) {
                fatal @ Error::ProjectEscape { .. } => return Err(fatal),
                err => {
                    tracing::error!(error = %err, "a committed output could not be moved into place")
                }
            }
        }
    }
    let chat_json = committed.join("chat.json");
    match fs.rename(&chat_json, &chat_dir.join("chat.json")) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => {
            tracing::error!(error = %err, "the committed chat.json could not be moved into place")
        }
    }
    if let Err(err) = fs.remove_all(&committed) {
        tracing::error!(error = %err, "could not remove {}", committed.display());
    }
    Ok(())
}
