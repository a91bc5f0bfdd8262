//! A hostile repository, a symlink or a second Neovim cannot make the daemon read,
//! write or lose anything. Every attack is planted the way a cloned repository ships it (a
//! `.bb7/` with links and FIFOs in it) and run against the real `bb7` binary; model replies
//! come from the fake OpenRouter server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Daemon, World};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, Script, ToolCall, Turn};

const MODEL: &str = "test/model";
const PLANTED: &str = "aaaaaaaaaa";

fn server(turns: Vec<Turn>) -> FakeLlm {
    FakeLlm::start(Script::new(turns).with_models([Model::new(MODEL, 200_000)])).unwrap()
}

fn init(daemon: &mut Daemon, world: &World) -> Value {
    let root = world.project().display().to_string();
    daemon.call(json!({"action":"init","project_root":root}))
}

/// A daemon on an initialized project with one new chat selected.
fn project_with_chat(world: &World) -> (Daemon, String) {
    let mut daemon = world.spawn();
    let root = world.project().display().to_string();
    assert_eq!(
        daemon.call(json!({"action":"bb7_init","project_root":root}))["type"],
        "ok"
    );
    assert_eq!(init(&mut daemon, world)["type"], "ok");
    let id = daemon.call(json!({"action":"chat_new","name":"mine"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (daemon, id)
}

fn chat_bodies(server: &FakeLlm) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| request.body.to_string())
        .collect()
}

/// A `.bb7/` as a repository would ship it: one chat, remembered as active, naming
/// `notes.txt` in context and holding `message` in its history.
fn plant_chat(world: &World, context_files: Value) -> PathBuf {
    let chats = world.chats_dir();
    let dir = chats.join(PLANTED);
    std::fs::create_dir_all(&dir).unwrap();
    let chat = json!({"version": 2, "id": PLANTED, "name": "Refactor plan",
        "created": "2026-01-01T00:00:00Z", "model": MODEL, "draft": "",
        "context_files": context_files,
        "messages": [{"role": "user", "parts": [{"type": "text", "content": "hello"}]}]});
    std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    let index = json!({"version": 1, "active_chat_id": PLANTED, "chats": [
        {"id": PLANTED, "name": "Refactor plan", "created": "2026-01-01T00:00:00Z"}]});
    std::fs::write(chats.join("index.json"), index.to_string()).unwrap();
    dir
}

/// The user's home as the attacker hopes to reach it.
fn victim_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "SECRET-KEY-MATERIAL\n").unwrap();
    home
}

fn assert_error_contains(reply: &Value, needle: &str) {
    assert_eq!(reply["type"], "error", "{reply}");
    let message = reply["message"].as_str().unwrap();
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

#[test]
fn the_hostile_repository_chain_is_broken_end_to_end() {
    let world = World::new();
    let home = victim_home();
    let server = server(vec![Turn::text(["should never be asked"])]);
    world.configure(&server.base_url(), MODEL, json!({}));
    let dir = plant_chat(
        &world,
        json!([{"path": "notes.txt", "readonly": false, "external": false, "version": "x"}]),
    );
    symlink(home.path(), dir.join("context")).unwrap();
    std::fs::create_dir(dir.join("output")).unwrap();

    let mut daemon = world.spawn();
    assert_eq!(init(&mut daemon, &world)["type"], "ok");
    let active = daemon.call(json!({"action":"chat_active"}));
    assert_eq!(
        active.get("id"),
        None,
        "init selected the planted chat: {active}"
    );

    // Listed, and selectable on purpose, but chat_get says why it is not trusted.
    let listed = daemon.call(json!({"action":"chat_list"}));
    assert_eq!(listed["chats"][0]["id"], PLANTED);
    let selected = daemon.call(json!({"action":"chat_select","id":PLANTED}));
    assert_eq!(selected["type"], "ok", "{selected}");
    let chat = daemon.call(json!({"action":"chat_get"}));
    let why = chat["untrusted"].as_str().unwrap_or_default();
    assert!(
        why.contains("symbolic link") && why.contains("context"),
        "{chat}"
    );
    let context = daemon.call(json!({"action":"get_context_file","path":"notes.txt"}));
    assert_eq!(context["type"], "error", "{context}");

    // Never sent: not a byte of the user's file reaches the model.
    let lines = daemon.send("s", "summarize my notes");
    assert_error_contains(lines.last().unwrap(), "Chat not sent");
    assert!(chat_bodies(&server).is_empty());

    // An ordinary context_add does not write through the link.
    let added = daemon.call(json!({"action":"context_add","path":"todo.txt","content":"PWNED"}));
    assert_eq!(added["type"], "error", "{added}");
    assert!(!home.path().join("todo.txt").exists());
    let update =
        daemon.call(json!({"action":"context_update","path":"notes.txt","content":"PWNED"}));
    assert_eq!(update["type"], "error", "{update}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "SECRET-KEY-MATERIAL\n"
    );
    // Deleting the chat removes the link, not the user's files.
    assert_eq!(
        daemon.call(json!({"action":"chat_delete","id":PLANTED}))["type"],
        "ok"
    );
    assert!(home.path().join("notes.txt").exists());
}

#[test]
fn a_chat_naming_a_project_file_outside_the_project_is_not_selected_or_sent() {
    let world = World::new();
    let home = victim_home();
    let server = server(vec![Turn::text(["no"])]);
    world.configure(&server.base_url(), MODEL, json!({}));
    symlink(home.path(), world.project().join("docs")).unwrap();
    let dir = plant_chat(
        &world,
        json!([{"path": "docs/notes.txt", "readonly": false, "external": false, "version": "x"}]),
    );
    std::fs::create_dir_all(dir.join("context/docs")).unwrap();
    std::fs::write(dir.join("context/docs/notes.txt"), "stale\n").unwrap();
    let mut daemon = world.spawn();
    init(&mut daemon, &world);
    assert_eq!(daemon.call(json!({"action":"chat_active"})).get("id"), None);
    daemon.call(json!({"action":"chat_select","id":PLANTED}));
    let chat = daemon.call(json!({"action":"chat_get"}));
    assert!(
        chat["untrusted"].as_str().is_some_and(
            |why| why.contains("outside the project") && why.contains("docs/notes.txt")
        ),
        "{chat}"
    );
    // sync_context would re-read the file through the link: it does not (the reply is a
    // bare `ok`, as the first bb7's; the snapshot shows nothing was read).
    let synced = daemon.call(json!({"action":"sync_context","path":"docs/notes.txt"}));
    assert_eq!(synced["type"], "ok", "{synced}");
    assert_eq!(
        daemon.call(json!({"action":"get_context_file","path":"docs/notes.txt"}))["content"],
        "stale\n"
    );
    assert_error_contains(daemon.send("s", "go").last().unwrap(), "Chat not sent");
    assert!(chat_bodies(&server).is_empty());
}

#[test]
fn symlinked_outputs_are_neither_read_nor_deleted_nor_applied() {
    let world = World::new();
    let home = victim_home();
    let (mut daemon, id) = project_with_chat(&world);
    let output = world.chats_dir().join(&id).join("output");
    std::fs::remove_dir(&output).unwrap();
    symlink(home.path(), &output).unwrap();
    for action in [
        "get_output_file",
        "output_delete",
        "apply_file",
        "get_diff_paths",
    ] {
        let reply = daemon.call(json!({"action":action,"path":"notes.txt"}));
        assert_eq!(reply["type"], "error", "{action}: {reply}");
        assert!(!reply.to_string().contains("SECRET"), "{action}: {reply}");
    }
    let reply =
        daemon.call(json!({"action":"apply_file_as","path":"notes.txt","destination":"copy.txt"}));
    assert_eq!(reply["type"], "error", "{reply}");
    let statuses = daemon.call(json!({"action":"get_file_statuses"}));
    assert_error_contains(&statuses, "is a symbolic link");
    let done = daemon.call(json!({"action":"diff_local_done","path":"notes.txt"}));
    assert_eq!(done["outcome"], "none", "{done}");
    assert!(home.path().join("notes.txt").exists());
    assert!(!world.project().join("copy.txt").exists());
    assert!(!world.project().join("notes.txt").exists());

    // A link to one file inside a real output/ is not an output either.
    std::fs::remove_file(&output).unwrap();
    std::fs::create_dir(&output).unwrap();
    symlink(home.path().join("notes.txt"), output.join("notes.txt")).unwrap();
    let reply = daemon.call(json!({"action":"get_output_file","path":"notes.txt"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(
        daemon.call(json!({"action":"get_file_statuses"}))["files"],
        json!([])
    );
}

#[test]
fn a_symlinked_snapshot_or_chat_json_is_not_followed() {
    let world = World::new();
    let home = victim_home();
    let (mut daemon, id) = project_with_chat(&world);
    assert_eq!(
        daemon.call(json!({"action":"context_add","path":"a.txt","content":"mine"}))["type"],
        "ok"
    );
    let dir = world.chats_dir().join(&id);
    std::fs::remove_file(dir.join("context/a.txt")).unwrap();
    symlink(home.path().join("notes.txt"), dir.join("context/a.txt")).unwrap();
    let reply = daemon.call(json!({"action":"get_context_file","path":"a.txt"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(!reply.to_string().contains("SECRET"));
    // context_update replaces the link with a file; the target is untouched.
    assert_eq!(
        daemon.call(json!({"action":"context_update","path":"a.txt","content":"new"}))["type"],
        "ok"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "SECRET-KEY-MATERIAL\n"
    );
    drop(daemon);

    // chat.json itself a link: the chat is not listed and cannot be selected.
    let chat_json = dir.join("chat.json");
    std::fs::copy(&chat_json, home.path().join("chat.json")).unwrap();
    std::fs::remove_file(&chat_json).unwrap();
    symlink(home.path().join("chat.json"), &chat_json).unwrap();
    let mut daemon = world.spawn();
    init(&mut daemon, &world);
    assert_eq!(daemon.call(json!({"action":"chat_active"})).get("id"), None);
    assert_eq!(
        daemon.call(json!({"action":"chat_list"}))["chats"],
        json!([])
    );
    assert_eq!(
        daemon.call(json!({"action":"chat_select","id":id}))["type"],
        "error"
    );
}

#[test]
fn a_symlinked_chats_dir_or_bb7_dir_is_refused() {
    let world = World::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(world.project().join(".bb7")).unwrap();
    symlink(elsewhere.path(), world.chats_dir()).unwrap();
    let mut daemon = world.spawn();
    init(&mut daemon, &world);
    let created = daemon.call(json!({"action":"chat_new","name":"x"}));
    assert_eq!(created["type"], "error", "{created}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn instructions_as_a_link_or_including_a_fifo_are_refused_without_blocking() {
    let world = World::new();
    let home = victim_home();
    let (mut daemon, _id) = project_with_chat(&world);
    let instructions = world.project().join(".bb7/instructions");
    symlink(home.path().join("notes.txt"), &instructions).unwrap();
    let info = daemon.call(json!({"action":"get_customization_info"}));
    assert_eq!(info["project_instructions"], false, "{info}");
    let why = info["project_instructions_error"].as_str().unwrap();
    assert!(why.contains("symbolic link"), "{why}");
    assert!(!info.to_string().contains("SECRET"));
    let prepared = daemon.call(json!({"action":"prepare_instructions","level":"project"}));
    assert_eq!(prepared["type"], "error", "{prepared}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "SECRET-KEY-MATERIAL\n"
    );

    std::fs::remove_file(&instructions).unwrap();
    let fifo = world.project().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(&instructions, "Be brief.\n@include pipe\n").unwrap();
    let started = Instant::now();
    let info = daemon.call(json!({"action":"get_customization_info"}));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        info["project_instructions_error"]
            .as_str()
            .unwrap()
            .rsplit(": ")
            .next(),
        Some("pipe"),
        "{info}"
    );
    assert!(
        info["project_instructions_error"]
            .as_str()
            .unwrap()
            .contains(":2: include is not a regular file")
    );
}

#[test]
fn a_relative_path_through_a_link_out_of_the_project_is_external_like_its_absolute_form() {
    let world = World::new();
    let home = victim_home();
    let (mut daemon, _id) = project_with_chat(&world);
    symlink(home.path(), world.project().join("shared")).unwrap();
    let added =
        daemon.call(json!({"action":"context_add","path":"shared/notes.txt","content":"n"}));
    assert_eq!(added["type"], "ok", "{added}");
    let files = daemon.call(json!({"action":"context_list"}))["files"].clone();
    let absolute = world
        .project()
        .join("shared/notes.txt")
        .display()
        .to_string();
    assert_eq!(files[0]["path"], json!(absolute));
    assert_eq!(files[0]["external"], true);
    assert_eq!(files[0]["readonly"], true);
    let again = daemon.call(json!({"action":"context_add","path":absolute,"content":"n"}));
    assert_error_contains(&again, "already exists");
    let writable = daemon
        .call(json!({"action":"context_set_readonly","path":"shared/notes.txt","readonly":false}));
    assert_error_contains(&writable, "external files are always read-only");
}

/// A chat whose output holds `notes.txt`, written the way a send writes it.
fn chat_with_output(world: &World) -> (Daemon, String, FakeLlm) {
    let server = server(vec![Turn::text(["ok"]).with_tool_call(ToolCall::new(
        "c1",
        "write_file",
        json!({"path":"notes.txt","content":"from the model\n"}),
    ))]);
    world.configure(&server.base_url(), MODEL, json!({}));
    let (mut daemon, id) = project_with_chat(world);
    let done = daemon.send("s", "write notes");
    assert_eq!(done.last().unwrap()["type"], "done", "{done:?}");
    (daemon, id, server)
}

#[test]
fn apply_file_as_never_targets_bb7_or_git() {
    let world = World::new();
    let (mut daemon, id, _server) = chat_with_output(&world);
    std::fs::create_dir_all(world.project().join(".git")).unwrap();
    symlink(world.project().join(".git"), world.project().join("gitdir")).unwrap();
    let chat_json = format!(".bb7/chats/{id}/chat.json");
    let absolute_hook = world
        .project()
        .join(".git/hooks/post-checkout")
        .display()
        .to_string();
    for destination in [
        chat_json.as_str(),
        ".bb7/instructions",
        ".git/hooks/pre-commit",
        absolute_hook.as_str(),
        "gitdir/config",
    ] {
        let reply = daemon
            .call(json!({"action":"apply_file_as","path":"notes.txt","destination":destination}));
        assert_error_contains(&reply, "inside .bb7/ or .git/");
    }
    assert!(!world.project().join(".git/hooks").exists());
    assert!(!world.project().join(".git/config").exists());
    assert!(!world.project().join(".bb7/instructions").exists());
    let output = daemon.call(json!({"action":"get_output_file","path":"notes.txt"}));
    assert_eq!(output["content"], "from the model\n", "the output is kept");
}

#[test]
fn files_under_bb7_get_ordinary_modes() {
    let world = World::new();
    let (mut daemon, id, _server) = chat_with_output(&world);
    daemon.call(json!({"action":"context_add","path":"a.txt","content":"a"}));
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .map(|mask| u32::from_str_radix(mask.trim(), 8).unwrap())
        .unwrap();
    let expected = 0o666 & !umask;
    let dir = world.chats_dir().join(&id);
    for path in ["chat.json", "context/a.txt", "output/notes.txt"] {
        let mode = std::fs::metadata(dir.join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, expected, "{path}");
    }
    let index = world.chats_dir().join("index.json");
    assert_eq!(
        std::fs::metadata(index).unwrap().permissions().mode() & 0o777,
        expected
    );
}

#[test]
fn the_output_write_cannot_be_redirected_by_a_concurrent_link_flip() {
    // The model writes `dir/x.txt` while another process keeps swapping `output/dir` between
    // a directory and a link out of the project. Whatever the timing, nothing lands outside:
    // the write either goes into the real directory or the daemon stops on the guard.
    for run in 0..6 {
        let world = World::new();
        let outside = tempfile::tempdir().unwrap();
        let server = server(vec![Turn::text(["ok"]).with_tool_call(ToolCall::new(
            "c1",
            "write_file",
            json!({"path":"dir/x.txt","content":"model bytes\n"}),
        ))]);
        world.configure(&server.base_url(), MODEL, json!({}));
        let (mut daemon, id) = project_with_chat(&world);
        let output = world.chats_dir().join(&id).join("output");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let stop = stop.clone();
            let output = output.clone();
            let outside = outside.path().to_path_buf();
            std::thread::spawn(move || {
                let real = output.join("real");
                let dir = output.join("dir");
                let link = output.join("link");
                let _ = std::fs::create_dir_all(&real);
                let _ = symlink(&outside, &link);
                let mut flips = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && flips < 200_000 {
                    let from = if flips % 2 == 0 { &link } else { &real };
                    let _ = std::fs::remove_file(&dir);
                    let _ = std::fs::remove_dir(&dir);
                    let _ = std::os::unix::fs::symlink(&outside, &link);
                    let _ = std::fs::rename(from, &dir);
                    flips += 1;
                }
            })
        };
        daemon.send_line(&json!({"request_id":"s","action":"send","content":"go"}).to_string());
        while let Some(line) = daemon.read_reply() {
            if line["request_id"] == "s"
                && matches!(line["type"].as_str(), Some("done" | "diff_error" | "error"))
            {
                break;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        flipper.join().unwrap();
        assert!(
            !outside.path().join("x.txt").exists(),
            "run {run}: model bytes left the project"
        );
    }
}

#[test]
fn a_copied_chat_directory_never_overwrites_the_original() {
    let world = World::new();
    let (mut daemon, original) = project_with_chat(&world);
    daemon.call(json!({"action":"add_system_message","content":"original history"}));
    let copy = "bbbbbbbbbb";
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(world.chats_dir().join(&original))
        .arg(world.chats_dir().join(copy))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_file(world.chats_dir().join(copy).join("lock")).unwrap();
    assert_eq!(
        daemon.call(json!({"action":"chat_select","id":copy}))["type"],
        "ok"
    );
    assert_eq!(daemon.call(json!({"action":"chat_get"}))["id"], copy);
    daemon.call(json!({"action":"add_system_message","content":"only in the copy"}));
    daemon.call(json!({"action":"chat_rename","id":copy,"name":"the copy"}));
    let original_json =
        std::fs::read_to_string(world.chats_dir().join(&original).join("chat.json")).unwrap();
    assert!(
        !original_json.contains("only in the copy"),
        "{original_json}"
    );
    assert!(original_json.contains("\"mine\""));
    let copy_json: Value = serde_json::from_str(
        &std::fs::read_to_string(world.chats_dir().join(copy).join("chat.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(copy_json["id"], copy);
    let mut ids: Vec<String> = daemon.call(json!({"action":"chat_list"}))["chats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chat| chat["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    let mut expected = vec![original.clone(), copy.to_owned()];
    expected.sort();
    assert_eq!(ids, expected);
}

/// Sends `request` to both daemons before reading either reply.
fn race(a: &mut Daemon, b: &mut Daemon, request: Value) -> (Value, Value) {
    let line = |id: &str| {
        let mut request = request.clone();
        request["request_id"] = json!(id);
        request.to_string()
    };
    a.send_line(&line("r"));
    b.send_line(&line("r"));
    (a.read_reply().unwrap(), b.read_reply().unwrap())
}

fn exactly_one_wins(first: &Value, second: &Value) {
    let oks = [first, second].iter().filter(|r| r["type"] == "ok").count();
    assert_eq!(oks, 1, "{first} / {second}");
    let loser = if first["type"] == "ok" { second } else { first };
    assert_error_contains(loser, "Chat is locked by another bb7 process");
}

#[test]
fn two_daemons_selecting_one_chat_exactly_one_wins() {
    let world = World::new();
    let (mut daemon, id) = project_with_chat(&world);
    assert_eq!(daemon.call(json!({"action":"shutdown"}))["type"], "ok");
    daemon.wait();
    for _ in 0..12 {
        let mut a = world.spawn();
        let mut b = world.spawn();
        init(&mut a, &world);
        init(&mut b, &world);
        // The first init may have restored the chat; start from nothing selected.
        for daemon in [&mut a, &mut b] {
            daemon.call(json!({"action":"chat_new","name":"other"}));
        }
        let (first, second) = race(&mut a, &mut b, json!({"action":"chat_select","id":id}));
        exactly_one_wins(&first, &second);
        let winner = if first["type"] == "ok" { a } else { b };
        let (_, _) = winner.wait();
    }
}

#[test]
fn two_inits_restore_the_remembered_chat_once() {
    let world = World::new();
    let (mut daemon, id) = project_with_chat(&world);
    daemon.call(json!({"action":"shutdown"}));
    daemon.wait();
    let root = world.project().display().to_string();
    for _ in 0..8 {
        let mut a = world.spawn();
        let mut b = world.spawn();
        let (first, second) = race(&mut a, &mut b, json!({"action":"init","project_root":root}));
        assert_eq!(
            (first["type"].as_str(), second["type"].as_str()),
            (Some("ok"), Some("ok"))
        );
        let selected: Vec<bool> = [&mut a, &mut b]
            .into_iter()
            .map(|daemon| daemon.call(json!({"action":"chat_active"}))["id"] == json!(id))
            .collect();
        assert_eq!(
            selected.iter().filter(|s| **s).count(),
            1,
            "both or neither restored the chat: {selected:?}"
        );
        // Give the index back its remembered chat for the next round.
        let winner = if selected[0] { a } else { b };
        winner.wait();
    }
}

/// Whether a chat directory holds a send in progress: staging (`.send-*`) or, with
/// `committed`, only past its commit point (`.commit`).
fn committing(chat_dir: &Path, committed: bool) -> bool {
    std::fs::read_dir(chat_dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name == ".commit" || (!committed && name.starts_with(".send-"))
        })
    })
}

#[test]
fn a_sigkill_during_the_commit_leaves_all_or_nothing() {
    const FILES: usize = 150;
    let mut outcomes = Vec::new();
    for run in 0..6u64 {
        let mut turn = Turn::text(["writing many"]);
        for i in 0..FILES {
            turn = turn.with_tool_call(ToolCall::new(
                format!("c{i}"),
                "write_file",
                json!({"path":format!("gen/f{i:03}.txt"),"content":format!("file {i}\n")}),
            ));
        }
        let world = World::new();
        let server = server(vec![turn]);
        world.configure(&server.base_url(), MODEL, json!({}));
        let (mut daemon, id) = project_with_chat(&world);
        let chat_dir = world.chats_dir().join(&id);
        std::fs::write(
            chat_dir.join("output/.tmpAb12Cd"),
            "leftover of an old crash",
        )
        .unwrap();
        daemon.send_line(&json!({"request_id":"s","action":"send","content":"go"}).to_string());
        // Even runs are killed while staging (or just after), odd runs once the commit point
        // is passed, while the files are being moved into place.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !committing(&chat_dir, run % 2 == 1) && Instant::now() < deadline {
            std::hint::spin_loop();
        }
        std::thread::sleep(Duration::from_micros(200 * (run / 2)));
        daemon.child.kill().unwrap();
        daemon.child.wait().unwrap();

        let mut daemon = world.spawn();
        init(&mut daemon, &world);
        assert_eq!(
            daemon.call(json!({"action":"chat_active"}))["id"],
            json!(id)
        );
        let chat = daemon.call(json!({"action":"chat_get"}));
        let replies: Vec<&Value> = chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant" && m["output_files"].is_array())
            .collect();
        let statuses = daemon.call(json!({"action":"get_file_statuses"}));
        let outputs: Vec<&str> = statuses["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert!(
            outputs.iter().all(|p| p.starts_with("gen/f")),
            "{outputs:?}"
        );
        match replies.len() {
            0 => assert!(
                outputs.is_empty(),
                "run {run}: outputs without a reply: {}",
                outputs.len()
            ),
            1 => assert_eq!(
                outputs.len(),
                FILES,
                "run {run}: a reply with some outputs missing"
            ),
            n => panic!("run {run}: {n} replies"),
        }
        assert!(
            !committing(&chat_dir, false),
            "run {run}: the commit was not cleaned up"
        );
        outcomes.push(replies.len());
    }
    eprintln!("commit outcomes (0 = rolled back, 1 = complete): {outcomes:?}");
}

#[test]
fn a_write_that_fails_is_a_diff_error_not_reported_as_written() {
    let world = World::new();
    let server = server(vec![
        Turn::text(["first"]).with_tool_call(ToolCall::new(
            "c1",
            "write_file",
            json!({"path":"a","content":"a file\n"}),
        )),
        Turn::text(["second"])
            .with_tool_call(ToolCall::new(
                "c2",
                "write_file",
                json!({"path":"b.txt","content":"b\n"}),
            ))
            .with_tool_call(ToolCall::new(
                "c3",
                "write_file",
                json!({"path":"a/inner.txt","content":"cannot be: a is a file\n"}),
            )),
    ]);
    world.configure(&server.base_url(), MODEL, json!({}));
    let (mut daemon, id) = project_with_chat(&world);
    assert_eq!(daemon.send("s", "one").last().unwrap()["type"], "done");
    let lines = daemon.send("s", "two");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert!(
        last["errors"][0]
            .as_str()
            .unwrap()
            .contains("output not written"),
        "{last}"
    );
    let output = world.chats_dir().join(&id).join("output");
    assert!(
        !output.join("b.txt").exists(),
        "all or nothing: b.txt was written"
    );
    assert_eq!(
        std::fs::read_to_string(output.join("a")).unwrap(),
        "a file\n"
    );
    let chat = daemon.call(json!({"action":"chat_get"}));
    let last_message = chat["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_message["output_files"], Value::Null, "{last_message}");
}

#[test]
fn diff_local_done_does_not_snapshot_a_local_link_out_of_the_project() {
    let world = World::new();
    let home = victim_home();
    let (mut daemon, _id, _server) = chat_with_output(&world);
    symlink(
        home.path().join("notes.txt"),
        world.project().join("notes.txt"),
    )
    .unwrap();
    let done = daemon.call(json!({"action":"diff_local_done","path":"notes.txt"}));
    assert_eq!(done["outcome"], "none", "{done}");
    let chat = daemon.call(json!({"action":"chat_get"}));
    assert!(!chat.to_string().contains("SECRET"));
    let context = daemon.call(json!({"action":"get_context_file","path":"notes.txt"}));
    assert!(!context.to_string().contains("SECRET"), "{context}");
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=attacker",
            "-c",
            "user.email=a@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_git_clone_of_a_hostile_repository_reads_and_writes_nothing_outside() {
    // The attack exactly as it arrives: a repository whose `.bb7/` holds a remembered chat
    // whose `context/` links to the user's home, and an `instructions` linking there too.
    let home = victim_home();
    let upstream = tempfile::tempdir().unwrap();
    let chat_dir = upstream.path().join(".bb7/chats").join(PLANTED);
    std::fs::create_dir_all(&chat_dir).unwrap();
    let chat = json!({"version": 2, "id": PLANTED, "name": "Refactor plan",
        "created": "2026-01-01T00:00:00Z", "model": MODEL, "draft": "",
        "context_files": [{"path": "notes.txt", "readonly": false, "external": false, "version": "x"}],
        "messages": []});
    std::fs::write(chat_dir.join("chat.json"), chat.to_string()).unwrap();
    let index = json!({"version": 1, "active_chat_id": PLANTED, "chats": []});
    std::fs::write(
        upstream.path().join(".bb7/chats/index.json"),
        index.to_string(),
    )
    .unwrap();
    symlink(home.path(), chat_dir.join("context")).unwrap();
    symlink(
        home.path().join("notes.txt"),
        upstream.path().join(".bb7/instructions"),
    )
    .unwrap();
    std::fs::write(upstream.path().join("README"), "hello\n").unwrap();
    git(upstream.path(), &["init", "-q"]);
    git(upstream.path(), &["add", "-A"]);
    git(upstream.path(), &["commit", "-q", "-m", "init"]);

    let world = World::new();
    let project = world.project();
    git(
        world.root().as_path(),
        &[
            "clone",
            "-q",
            upstream.path().to_str().unwrap(),
            project.to_str().unwrap(),
        ],
    );
    assert!(
        std::fs::symlink_metadata(world.chats_dir().join(PLANTED).join("context"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "git recreated the link"
    );
    let server = server(vec![Turn::text(["never"])]);
    world.configure(&server.base_url(), MODEL, json!({}));
    let mut daemon = world.spawn();
    assert_eq!(init(&mut daemon, &world)["type"], "ok");
    assert_eq!(daemon.call(json!({"action":"chat_active"})).get("id"), None);
    daemon.call(json!({"action":"chat_select","id":PLANTED}));
    assert!(daemon.call(json!({"action":"chat_get"}))["untrusted"].is_string());
    assert_error_contains(daemon.send("s", "go").last().unwrap(), "Chat not sent");
    let added = daemon.call(json!({"action":"context_add","path":"README","content":"hello\n"}));
    assert_eq!(added["type"], "error", "{added}");
    // A fresh chat in the cloned project sends, without the linked instructions.
    daemon.call(json!({"action":"chat_new","name":"mine"}));
    let lines = daemon.send("s", "hi");
    assert_error_contains(lines.last().unwrap(), "symbolic link");
    for body in chat_bodies(&server) {
        assert!(!body.contains("SECRET"), "{body}");
    }
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        1,
        "nothing written in home"
    );
}

#[test]
fn chat_new_with_context_reads_nothing_through_a_link_or_from_external_originals() {
    let world = World::new();
    let (mut daemon, id) = project_with_chat(&world);
    let home = victim_home();
    std::fs::create_dir_all(world.project().join("docs")).unwrap();
    std::fs::write(world.project().join("docs/notes.txt"), "mine\n").unwrap();
    std::fs::write(world.project().join("kept.txt"), "old\n").unwrap();
    let external = home.path().join("notes.txt");
    for (path, content) in [
        ("docs/notes.txt".to_owned(), "mine\n"),
        ("kept.txt".to_owned(), "old\n"),
        (external.display().to_string(), "SECRET-KEY-MATERIAL\n"),
    ] {
        let reply = daemon.call(json!({"action":"context_add","path":path,"content":content}));
        assert_eq!(reply["type"], "ok", "{reply}");
    }
    // After the files were added: the folder becomes a link to the victim's home, the
    // external original changes, and an in-project file changes as the user edits it.
    std::fs::remove_dir_all(world.project().join("docs")).unwrap();
    symlink(home.path(), world.project().join("docs")).unwrap();
    std::fs::write(&external, "NEWER-SECRET\n").unwrap();
    std::fs::write(world.project().join("kept.txt"), "new\n").unwrap();

    let reply = daemon.call(json!({"action":"chat_new_with_context","source_chat_id":id}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let files = daemon.call(json!({"action":"context_list"}))["files"].clone();
    let paths: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert!(!paths.contains(&"docs/notes.txt"), "{files}");
    let content = |daemon: &mut Daemon, path: &str| {
        daemon.call(json!({"action":"get_context_file","path":path}))["content"].clone()
    };
    assert_eq!(
        content(&mut daemon, "kept.txt"),
        "new\n",
        "in-project files are re-read"
    );
    assert_eq!(
        content(&mut daemon, &external.display().to_string()),
        "SECRET-KEY-MATERIAL\n",
        "an external entry keeps its snapshot; its original is not read again"
    );
}
