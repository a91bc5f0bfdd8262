//! The project ybs works in. Its root is the top of the git work tree around the working
//! directory, found by walking up to the first directory holding `.git` (a directory, or a file
//! for worktrees and submodules); config files and instruction files are looked for from
//! there. The walk never takes a directory or a `.git` another user owns, nor goes above a
//! directory another user owns: a stranger's repository around the user's files (in a shared
//! `/tmp`, say) is not the project, and its configuration and instructions are not read. [`git`] commits a turn's files for `git.auto_commit`; every git command ybs runs
//! itself is made by [`safe_git`]; [`diff`] gathers the changes a review looks at.

pub mod diff;
pub mod git;
pub mod safe_git;

use std::path::{Path, PathBuf};

/// The top of the git work tree that contains `dir`, or `None` outside any repository.
pub fn git_root(dir: &Path) -> Option<PathBuf> {
    for ancestor in dir.ancestors() {
        let git = ancestor.join(".git");
        let theirs = ybs_fsguard::owned_by_someone_else(ancestor);
        if git.exists() {
            let mine = !theirs && !ybs_fsguard::owned_by_someone_else(&git);
            return mine.then(|| ancestor.to_path_buf());
        }
        if theirs {
            return None;
        }
    }
    None
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

    #[test]
    fn a_repository_another_user_owns_is_not_the_project() {
        if !rustix::process::geteuid().is_root() {
            println!("skipped: making a file another user's needs root");
            return;
        }
        let stranger = Some(65534);
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        let mine = shared.join("mine/a");
        std::fs::create_dir_all(&mine).unwrap();
        // Their `.git` in a directory the user owns.
        std::fs::create_dir(shared.join(".git")).unwrap();
        std::os::unix::fs::lchown(shared.join(".git"), stranger, stranger).unwrap();
        assert_eq!(git_root(&mine), None);
        assert_eq!(root_to_cwd(&mine), vec![mine.clone()]);
        // Their directory above the user's: the walk stops there, `.git` or not.
        std::os::unix::fs::lchown(shared.join(".git"), Some(0), Some(0)).unwrap();
        assert_eq!(git_root(&mine), Some(shared.clone()));
        std::os::unix::fs::lchown(&shared, stranger, stranger).unwrap();
        assert_eq!(git_root(&mine), None);
    }
}
