//! What the sandbox protects besides the configured blocked paths, and how it recognises
//! protected things by identity rather than by name.
//!
//! - Credential files of the common toolchains in the home directory are always blocked
//!   ([`CREDENTIAL_PATHS`]).
//! - A root's `.git` (and, for a worktree, the git directory its `.git` file names and that
//!   directory's common dir) and `.ybs/` are read-only: git runs hooks and config from there
//!   with the user's full rights at the next git command.
//! - Each blocked or read-only path that exists is also remembered by device and inode
//!   ([`FileId`]) when the sandbox is built, so renaming a parent directory or swapping two
//!   directories does not move a protected directory out of reach of the checks.

use std::path::{Path, PathBuf};

/// Files and directories under the home directory that hold credentials of common
/// toolchains; always blocked, whatever the configuration says.
pub const CREDENTIAL_PATHS: [&str; 19] = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pip/pip.conf",
    ".config/pip/pip.conf",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".config/gcloud",
    ".azure",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".cargo/config",
    ".cargo/config.toml",
];

/// Names inside each root that are read-only for the tools and the shell.
pub const READ_ONLY_NAMES: [&str; 3] = [".git", ".ybs", ".ybs.json"];

/// The names of [`READ_ONLY_NAMES`] that ybs reads as its configuration: a command may not
/// create them either (a mount cannot cover a path that does not exist, so what a command
/// created under these names is removed when it ends).
pub const CONFIG_NAMES: [&str; 2] = [".ybs", ".ybs.json"];

/// Whether ybs reads `path` as configuration or instructions that can run programs when it
/// starts or answers a chat: a `.ybs.json`, anything under a `.ybs` directory, a `.chat` file,
/// a `.tool.json` sidecar. Writing one always asks, and its preview is shown whole.
pub fn is_configuration(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name == ".ybs.json"
        || name.ends_with(".chat")
        || name.ends_with(".tool.json")
        || path.components().any(|c| c.as_os_str() == ".ybs")
}

pub use ybs_fsguard::FileId;

/// The read-only paths of `root`: `.git` and `.ybs`, and when `.git` is a file (a worktree or
/// a submodule) the git directory it names and that directory's common dir.
pub fn read_only_paths(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = READ_ONLY_NAMES.iter().map(|n| root.join(n)).collect();
    let dot_git = root.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return out;
    };
    if !meta.is_file() {
        return out;
    }
    let Some(gitdir) = std::fs::read_to_string(&dot_git)
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("gitdir:").map(|d| d.trim().to_string()))
        })
        .map(|dir| root.join(dir))
        .and_then(|dir| std::fs::canonicalize(dir).ok())
    else {
        return out;
    };
    if let Some(common) = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .and_then(|c| std::fs::canonicalize(gitdir.join(c.trim())).ok())
    {
        out.push(common);
    }
    out.push(gitdir);
    out
}

/// The identities of the paths that exist.
pub fn ids_of(paths: &[PathBuf]) -> Vec<FileId> {
    let mut ids: Vec<FileId> = paths.iter().filter_map(|p| FileId::of(p)).collect();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_worktree_protects_its_git_dir_and_the_common_dir() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let main_git = base.join("main/.git");
        std::fs::create_dir_all(main_git.join("worktrees/wt")).unwrap();
        std::fs::write(main_git.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main_git.join("worktrees/wt").display()),
        )
        .unwrap();
        let paths = read_only_paths(&wt);
        assert_eq!(
            paths,
            vec![
                wt.join(".git"),
                wt.join(".ybs"),
                wt.join(".ybs.json"),
                main_git.clone(),
                main_git.join("worktrees/wt"),
            ]
        );
    }
}
