//! Instructions a repository ships cannot send the user's untracked secrets.
//! An `@include` of a file git does not vouch for (untracked, ignored, inside `.git`) is an
//! instruction error until the client passes the user's consent (`allow_includes`); the
//! first bb7's client, which never does, gets the error naming the file. Every include is
//! listed with its size and why it needs consent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::World;
use serde_json::json;
use ybs_testkit::Turn;

fn git(world: &World, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
        .args(args)
        .current_dir(world.project())
        .env("HOME", world.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A cloned repository: `notes.md` and `.gitignore` committed, instructions that include
/// them, the user's ignored `.env`, an untracked draft and `.git/config`.
fn cloned_repository(world: &World) {
    world.write("notes.md", "NOTES-TRACKED\n");
    world.write(".gitignore", ".env\n");
    world.write(
        ".bb7/instructions",
        "intro\n@include notes.md\n@include .env\n@include draft.md\n@include .git/config\n",
    );
    git(world, &["init", "-q"]);
    git(
        world,
        &["add", "notes.md", ".gitignore", ".bb7/instructions"],
    );
    git(world, &["commit", "-q", "-m", "shipped"]);
    world.write(".env", "API_KEY=SECRET-FROM-ENV\n");
    world.write("draft.md", "DRAFT-UNTRACKED\n");
}

#[test]
fn unvouched_includes_are_refused_without_consent_and_listed() {
    let world = World::new();
    let server = world.serve(vec![Turn::text(["fine"])], json!({}));
    cloned_repository(&world);
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let view = daemon.call(json!({"action":"chat_get"}));
    let info = &view["instructions_info"];
    let error = info["project_error"].as_str().unwrap();
    assert!(
        error.ends_with(
            ":3: include .env is ignored by git: it is sent only once you allow it (the plugin \
             asks before the first send; a client without that question cannot: remove the \
             @include, or track the file with git)"
        ),
        "{error}"
    );
    let includes = info["project_includes"].as_array().unwrap();
    let listed: Vec<(String, Option<&str>)> = includes
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_owned(),
                i["needs_consent"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("notes.md".to_owned(), None),
            (".env".to_owned(), Some("ignored")),
            ("draft.md".to_owned(), Some("untracked")),
            (".git/config".to_owned(), Some("git_dir")),
        ]
    );
    assert_eq!(includes[1]["bytes"], 24);
    let info = daemon.call(json!({"action":"get_customization_info"}));
    assert_eq!(info["project_instructions"], false, "{info}");
    assert_eq!(info["project_includes"], json!(includes));

    // The first bb7's client sends as it always did: refused, nothing reaches the model.
    let refused = daemon.send("s1", "hello");
    let last = refused.last().unwrap();
    assert_eq!(last["type"], "error", "{last}");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("include .env is ignored by git"),
        "{last}"
    );
    assert!(common::chat_requests(&server).is_empty());
    let estimate = daemon.call(json!({"action":"estimate_tokens"}));
    assert_eq!(estimate["type"], "token_estimate", "{estimate}");

    // Consent to some is not consent to all: the first one not allowed is named.
    let ok = daemon.call(json!({"action":"allow_includes","paths":[".env"]}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let view = daemon.call(json!({"action":"chat_get"}));
    let error = view["instructions_info"]["project_error"].as_str().unwrap();
    assert!(
        error.contains(":4: include draft.md is not tracked by git"),
        "{error}"
    );

    // With the user's consent to all, the send carries them.
    let ok =
        daemon.call(json!({"action":"allow_includes","paths":[".env","draft.md",".git/config"]}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(
        view["instructions_info"].get("project_error").is_none(),
        "{view}"
    );
    let sent = daemon.send("s2", "hello");
    assert_eq!(sent.last().unwrap()["type"], "done", "{sent:?}");
    let request = common::chat_requests(&server).pop().unwrap().to_string();
    for text in [
        "NOTES-TRACKED",
        "SECRET-FROM-ENV",
        "DRAFT-UNTRACKED",
        "[core]",
    ] {
        assert!(request.contains(text), "{text} not sent");
    }
}

#[test]
fn consent_lasts_for_the_daemon_session_on_that_project_only() {
    let world = World::new();
    cloned_repository(&world);
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let ok =
        daemon.call(json!({"action":"allow_includes","paths":[".env","draft.md",".git/config"]}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let root = world.project().display().to_string();
    // The UI reopening the same project keeps it.
    let again = daemon.call(json!({"action":"init","project_root":root}));
    assert_eq!(again["type"], "ok", "{again}");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(
        view["instructions_info"].get("project_error").is_none(),
        "{view}"
    );
    // Another daemon (a restart, the first bb7's client) has not been given it.
    drop(daemon);
    let mut fresh = world.open_project();
    let view = fresh.call(json!({"action":"chat_get"}));
    assert!(
        view["instructions_info"]["project_error"]
            .as_str()
            .is_some_and(|e| e.contains("include .env is ignored by git")),
        "{view}"
    );
}

#[test]
fn tracked_includes_need_no_consent() {
    let world = World::new();
    world.write("notes.md", "NOTES\n");
    world.write(".bb7/instructions", "@include notes.md\n");
    git(&world, &["init", "-q"]);
    git(&world, &["add", "notes.md"]);
    let mut daemon = world.open_project();
    daemon.new_chat("mine");
    let view = daemon.call(json!({"action":"chat_get"}));
    let info = &view["instructions_info"];
    assert!(info.get("project_error").is_none(), "{info}");
    assert_eq!(
        info["project_includes"],
        json!([{"path": "notes.md", "bytes": 6}])
    );
}
