//! End to end against the fake LLM: `git.auto_commit` is opt-in (nothing is committed unless
//! asked, the banner says when it is on), and undo takes back a turn in a fresh repository,
//! whose first commit is the turn's, and restores the files even where git cannot drop the
//! commit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{Project, call, text};
use serde_json::json;
use ybs_testkit::Turn;

fn succeeds(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// A turn that edits `kept.txt` and creates `made.txt`.
fn edit_and_create() -> Vec<Turn> {
    vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
        ),
        call(
            "c2",
            "write_file",
            json!({"path": "made.txt", "content": "x\n"}),
        ),
        Turn::text(["Edited."]),
    ]
}

/// A repository just made with `git init`: no commit yet, `kept.txt` untracked.
fn fresh_repository(auto_commit: bool) -> Project {
    let project = Project::new(edit_and_create());
    if auto_commit {
        project.configure(|config| config["git"] = json!({"auto_commit": true}));
    }
    project.git(&["init", "-q", "-b", "main"]);
    project.write("kept.txt", "old\n");
    project
}

/// Whether the branch has no commit (as after `git init`).
fn unborn(project: &Project) -> bool {
    !project
        .command_of(std::path::Path::new("git"))
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn by_default_nothing_is_committed_and_the_banner_says_nothing_of_commits() {
    let project = fresh_repository(false);
    let output = project.ybs(&["exec", "--yes", "edit"]);
    succeeds(&output);
    assert!(
        !text(&output.stderr).contains("committed"),
        "{}",
        text(&output.stderr)
    );
    assert!(unborn(&project));
    assert_eq!(project.read("kept.txt"), "new\n");
    assert_eq!(
        project.git(&["status", "--porcelain"]),
        "?? kept.txt\n?? made.txt\n"
    );
    let repl = project.ybs_with_input(&[], "");
    let banner = text(&repl.stdout);
    assert!(banner.starts_with("ybs "), "{banner}");
    assert!(!banner.contains("auto-commit"), "{banner}");
    let listed = succeeds(&project.ybs(&["config"]));
    assert!(
        listed.contains("git.auto_commit = false") && listed.contains("# default"),
        "{listed}"
    );
}

#[test]
fn with_auto_commit_the_banner_says_so() {
    let project = fresh_repository(true);
    let repl = project.ybs_with_input(&[], "");
    let banner = text(&repl.stdout);
    let first = banner.lines().next().unwrap_or_default();
    assert!(first.contains(", auto-commit on"), "{banner}");
}

#[test]
fn undo_in_a_fresh_repository_removes_the_first_commit_and_restores_the_files() {
    let project = fresh_repository(true);
    let output = project.ybs(&["exec", "--yes", "edit"]);
    succeeds(&output);
    assert!(text(&output.stderr).contains("ybs: committed 2 files as "));
    assert_eq!(project.git(&["log", "--format=%s"]), "[ybs] edit\n");
    let stdout = succeeds(&project.ybs(&["undo"]));
    assert!(stdout.contains("restored kept.txt\n"), "{stdout}");
    assert!(
        stdout.contains("removed made.txt (the turn created it)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(", the repository's first (its branch is unborn again;"),
        "{stdout}"
    );
    assert!(!stdout.contains("error"), "{stdout}");
    // The repository is as `git init` left it, the file as the user had it.
    assert!(unborn(&project));
    assert_eq!(project.git(&["status", "--porcelain"]), "?? kept.txt\n");
    assert_eq!(project.read("kept.txt"), "old\n");
    assert!(!project.file("made.txt").exists());
}

#[test]
fn repl_undo_in_a_fresh_repository_removes_the_first_commit() {
    let project = fresh_repository(true);
    let output = project.ybs_with_input(&[], "edit\ny\ny\n/undo\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(
        stdout.contains(", the repository's first (its branch is unborn again;"),
        "{stdout}"
    );
    assert!(!stdout.contains("cannot undo"), "{stdout}");
    assert!(unborn(&project));
    assert_eq!(project.read("kept.txt"), "old\n");
    assert!(!project.file("made.txt").exists());
}

#[test]
fn when_git_cannot_drop_the_commit_the_files_are_restored_all_the_same() {
    let project = fresh_repository(true);
    project.write("base.txt", "base\n");
    project.git(&["add", "base.txt"]);
    project.git(&["commit", "-qm", "start"]);
    succeeds(&project.ybs(&["exec", "--yes", "edit"]));
    let head = project.git(&["rev-parse", "HEAD"]);
    // Another git process holds the branch: git refuses to move it.
    let lock = project.file(".git/refs/heads/main.lock");
    fs::write(&lock, "").unwrap();
    let stdout = succeeds(&project.ybs(&["undo"]));
    let short: String = head.chars().take(8).collect();
    assert!(
        stdout.contains(&format!("the commit {short} stays (git ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("; the files are restored in the work tree"),
        "{stdout}"
    );
    assert_eq!(project.read("kept.txt"), "old\n");
    assert!(!project.file("made.txt").exists());
    fs::remove_file(&lock).unwrap();
    assert_eq!(project.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(project.git(&["log", "--format=%s"]), "[ybs] edit\nstart\n");
}
