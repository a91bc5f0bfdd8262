//! The environment block of the system prompt: the machine, the project, the date, git and
//! the sandbox, gathered once when a session starts so the prompt stays the same on every
//! request of the session (providers cache a stable prefix).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The most `git status` lines shown; the rest are counted.
const STATUS_LINES: usize = 20;
/// The longest `git status` line shown.
const STATUS_LINE_CHARS: usize = 160;

/// What the block says, gathered by [`Environment::gather`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// `linux`, `macos`...
    pub os: String,
    /// `x86_64`, `aarch64`...
    pub arch: String,
    /// The shell `run_shell` uses.
    pub shell: PathBuf,
    /// Where relative paths start.
    pub project_dir: PathBuf,
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
    /// The repository around the project directory, if any.
    pub git: Option<GitState>,
    /// Whether git was not asked because the project's `.git` leads out of the project.
    pub git_outside: bool,
    /// Whether commands run in the OS sandbox (without network).
    pub sandbox: bool,
    /// Where the tools may write.
    pub writable: Vec<PathBuf>,
}

/// The repository's state when the session started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitState {
    /// The top of the work tree.
    pub root: PathBuf,
    /// The branch, or `None` on a detached HEAD.
    pub branch: Option<String>,
    /// `git status --short` lines (capped).
    pub status: Vec<String>,
    /// How many lines were left out.
    pub more: usize,
}

impl Environment {
    /// This machine, `project_dir`, today, git run in `project_dir`, and the sandbox state.
    pub fn gather(project_dir: &Path, shell: &Path, sandbox: bool, writable: Vec<PathBuf>) -> Self {
        Environment {
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            shell: shell.to_path_buf(),
            project_dir: project_dir.to_path_buf(),
            date: today(),
            git: git_state(project_dir),
            git_outside: crate::project::safe_git::check_git_dir(project_dir).is_err(),
            sandbox,
            writable,
        }
    }

    /// The block as it goes into the system prompt.
    pub fn render(&self) -> String {
        let mut out = String::from("# Environment\n");
        let _ = writeln!(out, "- Operating system: {} ({})", self.os, self.arch);
        let _ = writeln!(
            out,
            "- Shell of run_shell: {} (commands run with `-c`, non-interactively)",
            self.shell.display()
        );
        let _ = writeln!(out, "- Project directory: {}", self.project_dir.display());
        let _ = writeln!(out, "- Today's date: {} (UTC)", self.date);
        match &self.git {
            None if self.git_outside => {
                out.push_str("- Git: not read (the project's .git leads outside the project)\n")
            }
            None => out.push_str("- Git: not a git repository\n"),
            Some(git) => {
                let branch = match &git.branch {
                    Some(branch) => format!("on branch {branch}"),
                    None => "detached HEAD".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "- Git: a repository at {}, {branch}",
                    git.root.display()
                );
                if git.status.is_empty() {
                    out.push_str("- git status: clean when the session started\n");
                } else {
                    out.push_str("- git status --short when the session started:\n");
                    for line in &git.status {
                        let _ = writeln!(out, "    {line}");
                    }
                    if git.more > 0 {
                        let _ = writeln!(out, "    … and {} more", git.more);
                    }
                }
            }
        }
        let writable: Vec<String> = (self.writable.iter())
            .map(|path| path.display().to_string())
            .collect();
        let writable = writable.join(", ");
        if self.sandbox {
            let _ = writeln!(
                out,
                "- Sandbox: on. No network access; files can be written only under {writable}."
            );
        } else {
            let _ = writeln!(
                out,
                "- Sandbox: off (the user turned it off). Commands run with the user's own \
                 rights, network included; the file tools still write only under {writable}."
            );
        }
        out
    }
}

/// The repository around `dir`: its root, branch and a capped `git status --short`.
fn git_state(dir: &Path) -> Option<GitState> {
    let root = git(dir, &["rev-parse", "--show-toplevel"])?;
    let branch = git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]);
    let status = git(dir, &["status", "--short", "--untracked-files=normal"]).unwrap_or_default();
    let lines: Vec<&str> = status.lines().filter(|line| !line.is_empty()).collect();
    let more = lines.len().saturating_sub(STATUS_LINES);
    Some(GitState {
        root: PathBuf::from(root.trim_end()),
        branch: branch.map(|branch| branch.trim().to_owned()),
        status: (lines.iter().take(STATUS_LINES))
            .map(|line| cap(line, STATUS_LINE_CHARS))
            .collect(),
        more,
    })
}

/// The standard output of a git command that succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = crate::project::safe_git::git_command(dir)
        .ok()?
        .args(args)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn cap(line: &str, max: usize) -> String {
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// Today's date in UTC as `YYYY-MM-DD`.
fn today() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (year, month, day) = civil_date(i64::try_from(seconds / 86_400).unwrap_or(0));
    format!("{year:04}-{month:02}-{day:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::process::Command;

    use super::*;

    #[test]
    fn day_counts_become_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_780), (2026, 11, 23));
        assert_eq!(civil_date(-1), (1969, 12, 31));
    }

    #[test]
    fn the_block_names_the_repository_its_status_and_the_sandbox() {
        let environment = Environment {
            os: "linux".into(),
            arch: "x86_64".into(),
            shell: "/bin/sh".into(),
            project_dir: "/p/sub".into(),
            date: "2026-11-23".into(),
            git: Some(GitState {
                root: "/p".into(),
                branch: Some("main".into()),
                status: vec![" M src/lib.rs".into()],
                more: 3,
            }),
            git_outside: false,
            sandbox: true,
            writable: vec!["/p/sub".into()],
        };
        let text = environment.render();
        assert!(
            text.contains("- Operating system: linux (x86_64)\n"),
            "{text}"
        );
        assert!(text.contains("- Project directory: /p/sub\n"));
        assert!(text.contains("- Today's date: 2026-11-23 (UTC)\n"));
        assert!(text.contains("- Git: a repository at /p, on branch main\n"));
        assert!(
            text.contains("     M src/lib.rs\n    … and 3 more\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "- Sandbox: on. No network access; files can be written only under /p/sub."
            )
        );
        let off = Environment {
            git: None,
            sandbox: false,
            ..environment.clone()
        }
        .render();
        assert!(off.contains("- Git: not a git repository\n"));
        assert!(off.contains("- Sandbox: off"));
        let outside = Environment {
            git: None,
            git_outside: true,
            ..environment.clone()
        }
        .render();
        assert!(outside.contains("- Git: not read (the project's .git leads outside"));
    }

    #[test]
    fn a_real_repository_is_described_with_a_capped_status() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let status = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(status.status.success(), "{args:?}");
        };
        run(&["init", "-q", "-b", "trunk"]);
        for i in 0..25 {
            std::fs::write(dir.path().join(format!("f{i:02}")), "x").unwrap();
        }
        let git = git_state(dir.path()).unwrap();
        assert_eq!(git.branch.as_deref(), Some("trunk"));
        assert_eq!(git.status.len(), STATUS_LINES);
        assert_eq!(git.status[0], "?? f00");
        assert_eq!(git.more, 5);
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(git_state(outside.path()), None);
    }
}
