//! The per-chat PID lock: `chats/{id}/lock` holds the PID of the process that has the chat
//! open. A lock whose process is dead (or whose content is not a PID) is stale and removed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The lock file of a chat directory.
pub fn lock_path(chat_dir: &Path) -> PathBuf {
    chat_dir.join("lock")
}

/// The PID of another live process holding the chat, if any. Stale locks are removed.
pub fn held_by_other(chat_dir: &Path) -> Option<u32> {
    let path = lock_path(chat_dir);
    let text = std::fs::read_to_string(&path).ok()?;
    let Ok(pid) = text.trim().parse::<u32>() else {
        let _ = std::fs::remove_file(&path);
        return None;
    };
    if pid == std::process::id() {
        return None;
    }
    if is_alive(pid) {
        Some(pid)
    } else {
        let _ = std::fs::remove_file(&path);
        None
    }
}

/// Takes the lock for this process, or fails with [`Error::ChatLocked`].
pub fn acquire(chat_dir: &Path) -> Result<()> {
    if let Some(pid) = held_by_other(chat_dir) {
        return Err(Error::ChatLocked { pid });
    }
    crate::atomic::write(
        &lock_path(chat_dir),
        std::process::id().to_string().as_bytes(),
    )
}

/// Releases the lock if this process holds it.
pub fn release(chat_dir: &Path) {
    let path = lock_path(chat_dir);
    if let Ok(text) = std::fs::read_to_string(&path) {
        if text.trim() == std::process::id().to_string() {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Removes the lock whoever holds it.
pub fn force_unlock(chat_dir: &Path) -> Result<()> {
    let path = lock_path(chat_dir);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io("remove", path)(err)),
    }
}

fn is_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    let Some(pid) = rustix::process::Pid::from_raw(raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // The process exists but belongs to someone else.
        Err(err) => err == rustix::io::Errno::PERM,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn dead_and_garbage_locks_are_stale() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(lock_path(dir.path()), "not a pid").unwrap();
        assert_eq!(held_by_other(dir.path()), None);
        assert!(!lock_path(dir.path()).exists());
        // PID 1 is alive (init) and is not us.
        std::fs::write(lock_path(dir.path()), "1").unwrap();
        assert_eq!(held_by_other(dir.path()), Some(1));
        assert_eq!(
            acquire(dir.path()).unwrap_err().to_string(),
            "Chat is locked by another bb7 process (PID 1). Close it there or use chat_force_unlock"
        );
        force_unlock(dir.path()).unwrap();
        acquire(dir.path()).unwrap();
        assert_eq!(
            held_by_other(dir.path()),
            None,
            "our own lock does not block us"
        );
        release(dir.path());
        assert!(!lock_path(dir.path()).exists());
    }
}
