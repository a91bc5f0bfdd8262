//! `git.auto_commit`: after a turn that changed files inside a git work tree, commit exactly
//! those files. Never when not in a repository, and never when the user had staged changes
//! before the turn (their index is theirs to commit).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The longest summary line, in characters.
const SUMMARY_CHARS: usize = 72;

/// Why git could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error(
        "cannot run git for git.auto_commit: {source} (install git or set git.auto_commit to false)"
    )]
    Spawn {
        /// The reason.
        source: std::io::Error,
    },
    /// A git command failed.
    #[error("git {command} failed: {reason}")]
    Failed {
        /// The git subcommand, such as `commit`.
        command: String,
        /// The line of git's message that says what went wrong.
        reason: String,
    },
    /// The turn's commit failed; what ybs had staged for it was unstaged again.
    #[error("the turn was not committed (its changes are in the work tree, unstaged): {0}")]
    NotCommitted(Box<GitError>),
}

/// Runs `git`, with extra environment variables (tests use them to shut out the user's
/// global configuration).
#[derive(Debug, Clone, Default)]
pub struct Git {
    envs: Vec<(OsString, OsString)>,
}

/// The state of the work tree before a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// The top of the work tree.
    pub root: PathBuf,
    /// Whether the index held staged changes.
    pub staged_before: bool,
}

/// Why nothing was committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The user had staged changes before the turn.
    StagedBefore,
    /// None of the files differs from the last commit (or none is inside the work tree).
    NothingChanged,
}

/// What [`Git::commit_turn`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// A commit was made.
    Committed {
        /// Its id.
        id: String,
        /// The files, relative to the work tree's top.
        files: Vec<PathBuf>,
    },
    /// Nothing was committed.
    Skipped(Skip),
}

impl Git {
    /// A runner that sets `envs` for every git command.
    pub fn with_env(envs: Vec<(OsString, OsString)>) -> Self {
        Git { envs }
    }

    /// The work tree around `dir` and whether its index has staged changes; `None` when `dir`
    /// is not inside a git work tree.
    pub fn baseline(&self, dir: &Path) -> Result<Option<Baseline>, GitError> {
        let output = self.output(dir, &["rev-parse", "--show-toplevel"])?;
        if !output.status.success() {
            return Ok(None);
        }
        let root = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim_end_matches('\n'));
        let staged = self.output(
            &root,
            &[
                "diff",
                "--cached",
                "--quiet",
                "--no-ext-diff",
                "--no-textconv",
            ],
        )?;
        let staged_before = match staged.status.code() {
            Some(0) => false,
            Some(1) => true,
            _ => {
                return Err(failed(
                    &[
                        "diff",
                        "--cached",
                        "--quiet",
                        "--no-ext-diff",
                        "--no-textconv",
                    ],
                    &staged,
                ));
            }
        };
        Ok(Some(Baseline {
            root,
            staged_before,
        }))
    }

    /// Commits the `changed` files (absolute, or relative to the work tree's top) that are
    /// inside the work tree, not ignored, and differ from the last commit, with the message
    /// `"{prefix} {summary}"`.
    pub fn commit_turn(
        &self,
        baseline: &Baseline,
        changed: &[PathBuf],
        prefix: &str,
        summary: &str,
    ) -> Result<CommitOutcome, GitError> {
        if baseline.staged_before {
            return Ok(CommitOutcome::Skipped(Skip::StagedBefore));
        }
        let root = &baseline.root;
        let mut files = self.committable(root, changed)?;
        files.sort();
        files.dedup();
        if files.is_empty() {
            return Ok(CommitOutcome::Skipped(Skip::NothingChanged));
        }
        let paths: Vec<String> = files
            .iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        self.run(root, &["add", "-A", "--"], &paths)?;
        let message = format!("{prefix} {summary}").trim().to_owned();
        let committed = self.commit_staged(root, &paths, &message);
        if let Err(error) = committed {
            // Leave the index as the turn found it: what ybs staged is unstaged, anything
            // else staged meanwhile stays.
            self.unstage(root, &paths);
            return Err(GitError::NotCommitted(Box::new(error)));
        }
        Ok(match committed? {
            Some(id) => CommitOutcome::Committed { id, files },
            None => CommitOutcome::Skipped(Skip::NothingChanged),
        })
    }

    /// Commits the staged `paths`; `None` when they do not differ from `HEAD`.
    fn commit_staged(
        &self,
        root: &Path,
        paths: &[String],
        message: &str,
    ) -> Result<Option<String>, GitError> {
        let staged = self.output_with(
            root,
            &[
                "diff",
                "--cached",
                "--quiet",
                "--no-ext-diff",
                "--no-textconv",
                "--",
            ],
            paths,
        )?;
        if staged.status.success() {
            return Ok(None);
        }
        self.run(root, &["commit", "--quiet", "-m", message, "--"], paths)?;
        let head = self.run(root, &["rev-parse", "HEAD"], &[])?;
        Ok(Some(
            String::from_utf8_lossy(&head.stdout).trim().to_owned(),
        ))
    }

    /// Takes `paths` out of the index again (back to `HEAD`, or untracked before the first
    /// commit). Best effort: the commit's own error is the one reported.
    fn unstage(&self, root: &Path, paths: &[String]) {
        let reset = self.run(root, &["reset", "--quiet", "--"], paths);
        if reset.is_err() {
            let args = ["rm", "--cached", "--quiet", "--ignore-unmatch", "-r", "--"];
            let _ = self.run(root, &args, paths);
        }
    }

    /// The files of `changed` git can commit: inside the work tree, not ignored, and either
    /// present or tracked (a deleted tracked file is a change; a deleted untracked one is not).
    fn committable(&self, root: &Path, changed: &[PathBuf]) -> Result<Vec<PathBuf>, GitError> {
        let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
        let inside: Vec<PathBuf> = changed
            .iter()
            .filter_map(|path| {
                let absolute = if path.is_absolute() {
                    path.clone()
                } else {
                    root.join(path)
                };
                let relative = absolute
                    .strip_prefix(root)
                    .or_else(|_| absolute.strip_prefix(&canonical_root))
                    .ok()?
                    .to_owned();
                let is_git_dir = relative
                    .components()
                    .next()
                    .is_some_and(|c| c.as_os_str() == ".git");
                (!relative.as_os_str().is_empty() && !is_git_dir).then_some(relative)
            })
            .collect();
        if inside.is_empty() {
            return Ok(inside);
        }
        let paths: Vec<String> = inside
            .iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        let ignored =
            lines(&self.output_with(root, &["check-ignore", "--no-index", "--"], &paths)?);
        let tracked = lines(&self.run(root, &["ls-files", "--"], &paths)?);
        Ok(inside
            .into_iter()
            .filter(|file| {
                let name = file.to_string_lossy();
                !ignored.iter().any(|line| *line == name)
                    && (root.join(file).exists() || tracked.iter().any(|line| *line == name))
            })
            .collect())
    }

    fn output(&self, dir: &Path, args: &[&str]) -> Result<Output, GitError> {
        self.output_with(dir, args, &[])
    }

    fn output_with(&self, dir: &Path, args: &[&str], paths: &[String]) -> Result<Output, GitError> {
        // Whatever the repository's config says, run no hook, fsmonitor, filter or diff
        // driver: the model's commands could have planted them, and these calls run
        // unsandboxed.
        super::safe_git::git_command(dir)
            .map_err(|source| GitError::Spawn { source })?
            .args(args)
            .args(paths)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|source| GitError::Spawn { source })
    }

    fn run(&self, dir: &Path, args: &[&str], paths: &[String]) -> Result<Output, GitError> {
        let output = self.output_with(dir, args, paths)?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(failed(args, &output))
        }
    }
}

/// The commit summary for a turn: the first line of the user's request, shortened.
pub fn summary_line(request: &str) -> String {
    let first = request
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    if first.chars().count() <= SUMMARY_CHARS {
        return first.to_owned();
    }
    let mut cut: String = first.chars().take(SUMMARY_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn failed(args: &[&str], output: &Output) -> GitError {
    GitError::Failed {
        command: args.first().copied().unwrap_or_default().to_owned(),
        reason: gist(&String::from_utf8_lossy(&output.stderr)),
    }
}

/// What went wrong, from git's message (which surrounds it with hints and banners).
fn gist(stderr: &str) -> String {
    if stderr.contains("Author identity unknown")
        || stderr.contains("unable to auto-detect email address")
    {
        return "no author identity is configured (set user.name and user.email with `git config`)"
            .to_owned();
    }
    let mut lines = stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty());
    let first = lines.clone().next();
    lines
        .find_map(|line| {
            line.strip_prefix("fatal: ")
                .or_else(|| line.strip_prefix("error: "))
        })
        .or(first)
        .unwrap_or("git gave no reason")
        .to_owned()
}

#[cfg(test)]
mod tests;
