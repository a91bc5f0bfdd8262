//! The project ybs works in. Its root is the top of the git work tree around the working
//! directory, found by walking up to the first directory holding `.git` (a directory, or a file
//! for worktrees and submodules); config files and instruction files are looked for from
//! there. [`git`] commits a turn's files for `git.auto_commit`; every git command ybs runs
//! itself is made by [`safe_git`].

pub mod git;
pub mod safe_git;

use std::path::{Path, PathBuf};

/// The top of the git work tree that contains `dir`, or `None` outside any repository.
pub fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|ancestor| ancestor.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The directories from the git root down to `cwd`, in that order; just `cwd` outside a
/// repository.
pub fn root_to_cwd(cwd: &Path) -> Vec<PathBuf> {
    let Some(root) = git_root(cwd) else {
        return vec![cwd.to_path_buf()];
    };
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(&root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_root_is_found_from_a_subdirectory_and_listed_down_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(git_root(&sub), None);
        assert_eq!(root_to_cwd(&sub), vec![sub.clone()]);
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(git_root(&sub), Some(repo.clone()));
        assert_eq!(
            root_to_cwd(&sub),
            [repo.clone(), repo.join("a"), sub.clone()]
        );
        // A worktree's `.git` is a file.
        std::fs::write(sub.join(".git"), "gitdir: elsewhere").unwrap();
        assert_eq!(git_root(&sub), Some(sub.clone()));
    }
}
