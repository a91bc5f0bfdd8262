//! ybs's own git commands (the environment block, auto-commit, undo) run with the user's
//! full rights, outside the sandbox, in a repository the model's commands may have written
//! to. So `git` is taken from an absolute `PATH` entry outside the project (never `./bin` or
//! `node_modules/.bin`), and every program a repository's configuration can make git run is
//! switched off for the call: hooks, the fsmonitor, clean/smudge filters, external diff and
//! textconv drivers, signing, automatic gc and any transport. Nor does ybs run git in a
//! project whose `.git` leads out of it (a link, or a `gitdir:` file naming a directory that
//! is neither a worktree of that name nor a submodule's): the status of another repository,
//! and a commit into it, would read and write outside the project.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Settings given to every call, which override the repository's.
const SAFE_SETTINGS: [&str; 9] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.allow=never",
    "diff.external=",
    "core.pager=cat",
];

/// A `git` command for `dir` (run with `-C dir`), hardened as the module says; `NotFound`
/// when no `git` lies on an absolute `PATH` entry outside the project around `dir`.
pub fn git_command(dir: &Path) -> io::Result<Command> {
    check_git_dir(dir)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let (program, search) = find_git(&path, &project_of(dir)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no git on an absolute PATH entry outside the project",
        )
    })?;
    let mut base = hardened(&program, &search, dir);
    // The drivers the repository's configuration defines, neutralised by name.
    let drivers = base
        .args([
            "config",
            "-z",
            "--get-regexp",
            r"^(filter|diff)\..*\.(clean|smudge|process|textconv|command)$",
        ])
        .output()
        .map(|output| neutralise(&String::from_utf8_lossy(&output.stdout)))
        .unwrap_or_default();
    let mut command = hardened(&program, &search, dir);
    for setting in drivers {
        command.arg("-c").arg(setting);
    }
    command.arg("-C").arg(dir);
    Ok(command)
}

/// Refuses (`PermissionDenied`) the repository around `dir` when its `.git` leads out of the
/// work tree: a symbolic link to a directory elsewhere, or a `gitdir:` file naming one that is
/// not a linked worktree pointing back at this `.git` nor a submodule's directory under the
/// `.git/modules` of a directory above. A repository git would find above it anyway is fine.
pub fn check_git_dir(dir: &Path) -> io::Result<()> {
    let Some(root) = crate::project::git_root(dir) else {
        return Ok(());
    };
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git)?;
    let root = root.canonicalize()?;
    let refuse = |target: &Path| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} leads to {}, outside the project; ybs runs no git command there",
                dot_git.display(),
                target.display()
            ),
        )
    };
    if meta.file_type().is_symlink() {
        let target = dot_git.canonicalize().map_err(|_| refuse(&dot_git))?;
        return match target.starts_with(&root) {
            true => Ok(()),
            false => Err(refuse(&target)),
        };
    }
    if !meta.is_file() {
        return Ok(());
    }
    let text = ybs_fsguard::physical::read(&root.join(".git"), 64 * 1024)
        .map_err(|error| io::Error::new(io::ErrorKind::PermissionDenied, error.to_string()))?
        .map(|file| String::from_utf8_lossy(&file.bytes).into_owned())
        .unwrap_or_default();
    let named = (text.lines())
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(str::trim)
        .unwrap_or_default();
    let target = root
        .join(named)
        .canonicalize()
        .map_err(|_| refuse(Path::new(named)))?;
    let worktree = || {
        let back = std::fs::read_to_string(target.join("gitdir")).unwrap_or_default();
        Path::new(back.trim()).canonicalize().ok() == Some(root.join(".git"))
    };
    let submodule = || {
        (root.ancestors().skip(1))
            .any(|above| target.starts_with(above.join(".git").join("modules")))
    };
    if target.starts_with(&root) || worktree() || submodule() {
        Ok(())
    } else {
        Err(refuse(&target))
    }
}

fn hardened(program: &Path, search: &OsString, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command.env("PATH", search);
    command.env("GIT_NO_LAZY_FETCH", "1");
    command.env("GIT_TERMINAL_PROMPT", "0");
    command.current_dir(dir);
    for setting in SAFE_SETTINGS {
        command.arg("-c").arg(setting);
    }
    command
}

/// The `-c` settings that switch off each driver named in `git config -z --get-regexp`
/// output (`KEY\nVALUE\0` records).
fn neutralise(records: &str) -> Vec<String> {
    let mut settings = Vec::new();
    for record in records.split('\0') {
        let key = record.split('\n').next().unwrap_or_default();
        let Some((section, rest)) = key.split_once('.') else {
            continue;
        };
        let Some((name, _)) = rest.rsplit_once('.') else {
            continue;
        };
        let fields: &[&str] = match section {
            "filter" => &["clean", "smudge", "process"],
            "diff" => &["textconv", "command"],
            _ => continue,
        };
        for field in fields {
            let setting = format!("{section}.{name}.{field}=");
            if !settings.contains(&setting) {
                settings.push(setting);
            }
        }
        if section == "filter" {
            settings.push(format!("filter.{name}.required=false"));
        }
    }
    settings
}

/// The directories that are the project around `dir`: `dir` and its git work tree, as
/// given and resolved.
fn project_of(dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![dir.to_owned()];
    if let Some(root) = crate::project::git_root(dir) {
        dirs.push(root);
    }
    let resolved: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    dirs.extend(resolved);
    dirs
}

/// The program `name` that ybs itself runs with the user's rights (a clipboard reader, say),
/// found as `git` is: on an absolute `PATH` entry outside the project around `dir`, so a
/// cloned repository cannot put its own in the way.
pub fn program_outside_project(name: &str, dir: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    find_program(name, &path, &project_of(dir)).map(|(program, _)| program)
}

/// The first executable `git` on the absolute entries of `path` that lie outside every
/// directory of `project`, and those entries joined as the `PATH` git's children get.
fn find_git(path: &OsString, project: &[PathBuf]) -> Option<(PathBuf, OsString)> {
    find_program("git", path, project)
}

/// [`find_git`] for the program `name`.
fn find_program(name: &str, path: &OsString, project: &[PathBuf]) -> Option<(PathBuf, OsString)> {
    use std::os::unix::fs::PermissionsExt;
    let entries: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|entry| entry.is_absolute())
        .filter(|entry| {
            let real = entry.canonicalize().unwrap_or_else(|_| entry.clone());
            !project
                .iter()
                .any(|dir| entry.starts_with(dir) || real.starts_with(dir))
        })
        .collect();
    let program = entries
        .iter()
        .map(|entry| entry.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })?;
    let search = std::env::join_paths(&entries).ok()?;
    Some((program, search))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn git_is_found_only_on_absolute_entries_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let project = base.join("project");
        let inside = project.join("node_modules/.bin");
        let outside = base.join("usr/bin");
        for bin in [&inside, &outside] {
            std::fs::create_dir_all(bin).unwrap();
            std::fs::write(bin.join("git"), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let path = std::env::join_paths([
            PathBuf::from("./node_modules/.bin"),
            inside.clone(),
            outside.clone(),
        ])
        .unwrap();
        let (program, search) = find_git(&path, &project_of(&project)).unwrap();
        assert_eq!(program, outside.join("git"));
        assert_eq!(search, outside.as_os_str());
        let only_inside = std::env::join_paths([inside]).unwrap();
        assert!(find_git(&only_inside, &project_of(&project)).is_none());
    }

    #[test]
    fn a_git_directory_leading_out_of_the_project_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let elsewhere = base.join("elsewhere/.git");
        std::fs::create_dir_all(elsewhere.join("worktrees/w")).unwrap();
        let linked = base.join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join(".git")).unwrap();
        let error = check_git_dir(&linked).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        assert!(error.to_string().contains("outside the project"), "{error}");
        assert!(git_command(&linked).is_err());
        // A `gitdir:` file naming another repository: refused.
        let named = base.join("named");
        std::fs::create_dir(&named).unwrap();
        let gitdir = format!("gitdir: {}\n", elsewhere.display());
        std::fs::write(named.join(".git"), &gitdir).unwrap();
        assert!(check_git_dir(&named).is_err());
        // A worktree whose git directory points back at it: fine.
        let worktree = base.join("w");
        std::fs::create_dir(&worktree).unwrap();
        let gitdir = format!("gitdir: {}\n", elsewhere.join("worktrees/w").display());
        std::fs::write(worktree.join(".git"), gitdir).unwrap();
        std::fs::write(
            elsewhere.join("worktrees/w/gitdir"),
            format!("{}\n", worktree.join(".git").display()),
        )
        .unwrap();
        check_git_dir(&worktree).unwrap();
        // A submodule's git directory under the `.git/modules` of the repository above.
        let outer = base.join("outer");
        std::fs::create_dir_all(outer.join(".git/modules/sub")).unwrap();
        std::fs::create_dir_all(outer.join("sub")).unwrap();
        std::fs::write(outer.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        check_git_dir(&outer.join("sub")).unwrap();
        // A real `.git` directory, and no repository at all: fine.
        check_git_dir(&outer).unwrap();
    }

    #[test]
    fn every_driver_the_configuration_names_is_switched_off() {
        let records = "filter.lfs.clean\ngit-lfs clean\0diff.pdf.textconv\npdftotext\0";
        assert_eq!(
            neutralise(records),
            [
                "filter.lfs.clean=",
                "filter.lfs.smudge=",
                "filter.lfs.process=",
                "filter.lfs.required=false",
                "diff.pdf.textconv=",
                "diff.pdf.command=",
            ]
        );
    }
}
