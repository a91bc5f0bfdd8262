//! More attacks on the daemon: each test performs one attack (a hostile
//! repository, a second daemon, a kill midway, a full disk) against the real `bb7` binary and
//! checks its replies and what is on disk. Model replies come from the fake OpenRouter server
//! on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Daemon, World};
use serde_json::{Value, json};
use ybs_testkit::{ToolCall, Turn};

fn ok(reply: Value) -> Value {
    assert_eq!(reply["type"], "ok", "{reply}");
    reply
}

fn global_chats(world: &World) -> PathBuf {
    world.home().join(".bb7/chats")
}

fn list_ids(daemon: &mut Daemon, global: bool) -> Vec<String> {
    let reply = daemon.call(json!({"action":"chat_list","global":global}));
    reply["chats"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .map(|chat| chat["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Every file below `dir`, relative and sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(here) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&here) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// A global chat holding a snapshot of a file outside the project (the user's secret).
fn global_chat_with_secret(daemon: &mut Daemon, world: &World) -> String {
    let secret = world.root().join("secret.txt");
    std::fs::write(&secret, "SECRET-KEY-MATERIAL\n").unwrap();
    let id = daemon.call(json!({"action":"chat_new","name":"mine","global":true}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ok(daemon.call(json!({"action":"context_add","path":secret.display().to_string()})));
    id
}

// A repository shipping `.bb7/chats` (or `.bb7`) as a link into its work tree cannot
// make `chat_move` put a chat there.
#[test]
fn chat_move_into_a_linked_chats_dir_writes_nothing_and_loses_nothing() {
    for linked in [".bb7/chats", ".bb7"] {
        let world = World::new();
        let mut daemon = world.open_project();
        let id = global_chat_with_secret(&mut daemon, &world);
        // A pull replaces the project's store by a link into the work tree.
        let leak = world.project().join("docs/leak");
        std::fs::create_dir_all(&leak).unwrap();
        let link = world.project().join(linked);
        std::fs::remove_dir_all(&link).unwrap();
        symlink(&leak, &link).unwrap();
        let reply = daemon.call(json!({"action":"chat_move","id":id,"to":"project"}));
        assert_eq!(reply["type"], "error", "{linked}: {reply}");
        assert_eq!(files_below(&leak), Vec::<String>::new(), "{linked}");
        assert!(list_ids(&mut daemon, true).contains(&id), "{linked}");
        let snapshot_dir = global_chats(&world).join(&id).join("context/_external");
        let kept = files_below(&snapshot_dir);
        assert_eq!(kept.len(), 1, "{linked}: the snapshot stays: {kept:?}");
    }
}

/// A tmpfs mounted on `dir` (root only); `None` where mounting is not allowed.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

// A move between file systems is all or nothing, and a move cut short after its copy
// reached the target is finished by the next `chat_move` instead of refused.
#[test]
fn chat_move_across_file_systems_is_all_or_nothing_and_a_cut_short_move_finishes() {
    let world = World::new();
    let Some(_mount) = Mount::tmpfs(&world.home().join(".bb7"), "16m") else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let mut daemon = world.open_project();
    let id = global_chat_with_secret(&mut daemon, &world);
    let global_dir = global_chats(&world).join(&id);
    let before = files_below(&global_dir);
    ok(daemon.call(json!({"action":"chat_new","name":"other","global":true})));
    ok(daemon.call(json!({"action":"chat_move","id":id,"to":"project"})));
    let moved = world.chats_dir().join(&id);
    assert!(!global_dir.exists());
    let after: Vec<String> = files_below(&moved)
        .into_iter()
        .filter(|name| name != "lock")
        .collect();
    let before: Vec<String> = before.into_iter().filter(|name| name != "lock").collect();
    assert_eq!(after, before);
    let leftovers: Vec<String> = std::fs::read_dir(world.chats_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".bb7-tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
    assert!(list_ids(&mut daemon, false).contains(&id));
    assert!(!list_ids(&mut daemon, true).contains(&id));

    // The state a kill leaves after the copy was renamed into place but before the source
    // was removed: the chat in both stores, the source marked. A kill earlier leaves a
    // temporary copy, which is no chat and is cleared by the next attempt.
    let back = global_chats(&world).join(&id);
    Command::new("cp")
        .arg("-a")
        .arg(&moved)
        .arg(&back)
        .status()
        .unwrap();
    std::fs::write(moved.join(".bb7-moved"), "").unwrap();
    let staging = world.chats_dir().join(format!(".bb7-tmp-move-{id}"));
    std::fs::create_dir_all(staging.join("context")).unwrap();
    std::fs::write(staging.join("chat.json"), "{}").unwrap();
    assert!(!list_ids(&mut daemon, false).contains(&format!(".bb7-tmp-move-{id}")));
    ok(daemon.call(json!({"action":"chat_move","id":id,"to":"global"})));
    assert!(!moved.exists(), "the marked source is removed");
    assert!(back.join("chat.json").is_file());
    assert!(!back.join(".bb7-moved").exists());
    assert!(list_ids(&mut daemon, true).contains(&id));
    assert!(!list_ids(&mut daemon, false).contains(&id));
    // Without the marker, an existing target is still refused.
    let third = daemon.new_chat("third");
    std::fs::create_dir_all(global_chats(&world).join(&third)).unwrap();
    let reply = daemon.call(json!({"action":"chat_move","id":third,"to":"global"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(world.chats_dir().join(&third).join("chat.json").is_file());
}

/// Plants `count` global chats of about `size` bytes each, to make `search_chats` slow.
fn plant_big_global_chats(world: &World, count: usize, size: usize) {
    let chats = global_chats(world);
    let filler = "lorem ipsum ".repeat(size / 12);
    for n in 0..count {
        let id = format!("b{n:09}");
        let dir = chats.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        let chat = json!({"version": 2, "id": id, "name": "big", "model": "test/model",
            "created": "2026-01-01T00:00:00Z", "draft": "", "context_files": [],
            "messages": [{"role": "user", "parts": [{"type": "text", "content": filler}]}]});
        std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    }
}

// A change read while the stream ran, but handled after it ended (behind a slow
// read-only request), neither loses the committed reply nor works on the replaced copy.
#[test]
fn a_change_queued_behind_a_slow_request_at_the_end_of_a_stream_loses_no_reply() {
    let world = World::new();
    let _server = world.serve(
        vec![Turn::text(["REPLY-ONE ", "REPLY-TWO ", "REPLY-END"]).with_delay_ms(150)],
        json!({}),
    );
    world.write("notes.txt", "notes\n");
    plant_big_global_chats(&world, 40, 1_500_000);
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    daemon.start_send("s", "hi");
    for request in [
        json!({"request_id":"slow","action":"search_chats","query":"nowhere-to-be-found","global":true}),
        json!({"request_id":"add","action":"context_add","path":"notes.txt"}),
        json!({"request_id":"draft","action":"save_draft","draft":"DRAFT-TEXT"}),
    ] {
        daemon.send_line(&request.to_string());
    }
    let mut finals = std::collections::HashMap::new();
    while finals.len() < 4 {
        let line = daemon.read_reply().unwrap();
        let rid = line["request_id"].as_str().unwrap_or_default().to_owned();
        if line["type"] != "chunk" && !rid.is_empty() {
            finals.insert(rid, line);
        }
    }
    assert_eq!(finals["s"]["type"], "done", "{:?}", finals["s"]);
    let on_disk =
        || std::fs::read_to_string(world.chats_dir().join(&id).join("chat.json")).unwrap();
    assert!(on_disk().contains("REPLY-END"), "{}", on_disk());
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(view.to_string().contains("REPLY-END"), "{view}");
    // Each change either waited for the stream (refused as busy) or applies to the chat
    // holding the reply; none is silently dropped.
    for (rid, seen) in [("add", "notes.txt"), ("draft", "DRAFT-TEXT")] {
        let reply = &finals[rid];
        if reply["type"] == "ok" {
            assert!(on_disk().contains(seen), "{rid} answered ok: {}", on_disk());
            assert!(view.to_string().contains(seen), "{rid}: {view}");
        } else {
            assert_eq!(
                reply["message"], "Another request is already in progress",
                "{reply}"
            );
        }
    }
    // The next write keeps the reply too.
    ok(daemon.call(json!({"action":"save_draft","draft":"later"})));
    assert!(on_disk().contains("REPLY-END"), "{}", on_disk());
}

// `apply_file` (and `get_diff_paths`, whose local side the client may save) refuse
// the destinations `apply_file_as` refuses; the output is kept.
#[test]
fn apply_file_never_sends_the_client_into_bb7_git_or_out_of_the_project() {
    let world = World::new();
    let mut daemon = world.open_project();
    let other = daemon.new_chat("other");
    let id = daemon.new_chat("mine");
    let ssh = world.home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    symlink(&ssh, world.project().join("keys")).unwrap();
    std::fs::create_dir_all(world.project().join(".git")).unwrap();
    symlink(world.project().join(".git"), world.project().join("gitdir")).unwrap();
    let other_chat = format!(".bb7/chats/{other}/chat.json");
    let hostile = [
        ".bb7/instructions",
        ".git/hooks/pre-commit",
        other_chat.as_str(),
        ".GIT/config",
        "keys/authorized_keys",
        "gitdir/config",
    ];
    let output = world.chats_dir().join(&id).join("output");
    for name in hostile {
        let file = output.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "ssh-ed25519 ATTACKER\n").unwrap();
    }
    for name in hostile {
        let reply = daemon.call(json!({"action":"apply_file","path":name}));
        assert_eq!(reply["type"], "error", "{name}: {reply}");
        assert!(reply.get("content").is_none(), "{name}: {reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains("inside .bb7/ or .git/") || message.contains("outside the project"),
            "{name}: {message}"
        );
        let diff = daemon.call(json!({"action":"get_diff_paths","path":name}));
        assert_eq!(diff["type"], "error", "{name}: {diff}");
        assert!(output.join(name).is_file(), "{name}: the output is kept");
    }
    assert!(!ssh.join("authorized_keys").exists());
    assert!(!world.project().join(".bb7/instructions").exists());
    let view = daemon.call(json!({"action":"chat_get"}));
    let added = view["context_files"].as_array().map_or(0, Vec::len);
    assert_eq!(added, 0, "nothing was applied: {view}");
}

// A `.commit/` shipped in a repository (its `chat.json` naming a file outside the
// project) is never rolled forward past `init`'s trust check: it is discarded.
#[test]
fn a_shipped_commit_is_discarded_not_rolled_forward() {
    let world = World::new();
    let secret = world.root().join("secret.txt");
    std::fs::write(&secret, "SECRET-KEY-MATERIAL\n").unwrap();
    let id = "aaaaaaaaaa";
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(dir.join("context")).unwrap();
    let chat = |context: Value, name: &str| {
        json!({"version": 2, "id": id, "name": name, "created": "2026-01-01T00:00:00Z",
            "model": "test/model", "draft": "", "context_files": context, "messages": []})
    };
    std::fs::write(dir.join("chat.json"), chat(json!([]), "clean").to_string()).unwrap();
    let hostile = chat(
        json!([{"path": secret.display().to_string(), "readonly": false, "external": false,
            "version": "0000000000000000"}]),
        "rolled",
    );
    std::fs::create_dir_all(dir.join(".commit/output")).unwrap();
    std::fs::write(dir.join(".commit/chat.json"), hostile.to_string()).unwrap();
    std::fs::write(dir.join(".commit/stamp"), "2049:12345\n").unwrap();
    std::fs::write(dir.join(".commit/output/planted.txt"), "x").unwrap();
    let index = json!({"version": 1, "active_chat_id": id, "chats": [
        {"id": id, "name": "clean", "created": "2026-01-01T00:00:00Z"}]});
    std::fs::write(world.chats_dir().join("index.json"), index.to_string()).unwrap();
    let mut daemon = world.open_project();
    let select = daemon.call(json!({"action":"chat_select","id":id}));
    assert_eq!(select["type"], "ok", "{select}");
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(view["name"], "clean", "{view}");
    assert!(!view.to_string().contains("secret.txt"), "{view}");
    assert!(!dir.join(".commit").exists());
    assert!(!dir.join("output/planted.txt").exists());
    let on_disk = std::fs::read_to_string(dir.join("chat.json")).unwrap();
    assert!(!on_disk.contains("secret.txt"), "{on_disk}");
}

// `chat_rename` and `chat_delete` of a chat another daemon may hold run under the
// chat's lock: no rename answered `ok` is lost to the holder's stale copy, and a delete
// racing a delete answers a clear error for a chat that is gone.
#[test]
fn renames_and_deletes_from_a_second_daemon_take_the_chat_lock() {
    let world = World::new();
    let mut holder = world.open_project();
    let mut renamer = world.open_project();
    let target = holder.new_chat("start");
    let other = holder.new_chat("other");
    let held = target.clone();
    let renames = std::thread::spawn(move || {
        let mut last_ok = None;
        for n in 0..60 {
            let name = format!("renamed-{n}");
            let reply = renamer.call(json!({"action":"chat_rename","id":target,"name":name}));
            match reply["type"].as_str() {
                Some("ok") => last_ok = Some(name),
                _ => assert!(
                    reply["message"].as_str().unwrap().contains("locked"),
                    "{reply}"
                ),
            }
        }
        (renamer, target, last_ok)
    });
    for n in 0..30 {
        // The renamer may hold the lock for a moment: then the select is refused.
        let selected = holder.call(json!({"action":"chat_select","id":held}));
        if selected["type"] == "ok" {
            ok(holder.call(json!({"action":"save_draft","draft":format!("draft {n}")})));
        } else {
            assert!(
                selected["message"].as_str().unwrap().contains("locked"),
                "{selected}"
            );
        }
        ok(holder.call(json!({"action":"chat_select","id":other})));
    }
    let (mut renamer, target, last_ok) = renames.join().unwrap();
    let on_disk: Value = serde_json::from_str(
        &std::fs::read_to_string(world.chats_dir().join(&target).join("chat.json")).unwrap(),
    )
    .unwrap();
    if let Some(name) = last_ok {
        assert_eq!(
            on_disk["name"],
            json!(name),
            "the last accepted rename holds"
        );
    }
    // Two daemons deleting one chat: one succeeds, the other says it is gone (or locked).
    ok(holder.call(json!({"action":"chat_select","id":other})));
    let doomed = holder.new_chat("doomed");
    ok(holder.call(json!({"action":"chat_select","id":other})));
    let first = json!({"request_id":"d1","action":"chat_delete","id":doomed});
    let second = json!({"request_id":"d2","action":"chat_delete","id":doomed});
    holder.send_line(&first.to_string());
    renamer.send_line(&second.to_string());
    let (a, b) = (holder.read_reply().unwrap(), renamer.read_reply().unwrap());
    let oks = [&a, &b]
        .iter()
        .filter(|reply| reply["type"] == "ok")
        .count();
    assert_eq!(oks, 1, "{a} {b}");
    for reply in [&a, &b] {
        if reply["type"] == "error" {
            let message = reply["message"].as_str().unwrap();
            assert!(
                !message.contains("not empty") && !message.contains("os error"),
                "{message}"
            );
        }
    }
    assert!(!world.chats_dir().join(&doomed).exists());
}

/// Plants a chat (as a cloned repository ships it) using `model`, remembered as active.
fn plant_chat_with_model(world: &World, model: &str) -> String {
    let id = "cccccccccc";
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let chat = json!({"version": 2, "id": id, "name": "restored", "model": model,
        "created": "2026-01-01T00:00:00Z", "draft": "", "context_files": [], "messages": []});
    std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    let index = json!({"version": 1, "active_chat_id": id, "chats": [
        {"id": id, "name": "restored", "created": "2026-01-01T00:00:00Z"}]});
    std::fs::write(world.chats_dir().join("index.json"), index.to_string()).unwrap();
    id.to_owned()
}

// A restored chat's hostile model name neither forges a usage row nor a formula in
// `usage.csv`, and becomes `last_model` only once the provider accepted it.
#[test]
fn a_hostile_model_name_forges_no_usage_row_and_is_not_remembered_when_refused() {
    use ybs_testkit::{Fault, Usage};
    let world = World::new();
    let hostile = "evil\n2026-01-01T00:00:00,/p,m,1,1,1,999999.000000\n=HYPERLINK(\"http://x\")";
    let _server = world.serve(
        vec![
            Turn::text(["no"]).with_fault(Fault::Status {
                status: 404,
                body: None,
                retry_after: None,
            }),
            Turn::text(["fine"]).with_usage(Usage::new(10, 5).with_cost(0.01)),
        ],
        json!({}),
    );
    std::fs::create_dir_all(world.chats_dir()).unwrap();
    plant_chat_with_model(&world, hostile);
    let mut daemon = world.open_project();
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(view["model"], hostile, "{view}");
    let state = world.home().join(".bb7/state.json");
    let refused = daemon.send("s1", "hello");
    assert_eq!(refused.last().unwrap()["type"], "error", "{refused:?}");
    let remembered = std::fs::read_to_string(&state).unwrap_or_default();
    assert!(!remembered.contains("evil"), "{remembered}");
    let done = daemon.send("s2", "again");
    assert_eq!(done.last().unwrap()["type"], "done", "{done:?}");
    let csv = std::fs::read_to_string(world.home().join(".bb7/usage.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1, "one row, none forged: {csv}");
    assert!(!lines[0].contains("\n"));
    assert!(lines[0].contains("\"evil\\u{a}2026"), "{csv}");
    assert!(lines[0].contains("\\u{a}=HYPERLINK"), "{csv}");
    assert!(!csv.lines().any(|line| line.starts_with('=')), "{csv}");
}

/// Fills the file system holding `dir` until a write fails; returns the filler's path.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = vec![b'x'; 4096];
    while file
        .write_all(&block)
        .and_then(|()| file.sync_all())
        .is_ok()
    {}
    path
}

// On a full disk a send answers `error` and leaves the chat as it was, in memory
// too: the next write does not save its message, a resend after space is freed holds it once.
#[test]
fn a_send_on_a_full_disk_leaves_the_chat_as_it_was() {
    let world = World::new();
    let _server = world.serve(vec![Turn::text(["fine"])], json!({}));
    let bb7 = world.project().join(".bb7");
    let Some(_mount) = Mount::tmpfs(&bb7, "1m") else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    let filler = fill(&bb7);
    let message = format!("UNIQUE-MESSAGE {}", "y".repeat(20_000));
    let failed = daemon.send("s1", &message);
    assert_eq!(failed.last().unwrap()["type"], "error", "{failed:?}");
    std::fs::remove_file(&filler).unwrap();
    ok(daemon.call(json!({"action":"save_draft","draft":"later"})));
    let chat_json = world.chats_dir().join(&id).join("chat.json");
    let on_disk = std::fs::read_to_string(&chat_json).unwrap();
    assert!(
        !on_disk.contains("UNIQUE-MESSAGE"),
        "the failed send is not saved later"
    );
    let view = daemon.call(json!({"action":"chat_get"}));
    assert!(
        !view.to_string().contains("UNIQUE-MESSAGE"),
        "nor kept in memory"
    );
    let done = daemon.send("s2", &message);
    assert_eq!(done.last().unwrap()["type"], "done", "{done:?}");
    let on_disk = std::fs::read_to_string(&chat_json).unwrap();
    assert_eq!(on_disk.matches("UNIQUE-MESSAGE").count(), 1, "sent once");
}

// Instructions that expand past the bound (20,000 includes of a 1 MiB file) are an
// instruction error in `chat_get`, not a 4 GiB allocation that aborts the daemon.
#[test]
fn instructions_expanding_past_the_bound_are_an_instruction_error() {
    let world = World::new();
    let mut daemon = world.open_project();
    ok(daemon.call(json!({"action":"chat_new","name":"mine"})));
    world.write("big.txt", &"b".repeat(1 << 20));
    world.write(".bb7/instructions", &"@include big.txt\n".repeat(20_000));
    let view = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(
        view["type"],
        "chat",
        "{}",
        &view.to_string()[..300.min(view.to_string().len())]
    );
    let info = view["instructions_info"].to_string();
    assert!(info.contains("exceed 1024 KiB"), "{info}");
    assert!(
        view.to_string().len() < 100_000,
        "the expansion is not sent to the client"
    );
    ok(daemon.call(json!({"action":"ping"})));
}

// A context path holding a newline and an escape sequence, logged at `init`, forges
// no log line and puts no raw escape byte in the log.
#[test]
fn hostile_strings_are_escaped_in_the_log() {
    let world = World::new();
    let id = "dddddddddd";
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let path = "/outside\n2026-01-01T00:00:00Z  WARN FORGED line\x1b[31m";
    let chat = json!({"version": 2, "id": id, "name": "restored", "model": "m",
        "created": "2026-01-01T00:00:00Z", "draft": "", "messages": [],
        "context_files": [{"path": path, "readonly": false, "external": false,
            "version": "0000000000000000"}]});
    std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    let index = json!({"version": 1, "active_chat_id": id, "chats": [
        {"id": id, "name": "restored", "created": "2026-01-01T00:00:00Z"}]});
    std::fs::write(world.chats_dir().join("index.json"), index.to_string()).unwrap();
    let daemon = world.open_project();
    drop(daemon);
    let log = std::fs::read(world.home().join(".bb7/logs/bb7.log")).unwrap();
    let text = String::from_utf8_lossy(&log);
    assert!(text.contains("FORGED"), "the path was logged: {text}");
    assert!(!log.contains(&0x1b), "{text}");
    assert!(
        !text
            .lines()
            .any(|line| line.starts_with("2026-01-01T00:00:00Z")),
        "{text}"
    );
}

// A name the user sets while the first exchange streams is not replaced by the
// automatic title.
#[test]
fn the_automatic_title_does_not_replace_a_name_set_during_the_stream() {
    let world = World::new();
    let server = world.serve(
        vec![
            Turn::text(["one ", "two ", "three"]).with_delay_ms(150),
            Turn::text(["\"Automatic Title\""]),
        ],
        json!({"title_model": "test/model"}),
    );
    let mut daemon = world.open_project();
    let id = daemon.new_chat("start");
    daemon.start_send("s", "hi");
    daemon.send_line(
        &json!({"request_id":"r","action":"chat_rename","id":id,"name":"Mine"}).to_string(),
    );
    let mut done = false;
    while !done {
        let line = daemon.read_reply().unwrap();
        done = line["request_id"] == "s" && line["type"] == "done";
    }
    // Give the title request time to come back and be handled.
    for _ in 0..50 {
        if server.requests().len() >= 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let list = daemon.call(json!({"action":"chat_list"}));
    assert_eq!(list["chats"][0]["name"], "Mine", "{list}");
    let on_disk = std::fs::read_to_string(world.chats_dir().join(&id).join("chat.json")).unwrap();
    assert!(on_disk.contains("\"Mine\""), "{on_disk}");
}

// `shutdown` during a stream records the abort (as a cancel does) before the
// daemon exits, and leaves no temporary file.
#[test]
fn shutdown_during_a_stream_records_the_abort_and_leaves_no_temp_file() {
    let world = World::new();
    let _server = world.serve(
        vec![Turn::text(["PARTIAL ", "more ", "more ", "more ", "end"]).with_delay_ms(300)],
        json!({}),
    );
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    daemon.start_send("s", "hi");
    daemon.send_line(&json!({"request_id":"q","action":"shutdown"}).to_string());
    let mut lines = Vec::new();
    while let Some(line) = daemon.read_reply() {
        lines.push(line);
    }
    let (status, _) = daemon.wait();
    assert!(status.success(), "{status:?}");
    assert!(
        lines
            .iter()
            .any(|line| line["request_id"] == "q" && line["type"] == "ok"),
        "{lines:?}"
    );
    let dir = world.chats_dir().join(&id);
    let chat = std::fs::read_to_string(dir.join("chat.json")).unwrap();
    assert!(chat.contains("PARTIAL"), "what streamed is kept: {chat}");
    assert!(chat.contains("\"system\""), "the abort is recorded: {chat}");
    let temps: Vec<String> = files_below(&dir)
        .into_iter()
        .filter(|name| name.contains(".bb7-tmp"))
        .collect();
    assert_eq!(temps, Vec::<String>::new());
}

// A model output named like the daemon's temporary files is refused as a diff
// error, not announced as written and then silently dropped.
#[test]
fn a_temp_named_model_path_is_a_diff_error_not_a_silent_drop() {
    let world = World::new();
    let _server = world.serve(
        vec![Turn::text(["ok"]).with_tool_call(ToolCall::new(
            "c1",
            "write_file",
            json!({"path":"src/.tmpabcdef","content":"x\n"}),
        ))],
        json!({}),
    );
    let mut daemon = world.open_project();
    let id = daemon.new_chat("mine");
    let lines = daemon.send("s", "write it");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{lines:?}");
    assert!(
        last.to_string()
            .contains("reserved for bb7's temporary files"),
        "{last}"
    );
    let output = world.chats_dir().join(&id).join("output");
    assert_eq!(files_below(&output), Vec::<String>::new());
}

// The daemon's half of the include consent: what shipped instructions include is shown,
// path and size, in `chat_get` and `get_customization_info`.
#[test]
fn included_files_are_listed_with_their_sizes() {
    let world = World::new();
    let mut daemon = world.open_project();
    ok(daemon.call(json!({"action":"chat_new","name":"mine"})));
    world.write(".env", "API_KEY=secret\n");
    world.write("notes.md", "notes\n");
    world.write(
        ".bb7/instructions",
        "intro\n@include .env\n@include notes.md\n",
    );
    let view = daemon.call(json!({"action":"chat_get"}));
    // `.env` is named like a file of secrets: outside any work tree, and in no `.gitignore`,
    // it still needs consent, bound to the digest of what it sends.
    let digest = view["instructions_info"]["project_includes"][0]["digest"].clone();
    assert!(
        digest.as_str().is_some_and(|d| d.starts_with("sha256:")),
        "{view}"
    );
    assert_eq!(
        view["instructions_info"]["project_includes"],
        json!([{"path": ".env", "bytes": 15, "needs_consent": "secret_name", "digest": digest},
            {"path": "notes.md", "bytes": 6}]),
        "{view}"
    );
    let info = daemon.call(json!({"action":"get_customization_info"}));
    assert_eq!(
        info["project_includes"], view["instructions_info"]["project_includes"],
        "{info}"
    );
}
