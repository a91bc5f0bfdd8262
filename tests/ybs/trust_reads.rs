//! What ybs itself reads from a project and sends to the model follows no link out
//! of it. A cloned repository's `AGENTS.md` or `CLAUDE.md` linked to a secret in HOME, a
//! source file linked to one (for the repository map), a `.git` linked to another repository
//! (for the environment block and the auto-commit): the request the fake LLM receives holds
//! no byte of any of them, and the other repository is not written. Each runs as the user who
//! runs the tests and, when that is root, once more as `nobody`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::process::Command;

use common::{Project, call, text};
use serde_json::json;
use ybs_testkit::Turn;

crate::both_users! {
    instruction_files_and_sources_linked_out_of_the_project_are_not_sent,
    a_git_directory_linked_to_another_repository_is_neither_read_nor_written,
    resume_reads_no_file_the_path_sandbox_refuses,
    prompt_files_linked_out_or_special_are_neither_shown_nor_sent,
    a_repository_another_user_owns_around_the_project_gives_it_nothing,
}

/// Everything the fake LLM received, as one string.
fn everything_sent(project: &Project) -> String {
    (project.llm.requests().iter())
        .map(|request| request.body.to_string())
        .collect()
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
}

fn instruction_files_and_sources_linked_out_of_the_project_are_not_sent(nobody: bool) {
    let project = Project::new(vec![Turn::text(["ok"])]);
    let home = project.path("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_rsa"), "SSH-PRIVATE-KEY-26").unwrap();
    fs::write(home.join("notes.txt"), "HOME-SECRET-26").unwrap();
    fs::write(home.join("secret.rs"), "pub fn home_secret_fn_26() {}\n").unwrap();
    project.git(&["init", "-q"]);
    let dir = project.file("");
    symlink(home.join(".ssh/id_rsa"), dir.join("AGENTS.md")).unwrap();
    fs::create_dir_all(dir.join("sub")).unwrap();
    symlink(home.join("notes.txt"), dir.join("sub/CLAUDE.md")).unwrap();
    fs::create_dir_all(dir.join("docs")).unwrap();
    fs::write(dir.join("docs/rules.md"), "PROJECT-RULES-26").unwrap();
    fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    symlink("../../docs/rules.md", dir.join("sub/deeper/AGENTS.md")).unwrap();
    // The repository map is of the working directory.
    fs::write(dir.join("sub/deeper/lib.rs"), "pub fn project_fn() {}\n").unwrap();
    symlink(home.join("secret.rs"), dir.join("sub/deeper/leak.rs")).unwrap();
    symlink(&home, dir.join("sub/deeper/home-link")).unwrap();
    if nobody && !project.run_as_nobody() {
        return;
    }
    let output = project
        .command(&["exec", "hello"])
        .current_dir(dir.join("sub/deeper"))
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let sent = everything_sent(&project);
    assert!(!sent.is_empty());
    for secret in ["SSH-PRIVATE-KEY-26", "HOME-SECRET-26", "home_secret_fn_26"] {
        assert!(!sent.contains(secret), "{secret} was sent: {sent}");
    }
    // A link inside the project is fine, and the map has the project's own source.
    assert!(sent.contains("PROJECT-RULES-26"), "{sent}");
    assert!(sent.contains("project_fn"), "{sent}");
    // The user is told which files were not read, and why.
    assert!(
        stderr.contains("AGENTS.md") && stderr.contains("outside"),
        "{stderr}"
    );
    assert!(stderr.contains("CLAUDE.md"), "{stderr}");
}

fn a_git_directory_linked_to_another_repository_is_neither_read_nor_written(nobody: bool) {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        ),
        Turn::text(["wrote"]),
    ]);
    // Auto-commit on, so that a commit into the other repository would be attempted.
    project.configure(|config| config["git"] = json!({"auto_commit": true}));
    // The user's own repository in HOME, with a file whose name is a secret.
    let dotfiles = project.path("home/dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    git(&dotfiles, &["init", "-q"]);
    fs::write(dotfiles.join("SECRET-NAME-26.txt"), "x").unwrap();
    git(&dotfiles, &["add", "."]);
    git(&dotfiles, &["commit", "-qm", "mine"]);
    let head = git(&dotfiles, &["rev-parse", "HEAD"]);
    symlink(dotfiles.join(".git"), project.file(".git")).unwrap();
    if nobody && !project.run_as_nobody() {
        return;
    }
    let output = project.ybs(&["exec", "--yes", "write a"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let sent = everything_sent(&project);
    assert!(!sent.contains("SECRET-NAME-26"), "{sent}");
    assert!(
        sent.contains("Git: not read (the project's .git leads outside the project)"),
        "{sent}"
    );
    // No commit went into the other repository, and its index is as it was.
    assert_eq!(git(&dotfiles, &["rev-parse", "HEAD"]), head, "{stderr}");
    assert_eq!(git(&dotfiles, &["status", "--short"]), "", "{stderr}");
    assert_eq!(project.read("a.txt"), "a\n");
}

/// `--resume FILE` expands the chat's `file:` and `import:` lines under the same path sandbox
/// as `ask`'s: a chat shipped in a repository (or a saved session edited since) cannot make
/// ybs read a file outside the project, or a blocked one, and send it.
fn resume_reads_no_file_the_path_sandbox_refuses(nobody: bool) {
    let project = Project::new(vec![Turn::text(["ok"]), Turn::text(["ok"])]);
    let home = project.path("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_rsa"), "SSH-PRIVATE-KEY-26").unwrap();
    fs::write(home.join("notes.txt"), "HOME-SECRET-26").unwrap();
    if nobody && !project.run_as_nobody() {
        return;
    }
    for (name, target) in [
        ("key.chat", home.join(".ssh/id_rsa")),
        ("notes.chat", home.join("notes.txt")),
    ] {
        project.write(
            name,
            &format!(
                "file: {}\n\nuser:\nwhat is this?\n\nassistant:\nA file.\n",
                target.display()
            ),
        );
        let resume = format!("--resume={name}");
        for args in [
            vec![resume.as_str(), "exec", "go on"],
            vec![resume.as_str(), "exec", "--json", "go on"],
        ] {
            let output = project.ybs(&args);
            let stderr = text(&output.stderr);
            let stdout = text(&output.stdout);
            assert_ne!(
                output.status.code(),
                Some(0),
                "{args:?}\n{stdout}\n{stderr}"
            );
            assert!(
                format!("{stdout}{stderr}").contains("may not be read"),
                "{args:?}\n{stdout}\n{stderr}"
            );
        }
    }
    let sent = everything_sent(&project);
    assert!(!sent.contains("SSH-PRIVATE-KEY-26"), "{sent}");
    assert!(!sent.contains("HOME-SECRET-26"), "{sent}");
    // A file inside the project is read as before.
    project.write("readme.txt", "PROJECT-TEXT-26");
    project.write(
        "ok.chat",
        "file: readme.txt\n\nuser:\nwhat is this?\n\nassistant:\nA file.\n",
    );
    let output = project.ybs(&["--resume=ok.chat", "exec", "go on"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(everything_sent(&project).contains("PROJECT-TEXT-26"));
}

fn prompt_files_linked_out_or_special_are_neither_shown_nor_sent(nobody: bool) {
    let project = Project::new(vec![Turn::text(["ok"]), Turn::text(["ok"])]);
    let home = project.path("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(
        home.join(".ssh/id_rsa"),
        "SSH-PRIVATE-KEY-43\nsecond line\n",
    )
    .unwrap();
    let prompts = project.file(".ybs/prompts");
    fs::create_dir_all(&prompts).unwrap();
    symlink(home.join(".ssh/id_rsa"), prompts.join("review.md")).unwrap();
    symlink("/dev/zero", prompts.join("zero.md")).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        prompts.join("pipe.md"),
        rustix::fs::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    fs::write(prompts.join("fine.md"), "Say hello.\n").unwrap();
    if nobody && !project.run_as_nobody() {
        return;
    }
    // Ends, though a FIFO and `/dev/zero` are among the prompt files.
    let output = project.ybs_with_input(&[], "/help\n/review\n/zero\n/pipe\n/fine\n");
    let shown = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!shown.contains("SSH-PRIVATE-KEY-43"), "{shown}");
    assert!(!everything_sent(&project).contains("SSH-PRIVATE-KEY-43"));
    assert!(
        shown.contains("review.md"),
        "no warning names the file: {shown}"
    );
    // The regular prompt file still works.
    assert!(everything_sent(&project).contains("Say hello."), "{shown}");
}

fn a_repository_another_user_owns_around_the_project_gives_it_nothing(nobody: bool) {
    if !common::running_as_root() {
        println!("skipped: making files another user's needs root");
        return;
    }
    let project = Project::new(vec![Turn::text(["ok"])]);
    // A stranger's repository, configuration and instructions one level above the project
    // (as in a shared, sticky /tmp).
    let above = project.path("");
    fs::create_dir_all(above.join(".git/objects")).unwrap();
    fs::create_dir_all(above.join(".git/refs")).unwrap();
    fs::write(above.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(above.join("AGENTS.md"), "STRANGER-INSTRUCTIONS-43\n").unwrap();
    fs::write(
        above.join(".ybs.json"),
        json!({"context": {"repo_map_tokens": 7}}).to_string(),
    )
    .unwrap();
    // The stranger is `nobody` when the tests run as root, root when they run as `nobody`.
    let stranger = if nobody {
        if !project.run_as_nobody() {
            return;
        }
        0
    } else {
        65534
    };
    for path in [".git", "AGENTS.md", ".ybs.json"] {
        std::os::unix::fs::lchown(above.join(path), Some(stranger), Some(stranger)).unwrap();
    }
    let output = project.ybs(&["exec", "hello"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(!everything_sent(&project).contains("STRANGER-INSTRUCTIONS-43"));
    let config = text(&project.ybs(&["config"]).stdout);
    assert!(!config.contains("repo_map_tokens = 7"), "{config}");
}
