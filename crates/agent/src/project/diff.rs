//! The changes `/review` and `ybs exec --review` look at, gathered with ybs's own hardened
//! git ([`safe_git`](super::safe_git)): the working tree against `HEAD` (with the names of
//! new files git does not track yet), one commit, or a range. What names the commit or
//! range was typed by a person but may come from a script, an alias or a pasted line: it
//! is accepted only when it reads as a revision, and is always given to git after
//! `--end-of-options`, so nothing in it is taken as an option (`--output=FILE` would make
//! git write a file).

use std::path::Path;

/// The most of a diff sent to the model; the rest is cut with a note.
pub const MAX_DIFF_CHARS: usize = 200_000;

/// What to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewTarget {
    /// The uncommitted changes of the working tree (staged or not) and new files.
    WorkingTree,
    /// One commit (`HEAD`, `abc123`, `v1.2~1`).
    Commit(String),
    /// A range (`HEAD~3..`, `main...topic`).
    Range(String),
}

/// A review's target that cannot be used, or git failing.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The argument is not a revision or a range.
    #[error(
        "`{0}` is not a revision or a range (such as HEAD, abc123, HEAD~3.. or main...topic); nothing was run"
    )]
    NotARevision(String),
    /// Git could not be run or failed.
    #[error("git {command} failed: {reason}")]
    Git {
        /// The git subcommand.
        command: String,
        /// What it said.
        reason: String,
    },
}

impl ReviewTarget {
    /// The target an argument names: the working tree when there is none.
    pub fn parse(argument: Option<&str>) -> Result<ReviewTarget, DiffError> {
        let Some(argument) = argument.map(str::trim).filter(|a| !a.is_empty()) else {
            return Ok(ReviewTarget::WorkingTree);
        };
        let refused = || DiffError::NotARevision(crate::inert::inert(argument).into_owned());
        // What git's revision syntax uses, and nothing that a shell or git reads otherwise;
        // a leading `-` would be an option.
        let allowed = |c: char| c.is_ascii_alphanumeric() || "._/~^@{}-+:".contains(c);
        if argument.starts_with('-')
            || argument.len() > 200
            || argument.contains("//")
            || !argument.chars().all(allowed)
        {
            return Err(refused());
        }
        if argument.contains("..") {
            let separator = if argument.contains("...") {
                "..."
            } else {
                ".."
            };
            let sides: Vec<&str> = argument.split(separator).collect();
            if sides.iter().any(|side| side.starts_with(['-', '.'])) {
                return Err(refused());
            }
            Ok(ReviewTarget::Range(argument.to_owned()))
        } else {
            Ok(ReviewTarget::Commit(argument.to_owned()))
        }
    }

    /// How the target is named to the model and the user.
    pub fn describe(&self) -> String {
        match self {
            ReviewTarget::WorkingTree => "the uncommitted changes of the working tree".to_owned(),
            ReviewTarget::Commit(commit) => format!("commit {commit}"),
            ReviewTarget::Range(range) => format!("the range {range}"),
        }
    }
}

/// The diff of `target` in the repository around `dir`, cut at [`MAX_DIFF_CHARS`]; empty
/// when nothing changed.
pub fn gather(dir: &Path, target: &ReviewTarget) -> Result<String, DiffError> {
    const PLAIN: [&str; 4] = ["--no-color", "--no-ext-diff", "--no-textconv", "--patch"];
    let mut text = match target {
        ReviewTarget::WorkingTree => {
            let has_head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_ok();
            let mut args = vec!["diff"];
            args.extend(PLAIN);
            if has_head {
                args.push("HEAD");
            } else {
                args.push("--cached");
            }
            let mut diff = git(dir, &args)?;
            let new = git(dir, &["ls-files", "--others", "--exclude-standard", "-z"])?;
            let new: Vec<&str> = new.split('\0').filter(|f| !f.is_empty()).collect();
            if !new.is_empty() {
                diff.push_str("\nNew files git does not track yet (read them to review them):\n");
                for file in new {
                    diff.push_str(&format!("  {file}\n"));
                }
            }
            diff
        }
        ReviewTarget::Commit(commit) => {
            let mut args = vec!["show", "--format=commit %H%nAuthor: %an%n%n%B"];
            args.extend(PLAIN);
            args.extend(["--end-of-options", commit.as_str()]);
            git(dir, &args)?
        }
        ReviewTarget::Range(range) => {
            let mut args = vec!["diff"];
            args.extend(PLAIN);
            args.extend(["--end-of-options", range.as_str()]);
            git(dir, &args)?
        }
    };
    if text.len() > MAX_DIFF_CHARS {
        let mut cut = MAX_DIFF_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[the diff is cut here; read the files for the rest]\n");
    }
    Ok(text)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, DiffError> {
    let failed = |reason: String| DiffError::Git {
        command: args.first().copied().unwrap_or_default().to_owned(),
        reason,
    };
    let output = (super::safe_git::git_command(dir))
        .map_err(|e| failed(e.to_string()))?
        .args(args)
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_and_ranges_are_taken_and_options_are_not() {
        assert_eq!(
            ReviewTarget::parse(None).ok(),
            Some(ReviewTarget::WorkingTree)
        );
        assert_eq!(
            ReviewTarget::parse(Some("HEAD")).ok(),
            Some(ReviewTarget::Commit("HEAD".into()))
        );
        assert_eq!(
            ReviewTarget::parse(Some("HEAD~3..")).ok(),
            Some(ReviewTarget::Range("HEAD~3..".into()))
        );
        assert_eq!(
            ReviewTarget::parse(Some("main...topic")).ok(),
            Some(ReviewTarget::Range("main...topic".into()))
        );
        for bad in [
            "--output=/tmp/x",
            "-p",
            "HEAD..--output=x",
            "HEAD; rm -rf /",
            "a b",
            "$(touch x)",
            "HEAD\n--output=x",
        ] {
            let error = ReviewTarget::parse(Some(bad)).err().map(|e| e.to_string());
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.contains("is not a revision")),
                "{bad}: {error:?}"
            );
        }
    }
}
