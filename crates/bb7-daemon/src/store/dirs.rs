//! Moving a chat directory between stores (the project's `.bb7/chats` and the global
//! `~/.bb7/chats`), through confined I/O on both sides: no link is followed in either store,
//! so a repository shipping `.bb7` or `.bb7/chats` as a link cannot make a move write into
//! its work tree.
//!
//! A move is all or nothing. On one file system it is a single rename. Across file systems
//! the tree is copied into a temporary directory of the target store (ignored by listings,
//! cleared by the next attempt), the source is marked with [`MOVED_MARKER`], and only then
//! is the copy renamed into place and the source removed. A move killed before the rename
//! leaves the chat where it was; one killed after it leaves a marked source that the next
//! `chat_move` finishes instead of refusing.

use std::io;
use std::path::Path;

use crate::store::lock;
use ybs_fsguard::confined::{Confined, Kind, TEMP_PREFIX};

/// A file in a source chat directory whose complete copy is already in the target store.
pub const MOVED_MARKER: &str = ".bb7-moved";

/// Moves the directory `from` (below `source`'s anchor) to `to` (below `target`'s), which must
/// not exist. Links and special files inside are not copied.
pub fn move_dir(source: &Confined, from: &Path, target: &Confined, to: &Path) -> io::Result<()> {
    match source.rename_into(from, target, to) {
        Err(err) if err.kind() == io::ErrorKind::CrossesDevices => {}
        other => return other,
    }
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let staging = to.with_file_name(format!("{TEMP_PREFIX}move-{name}"));
    target.remove_all(&staging)?;
    copy_tree(source, from, target, &staging)?;
    source.write_new(&from.join(MOVED_MARKER), b"")?;
    target.rename(&staging, to)?;
    source.remove_all(from)
}

/// Whether `from` holds the marker of a move that got as far as the target.
pub fn half_moved(source: &Confined, from: &Path) -> bool {
    source.is_file(&from.join(MOVED_MARKER))
}

fn copy_tree(source: &Confined, from: &Path, target: &Confined, to: &Path) -> io::Result<()> {
    target.create_dir_all(to)?;
    let lock_name = lock::lock_path(from);
    for (name, kind) in source.list(from)? {
        let (path, copy) = (from.join(&name), to.join(&name));
        match kind {
            Kind::Dir => copy_tree(source, &path, target, &copy)?,
            Kind::File if name == MOVED_MARKER || path == lock_name => {}
            Kind::File => target.write(&copy, &source.read(&path)?)?,
            Kind::Symlink | Kind::Other => {}
        }
    }
    Ok(())
}
