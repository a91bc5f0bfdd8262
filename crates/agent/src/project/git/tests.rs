//! Auto-commit against real repositories in temporary directories.

use std::fs;

use super::*;

struct Repo {
    dir: tempfile::TempDir,
    git: Git,
}

impl Repo {
    /// A repository with one commit of `a.txt`, isolated from the user's git configuration.
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let git = Git::with_env(vec![
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("GIT_AUTHOR_NAME".into(), "t".into()),
            ("GIT_AUTHOR_EMAIL".into(), "t@example.invalid".into()),
            ("GIT_COMMITTER_NAME".into(), "t".into()),
            ("GIT_COMMITTER_EMAIL".into(), "t@example.invalid".into()),
        ]);
        let repo = Repo { dir, git };
        repo.git_ok(&["init", "--quiet"]);
        repo.write("a.txt", "a\n");
        repo.write(".gitignore", "*.log\n");
        repo.git_ok(&["add", "."]);
        repo.git_ok(&["commit", "--quiet", "-m", "start"]);
        repo
    }

    /// A runner whose commits fail (git refuses an author date it cannot read), while `add`
    /// and the rest work.
    fn failing_commits(&self) -> Git {
        let mut envs = self.git.envs.clone();
        envs.push(("GIT_AUTHOR_DATE".into(), "not a date".into()));
        Git::with_env(envs)
    }

    fn root(&self) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .unwrap_or_else(|err| panic!("{err}"))
    }

    fn write(&self, name: &str, text: &str) {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|err| panic!("{err}"));
        }
        fs::write(path, text).unwrap_or_else(|err| panic!("{err}"));
    }

    fn git_ok(&self, args: &[&str]) -> String {
        match self.git.run(self.dir.path(), args, &[]) {
            Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
            Err(err) => panic!("{err}"),
        }
    }

    fn baseline(&self) -> Baseline {
        match self.git.baseline(self.dir.path()) {
            Ok(Some(baseline)) => baseline,
            other => panic!("no baseline: {other:?}"),
        }
    }

    fn commit(&self, baseline: &Baseline, changed: &[PathBuf]) -> CommitOutcome {
        self.git
            .commit_turn(baseline, changed, "[ybs]", "add b")
            .unwrap_or_else(|err| panic!("{err}"))
    }
}

#[test]
fn commits_exactly_the_changed_files() {
    let repo = Repo::new();
    let baseline = repo.baseline();
    assert!(!baseline.staged_before);
    repo.write("a.txt", "changed\n");
    repo.write("dir/b.txt", "new\n");
    repo.write("user-edit.txt", "not the agent's\n");
    let root = repo.root();
    let outcome = repo.commit(&baseline, &[root.join("a.txt"), PathBuf::from("dir/b.txt")]);
    let CommitOutcome::Committed { id, files } = outcome else {
        panic!("not committed: {outcome:?}");
    };
    assert_eq!(files, [PathBuf::from("a.txt"), PathBuf::from("dir/b.txt")]);
    assert_eq!(repo.git_ok(&["rev-parse", "HEAD"]).trim(), id);
    assert_eq!(repo.git_ok(&["log", "-1", "--format=%s"]), "[ybs] add b\n");
    assert_eq!(
        repo.git_ok(&["show", "--name-only", "--format=", "HEAD"]),
        "a.txt\ndir/b.txt\n"
    );
    assert_eq!(
        repo.git_ok(&["status", "--porcelain"]),
        "?? user-edit.txt\n"
    );
}

#[test]
fn never_commits_over_changes_the_user_staged_before() {
    let repo = Repo::new();
    repo.write("a.txt", "staged by the user\n");
    repo.git_ok(&["add", "a.txt"]);
    let baseline = repo.baseline();
    assert!(baseline.staged_before);
    repo.write("b.txt", "agent\n");
    assert_eq!(
        repo.commit(&baseline, &[PathBuf::from("b.txt")]),
        CommitOutcome::Skipped(Skip::StagedBefore)
    );
    assert_eq!(repo.git_ok(&["rev-list", "--count", "HEAD"]).trim(), "1");
}

#[test]
fn not_a_repository_has_no_baseline() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let git = Git::with_env(vec![("GIT_CEILING_DIRECTORIES".into(), dir.path().into())]);
    assert_eq!(git.baseline(dir.path()).ok(), Some(None));
}

#[test]
fn unchanged_ignored_outside_and_vanished_files_commit_nothing() {
    let repo = Repo::new();
    let baseline = repo.baseline();
    repo.write("debug.log", "ignored\n");
    let outcome = repo.commit(
        &baseline,
        &[
            PathBuf::from("a.txt"),
            PathBuf::from("debug.log"),
            PathBuf::from("/elsewhere/x.txt"),
            PathBuf::from("gone.txt"),
            PathBuf::from(".git/config"),
        ],
    );
    assert_eq!(outcome, CommitOutcome::Skipped(Skip::NothingChanged));
}

#[test]
fn a_deleted_tracked_file_is_committed_as_a_deletion() {
    let repo = Repo::new();
    let baseline = repo.baseline();
    fs::remove_file(repo.root().join("a.txt")).unwrap_or_else(|err| panic!("{err}"));
    let outcome = repo.commit(&baseline, &[PathBuf::from("a.txt")]);
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(repo.git_ok(&["ls-files"]), ".gitignore\n");
}

#[test]
fn summaries_are_the_first_line_shortened() {
    assert_eq!(
        summary_line("\n  fix the parser\nand more"),
        "fix the parser"
    );
    let long = "x".repeat(100);
    let summary = summary_line(&long);
    assert_eq!(summary.chars().count(), 72);
    assert!(summary.ends_with('…'));
}

#[test]
fn auto_commit_runs_no_hook_and_no_fsmonitor_the_repository_names() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::new();
    let root = repo.root();
    let marker = root.join("pwned");
    let hook = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    for name in [".git/hooks/pre-commit", ".git/hooks/commit-msg", "fsmon.sh"] {
        repo.write(name, &hook);
        fs::set_permissions(root.join(name), fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|err| panic!("{err}"));
    }
    repo.git_ok(&[
        "config",
        "core.fsmonitor",
        root.join("fsmon.sh").to_str().unwrap_or(""),
    ]);
    repo.git_ok(&["config", "core.hooksPath", ".git/hooks"]);
    // Filters, diff drivers and signing programs the repository names run nothing.
    let program = format!("sh -c 'touch {}; cat'", marker.display());
    for (key, value) in [
        ("filter.x.clean", program.as_str()),
        ("filter.x.smudge", program.as_str()),
        ("filter.x.process", program.as_str()),
        ("filter.x.required", "true"),
        ("diff.y.textconv", program.as_str()),
        ("diff.y.command", program.as_str()),
        ("diff.external", program.as_str()),
        ("commit.gpgsign", "true"),
        ("gpg.program", program.as_str()),
    ] {
        repo.git_ok(&["config", key, value]);
    }
    repo.write(".gitattributes", "* filter=x diff=y\n");
    let baseline = repo.baseline();
    repo.write("b.txt", "b\n");
    let outcome = repo
        .git
        .commit_turn(&baseline, &[root.join("b.txt")], "[ybs]", "add b")
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert!(
        !marker.exists(),
        "a hook or fsmonitor of the repository ran"
    );
}

#[test]
fn a_failed_commit_unstages_the_turn_s_files_and_keeps_the_user_s_staged_ones() {
    let repo = Repo::new();
    let baseline = repo.baseline();
    repo.write("a.txt", "changed\n");
    repo.write("b.txt", "new\n");
    // Staged by the user while the turn ran.
    repo.write("user.txt", "mine\n");
    repo.git_ok(&["add", "user.txt"]);
    let root = repo.root();
    let error = repo
        .failing_commits()
        .commit_turn(
            &baseline,
            &[root.join("a.txt"), root.join("b.txt")],
            "[ybs]",
            "x",
        )
        .err()
        .unwrap_or_else(|| panic!("the commit should fail"));
    // git words the reason differently across versions; it names the date.
    let message = error.to_string();
    assert!(
        message.starts_with(
            "the turn was not committed (its changes are in the work tree, unstaged): \
             git commit failed: "
        ) && message.contains("date")
            && !message.contains('\n'),
        "{message}"
    );
    assert_eq!(
        repo.git_ok(&["diff", "--cached", "--name-only"]),
        "user.txt\n"
    );
    assert_eq!(
        repo.git_ok(&["status", "--porcelain"]),
        " M a.txt\nA  user.txt\n?? b.txt\n"
    );
    assert_eq!(repo.git_ok(&["log", "--format=%s"]), "start\n");
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).unwrap_or_default(),
        "changed\n"
    );
}

#[test]
fn a_failed_first_commit_unstages_too() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let repo = Repo {
        dir,
        git: Repo::new().git,
    };
    repo.git_ok(&["init", "--quiet"]);
    let baseline = repo.baseline();
    repo.write("b.txt", "new\n");
    let root = repo.root();
    let result = repo
        .failing_commits()
        .commit_turn(&baseline, &[root.join("b.txt")], "[ybs]", "x");
    assert!(result.is_err(), "{result:?}");
    assert_eq!(repo.git_ok(&["status", "--porcelain"]), "?? b.txt\n");
}

#[test]
fn git_failures_are_told_in_one_line() {
    let identity = "Author identity unknown\n\n*** Please tell me who you are.\n\nRun\n\n  \
        git config --global user.email \"you@example.com\"\n\nfatal: unable to auto-detect \
        email address (got 'root@vm.(none)')\n";
    assert_eq!(
        super::gist(identity),
        "no author identity is configured (set user.name and user.email with `git config`)"
    );
    assert_eq!(
        super::gist("hint: something\nfatal: not a git repository\n"),
        "not a git repository"
    );
    assert_eq!(super::gist("  odd message\n"), "odd message");
    assert_eq!(super::gist(""), "git gave no reason");
}
