//! The per-chat lock: `chats/{id}/lock`. A daemon holds it with an exclusive `flock` for as
//! long as the chat is selected (the kernel drops it when the process dies, so a crash never
//! leaves a lock that blocks) and writes its PID into it, which is what the first bb7 (a plain
//! PID file) checks and what the "locked by" error names. Taking the lock is race-free: the
//! `flock` decides between two daemons, and after taking it the name is re-checked to still
//! be the file held (a concurrent release may have unlinked it). A PID file left by a live
//! process that does not `flock` (the first bb7) also counts as held.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::FlockOperation;

use crate::store::error::{Error, Result};
use ybs_fsguard::ConfinedDir;
use ybs_fsguard::confined::Confined;

/// Locks this process holds: chat directory and the open, `flock`ed lock file.
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// How often taking a lock starts over when it lost a race with a release.
const ATTEMPTS: usize = 16;

/// The lock file of a chat directory.
pub fn lock_path(chat_dir: &Path) -> PathBuf {
    chat_dir.join("lock")
}

/// Whether this process holds the lock of `chat_dir`. A lock we took but whose file was
/// removed since (`chat_force_unlock` in another daemon) is forgotten: we lost it.
fn holds(fs: &Confined, chat_dir: &Path) -> bool {
    let Ok(mut held) = HELD.lock() else {
        return false;
    };
    let Some(position) = held.iter().position(|(dir, _)| dir == chat_dir) else {
        return false;
    };
    let current = fs.identity(&lock_path(chat_dir)).ok();
    if current.is_some() && current == identity(&held[position].1) {
        return true;
    }
    held.remove(position);
    false
}

fn identity(file: &File) -> Option<(u64, u64)> {
    let stat = rustix::fs::fstat(file).ok()?;
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    Some((stat.st_dev as u64, stat.st_ino as u64))
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The PID of another live process holding the chat, if any.
pub fn held_by_other(fs: &Confined, chat_dir: &Path) -> Option<u32> {
    if holds(fs, chat_dir) {
        return None;
    }
    let text = fs.read_to_string(&lock_path(chat_dir)).ok()?;
    let pid = text.trim().parse::<u32>().ok()?;
    (pid != std::process::id() && is_alive(pid)).then_some(pid)
}

/// [`held_by_other`] for the chat `id` of the chats directory `chats` (open), whose path is
/// `chat_dir`, so that scanning many chats does not walk from the anchor for each.
pub fn held_by_other_in(
    fs: &Confined,
    chats: &ConfinedDir,
    id: &str,
    chat_dir: &Path,
) -> Option<u32> {
    if holds(fs, chat_dir) {
        return None;
    }
    let text = chats.read_small_below(id, "lock", 64)?;
    let pid = text.trim().parse::<u32>().ok()?;
    (pid != std::process::id() && is_alive(pid)).then_some(pid)
}

/// Takes the lock for this process, or fails with [`Error::ChatLocked`].
pub fn acquire(fs: &Confined, chat_dir: &Path) -> Result<()> {
    if holds(fs, chat_dir) {
        return Ok(());
    }
    let path = lock_path(chat_dir);
    for _ in 0..ATTEMPTS {
        let mut file = fs.open_rw(&path).map_err(Error::io("open", &path))?;
        match rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => match read_pid(&mut file) {
                Some(pid) => return Err(Error::ChatLocked { pid }),
                // The holder has not written its PID yet.
                None => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                }
            },
            Err(err) => return Err(Error::io("lock", &path)(err.into())),
        }
        let ours = identity(&file);
        if ours.is_none() || fs.identity(&path).ok() != ours {
            // Released (unlinked) between our open and our flock: start over.
            continue;
        }
        if let Some(pid) = read_pid(&mut file) {
            if pid != std::process::id() && is_alive(pid) {
                return Err(Error::ChatLocked { pid });
            }
        }
        // Not fsynced: the PID only means something while this process lives, and a power
        // loss ends it, so a PID lost with the page cache would name a dead process anyway
        // (a lock whose process is gone is stale either way; the `flock` is what excludes).
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()));
        written.map_err(Error::io("write", &path))?;
        if let Ok(mut held) = HELD.lock() {
            held.push((chat_dir.to_path_buf(), file));
        }
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "Could not take the chat lock {} (it kept changing); try again",
        path.display()
    )))
}

/// Runs `change` holding the chat's lock: taken for it (and released after) unless this
/// process holds it already. Another live holder makes it [`Error::ChatLocked`], a chat
/// directory that is gone [`Error::ChatNotFound`]. For changes to a chat this process has not
/// opened (`chat_rename`, `chat_delete`), so they cannot race the daemon that holds it.
pub fn with_lock<T>(
    fs: &Confined,
    chat_dir: &Path,
    change: impl FnOnce() -> Result<T>,
) -> Result<T> {
    if holds(fs, chat_dir) {
        return change();
    }
    if let Err(err) = acquire(fs, chat_dir) {
        return Err(match fs.kind(chat_dir) {
            Ok(None) => Error::ChatNotFound,
            _ => err,
        });
    }
    let result = change();
    release(fs, chat_dir);
    result
}

/// Releases the lock if this process holds it.
pub fn release(fs: &Confined, chat_dir: &Path) {
    let Ok(mut held) = HELD.lock() else {
        return;
    };
    let Some(position) = held.iter().position(|(dir, _)| dir == chat_dir) else {
        return;
    };
    let (_, file) = held.remove(position);
    let path = lock_path(chat_dir);
    let ours = identity(&file);
    // Unlinked while still flocked, so nobody can take a name we are about to remove.
    if ours.is_some() && fs.identity(&path).ok() == ours {
        let _ = fs.remove_file(&path);
    }
    drop(file);
}

/// Removes the lock whoever holds it.
pub fn force_unlock(fs: &Confined, chat_dir: &Path) -> Result<()> {
    if let Ok(mut held) = HELD.lock() {
        held.retain(|(dir, _)| dir != chat_dir);
    }
    let path = lock_path(chat_dir);
    match fs.remove_file(&path) {
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
    fn dead_and_garbage_locks_are_stale_live_pid_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let fs = Confined::new(dir.path());
        let chat = dir.path().join("c");
        std::fs::create_dir(&chat).unwrap();
        std::fs::write(lock_path(&chat), "not a pid").unwrap();
        assert_eq!(held_by_other(&fs, &chat), None);
        // PID 1 is alive (init) and is not us: a PID file as the first bb7 writes it.
        std::fs::write(lock_path(&chat), "1").unwrap();
        assert_eq!(held_by_other(&fs, &chat), Some(1));
        assert_eq!(
            acquire(&fs, &chat).unwrap_err().to_string(),
            "Chat is locked by another bb7 process (PID 1). Close it there or use chat_force_unlock"
        );
        force_unlock(&fs, &chat).unwrap();
        acquire(&fs, &chat).unwrap();
        assert_eq!(
            std::fs::read_to_string(lock_path(&chat)).unwrap(),
            std::process::id().to_string()
        );
        assert_eq!(
            held_by_other(&fs, &chat),
            None,
            "our own lock does not block us"
        );
        acquire(&fs, &chat).unwrap();
        release(&fs, &chat);
        assert!(!lock_path(&chat).exists());
    }

    #[test]
    fn a_symlinked_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let fs = Confined::new(dir.path());
        let chat = dir.path().join("c");
        std::fs::create_dir(&chat).unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim"), lock_path(&chat)).unwrap();
        assert!(acquire(&fs, &chat).is_err());
        assert!(!outside.path().join("victim").exists());
    }
}
