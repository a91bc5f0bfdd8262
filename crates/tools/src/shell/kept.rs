//! The read-only paths a command may not create ([`PathSandbox::kept_from_commands`]): ybs's
//! configuration (`.ybs.json`, `.ybs/`), the chat file being answered, external tools'
//! programs. When they exist, the mounts (or Landlock) make them read-only. A mount cannot
//! cover a path that does not exist, so for the command's run each missing one whose
//! directory exists is held by an empty placeholder directory ([`Placeholders`], mode
//! `0555`, which git does not see), which the namespace then binds read-only like `.git`:
//! creating a file or directory of that name fails (`EEXIST`, `EROFS`), and so does removing
//! or renaming the placeholder (a mount point, `EBUSY`). The placeholders are removed when the
//! command has ended. Where no placeholder could be made or no mount covers it (no
//! namespaces), what a command created under one of these names is removed as soon as it
//! has ended (its processes are gone by then), before ybs or the model can use it.
//!
//! Another ybs process in the same project makes placeholders of its own and removes them
//! when its commands end, which lifts the mounts other processes' commands made of them: a
//! command that started with such a placeholder in place ([`foreign`]) has what replaced it
//! removed when it ends ([`remove_replaced`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use crate::path_sandbox::PathSandbox;

/// The placeholders this process holds now, with how many running commands hold each.
static HELD: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

/// The kept paths that do not exist now (links count as existing), or exist only as the
/// placeholder of a command running now.
pub(super) fn absent(sandbox: &PathSandbox) -> Vec<PathBuf> {
    let held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    (sandbox.kept_from_commands().iter())
        .filter(|path| {
            std::fs::symlink_metadata(path).is_err()
                || held.as_ref().is_some_and(|held| held.contains_key(*path))
        })
        .cloned()
        .collect()
}

/// The kept paths that hold another ybs process's placeholder now: an empty directory of
/// mode `0555` that no command of this process holds. That process removes it when its
/// command ends, which also lifts this command's read-only mount of it, so what is there
/// once this command has ended is checked ([`remove_replaced`]).
pub(super) fn foreign(sandbox: &PathSandbox) -> Vec<PathBuf> {
    let held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    (sandbox.kept_from_commands().iter())
        .filter(|path| !held.as_ref().is_some_and(|held| held.contains_key(*path)))
        .filter(|path| is_placeholder(path))
        .cloned()
        .collect()
}

/// Whether `path` is an empty directory of mode `0555` (not followed if a link).
fn is_placeholder(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .is_ok_and(|meta| meta.is_dir() && meta.permissions().mode() & 0o7777 == 0o555)
        && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
}

/// The placeholders of one command's run; dropping it removes those no other running
/// command holds (an empty directory only: `rmdir`).
pub(super) struct Placeholders {
    mine: Vec<PathBuf>,
    /// Names found taken when making the placeholder: another ybs process's placeholder,
    /// made since the command's plan was made.
    taken: Vec<PathBuf>,
}

impl Placeholders {
    /// Makes an empty directory (`0555`) at each of `absent` whose parent directory exists
    /// and that is still free, or shares the one another running command made.
    pub(super) fn hold(absent: &[PathBuf]) -> Placeholders {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let held = held.get_or_insert_with(HashMap::new);
        let mut mine = Vec::new();
        let mut taken = Vec::new();
        for path in absent {
            if let Some(count) = held.get_mut(path) {
                *count += 1;
                mine.push(path.clone());
                continue;
            }
            if !path.parent().is_some_and(|parent| {
                std::fs::symlink_metadata(parent).is_ok_and(|meta| meta.is_dir())
            }) {
                continue;
            }
            let made = std::fs::DirBuilder::new().create(path).and_then(|()| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555))
            });
            match made {
                Ok(()) => {
                    held.insert(path.clone(), 1);
                    mine.push(path.clone());
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    taken.push(path.clone());
                }
                Err(_) => {}
            }
        }
        Placeholders { mine, taken }
    }

    /// Whether `path` was found taken by another ybs process (then what is there after the
    /// command is not the command's doing).
    pub(super) fn taken(&self, path: &std::path::Path) -> bool {
        self.taken.iter().any(|taken| taken == path)
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(held) = held.as_mut() else {
            return;
        };
        for path in &self.mine {
            let last = match held.get_mut(path) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                _ => true,
            };
            if last {
                held.remove(path);
                // Not empty: the command wrote into it; `remove_created` takes it away.
                let _ = std::fs::remove_dir(path);
            }
        }
    }
}

/// Removes what exists now of `absent` (a link itself, never its target; a directory with
/// what is in it), except the placeholders of commands still running (a background job's:
/// empty, read-only to commands, and needed until that command ends); returns the note for
/// the command's output, if anything was removed.
pub(super) fn remove_created(absent: &[PathBuf]) -> Option<String> {
    let held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    remove(
        (absent.iter()).filter(|path| !held.as_ref().is_some_and(|held| held.contains_key(*path))),
    )
}

/// Removes what replaced another process's placeholder at each of `foreign` (anything but
/// a placeholder); the note as [`remove_created`] gives it.
pub(super) fn remove_replaced(foreign: &[PathBuf]) -> Option<String> {
    remove(foreign.iter().filter(|path| !is_placeholder(path)))
}

fn remove<'a>(paths: impl Iterator<Item = &'a PathBuf>) -> Option<String> {
    let mut removed = Vec::new();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let result = if meta.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        removed.push(match result {
            Ok(()) => format!("removed {}", path.display()),
            Err(error) => format!("could not remove {} ({error})", path.display()),
        });
    }
    (!removed.is_empty()).then(|| {
        format!(
            "\nybs: this command created files that are read-only to commands (ybs's \
             configuration, the chat file being answered, external tools' programs); {}. \
             Ask the user to make such changes outside ybs.",
            removed.join("; ")
        )
    })
}
