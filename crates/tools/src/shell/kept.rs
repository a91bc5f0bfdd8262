//! The read-only paths a command may not create ([`PathSandbox::kept_from_commands`]): ybs's
//! configuration (`.ybs.json`, `.ybs/`), the chat file being answered, external tools'
//! programs. When they exist, the mounts (or Landlock) make them read-only; a mount cannot
//! cover a path that does not exist, so what a command created under one of these names is
//! removed as soon as the command has ended (its processes are gone by then), before ybs or
//! the model can use it.

use std::path::PathBuf;

use crate::path_sandbox::PathSandbox;

/// The kept paths that do not exist now (links count as existing).
pub(super) fn absent(sandbox: &PathSandbox) -> Vec<PathBuf> {
    (sandbox.kept_from_commands().iter())
        .filter(|path| std::fs::symlink_metadata(path).is_err())
        .cloned()
        .collect()
}

/// Removes what exists now of `absent` (a link itself, never its target; a directory with
/// what is in it); returns the note for the command's output, if anything was removed.
pub(super) fn remove_created(absent: &[PathBuf]) -> Option<String> {
    let mut removed = Vec::new();
    for path in absent {
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
