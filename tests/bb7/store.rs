//! The `.bb7/` store through the real binary: migration of version 0 and 1 chats, newer and
//! corrupt chats left intact, two daemons on one project (index, chat locks) and the safety
//! guard that stops the daemon.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::World;
use serde_json::{Value, json};

fn init(world: &World) -> common::Daemon {
    let project = world.project().display().to_string();
    let mut daemon = world.spawn();
    if !world.project().join(".bb7").exists() {
        assert_eq!(
            daemon.call(json!({"action": "bb7_init", "project_root": project}))["type"],
            "ok"
        );
    }
    assert_eq!(
        daemon.call(json!({"action": "init", "project_root": project}))["type"],
        "ok"
    );
    daemon
}

fn put_chat(world: &World, id: &str, text: &str) -> std::path::PathBuf {
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chat.json");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn old_chats_are_migrated_and_resaved() {
    let world = World::new();
    let mut daemon = init(&world);
    let v0 = put_chat(
        &world,
        "0000000000",
        r#"{"id":"0000000000","name":"v0","created":"2024-05-01T10:00:00Z","model":"m",
            "context_files":[],"messages":[{"role":"user","content":"old question","timestamp":"2024-05-01T10:00:01Z"},
            {"role":"assistant","content":"old answer","timestamp":"2024-05-01T10:00:02Z","usage":{"total_tokens":5}}]}"#,
    );
    let v1 = put_chat(
        &world,
        "1111111111",
        r#"{"version":1,"id":"1111111111","name":"v1","created":"2024-06-01T10:00:00Z","model":"m","context_files":[],
            "messages":[{"role":"user","content":"legacy text","timestamp":"2024-06-01T10:00:01Z"},
                        {"role":"assistant","parts":[{"type":"text","content":"new style"}],"timestamp":"2024-06-01T10:00:02Z"}]}"#,
    );
    let listed = daemon.call(json!({"action": "chat_list"}));
    let names: Vec<&str> = listed["chats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["v1", "v0"],
        "the index learns chats it did not know, newest first"
    );

    assert_eq!(
        daemon.call(json!({"action": "chat_select", "id": "0000000000"}))["type"],
        "ok"
    );
    let chat = daemon.call(json!({"action": "chat_get"}));
    assert_eq!(
        chat["messages"][0]["parts"],
        json!([{"type": "text", "content": "old question"}])
    );
    assert_eq!(
        chat["messages"][1]["parts"],
        json!([{"type": "text", "content": "old answer"}])
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&v0).unwrap()).unwrap();
    assert_eq!(saved["version"], 2);
    assert!(
        saved["messages"][0].get("content").is_none(),
        "legacy content is gone: {saved}"
    );
    assert_eq!(
        saved["messages"][1]["usage"],
        json!({"total_tokens": 5}),
        "unknown fields are kept"
    );
    assert_eq!(
        saved["messages"][0]["timestamp"], "2024-05-01T10:00:01Z",
        "timestamps keep their text"
    );

    let hits = daemon.call(json!({"action": "search_chats", "query": "legacy"}));
    assert_eq!(hits["results"][0]["id"], "1111111111");
    assert_eq!(hits["results"][0]["excerpt"], "legacy text");
    assert_eq!(
        daemon.call(json!({"action": "chat_select", "id": "1111111111"}))["type"],
        "ok"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&v1).unwrap()).unwrap();
    assert_eq!(saved["version"], 2);
    assert_eq!(
        saved["messages"][0]["parts"],
        json!([{"type": "text", "content": "legacy text"}])
    );
    assert_eq!(
        saved["messages"][1]["parts"],
        json!([{"type": "text", "content": "new style"}])
    );
}

#[test]
fn corrupt_and_newer_chats_are_reported_and_left_intact() {
    let world = World::new();
    let mut daemon = init(&world);
    let corrupt_text =
        r#"{"version":2,"id":"2222222222","messages":[{"role":"user","parts":[{"type":"text"}]}]}"#;
    let corrupt = put_chat(&world, "2222222222", corrupt_text);
    let newer_text = r#"{"version":9,"id":"3333333333","name":"from the future"}"#;
    let newer = put_chat(&world, "3333333333", newer_text);

    let reply = daemon.call(json!({"action": "chat_select", "id": "2222222222"}));
    let message = reply["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "Cannot read {}: missing field `content`",
            corrupt.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("The file was left untouched; fix or remove it."),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&corrupt).unwrap(), corrupt_text);

    let reply = daemon.call(json!({"action": "chat_select", "id": "3333333333"}));
    assert_eq!(
        reply["message"],
        format!(
            "{} has chat format version 9, newer than this bb7 understands (up to 2). Upgrade bb7 to open it; the file was left untouched.",
            newer.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&newer).unwrap(), newer_text);
    assert_eq!(
        daemon.call(json!({"action": "chat_active"})),
        json!({"type": "chat_active", "request_id": "5"})
    );
    // Renaming must not overwrite them either.
    let reply = daemon.call(json!({"action": "chat_rename", "id": "2222222222", "name": "x"}));
    assert_eq!(reply["type"], "error");
    assert_eq!(std::fs::read_to_string(&corrupt).unwrap(), corrupt_text);
    assert_eq!(
        daemon.call(json!({"action": "chat_select", "id": "4444444444"}))["message"],
        "Chat not found"
    );
}

#[test]
fn two_daemons_creating_chats_keep_a_consistent_index() {
    let world = World::new();
    let first = init(&world);
    let second = init(&world);
    let project = world.project().display().to_string();
    let per_daemon = 25;
    let run = move |mut daemon: common::Daemon| {
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            for n in 0..per_daemon {
                let reply = daemon.call(json!({"action": "chat_new", "name": format!("chat {n}")}));
                ids.push(reply["id"].as_str().unwrap().to_owned());
            }
            daemon.call(json!({"action": "shutdown"}));
            assert!(daemon.wait().0.success());
            ids
        })
    };
    let (a, b) = (run(first), run(second));
    let mut ids: Vec<String> = a
        .join()
        .unwrap()
        .into_iter()
        .chain(b.join().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2 * per_daemon);

    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(world.chats_dir().join("index.json")).unwrap(),
    )
    .unwrap();
    let mut indexed: Vec<String> = index["chats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    indexed.sort();
    assert_eq!(indexed, ids, "every chat is in the index exactly once");
    for id in &ids {
        assert!(
            !world.chats_dir().join(id).join("lock").exists(),
            "locks are released"
        );
    }
    let mut third = world.spawn();
    third.call(json!({"action": "init", "project_root": project}));
    assert_eq!(
        third.call(json!({"action": "chat_list"}))["chats"]
            .as_array()
            .unwrap()
            .len(),
        ids.len()
    );
}

#[test]
fn a_chat_open_in_one_daemon_is_locked_for_another() {
    let world = World::new();
    let mut first = init(&world);
    let mut second = init(&world);
    let id = first.call(json!({"action": "chat_new", "name": "busy"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected = format!(
        "Chat is locked by another bb7 process (PID {}). Close it there or use chat_force_unlock",
        first.pid()
    );
    assert_eq!(
        second.call(json!({"action": "chat_select", "id": id}))["message"],
        expected
    );
    assert_eq!(
        second.call(json!({"action": "chat_delete", "id": id}))["message"],
        expected
    );
    assert_eq!(
        second.call(json!({"action": "chat_list"}))["chats"][0]["locked"],
        true
    );
    assert_eq!(
        second.call(json!({"action": "chat_force_unlock", "id": id}))["type"],
        "ok"
    );
    assert_eq!(
        second.call(json!({"action": "chat_select", "id": id}))["type"],
        "ok"
    );
    assert_eq!(
        first.call(json!({"action": "chat_list"}))["chats"][0]["locked"],
        true
    );
}

#[test]
fn global_chats_live_under_home_and_move_between_stores() {
    let world = World::new();
    let mut daemon = init(&world);
    let id = daemon.call(json!({"action": "chat_new", "name": "everywhere", "global": true}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        world
            .home()
            .join(".bb7/chats")
            .join(&id)
            .join("chat.json")
            .is_file()
    );
    assert_eq!(
        daemon.call(json!({"action": "chat_active"}))["global"],
        true
    );
    // In a global chat every file is external and read-only.
    world.write("a.txt", "A\n");
    daemon.call(json!({"action": "context_add", "path": "a.txt", "content": "A\n"}));
    let files = daemon.call(json!({"action": "context_list"}))["files"].clone();
    assert_eq!(files[0]["external"], true);
    assert_eq!(files[0]["readonly"], true);
    assert_eq!(
        files[0]["path"],
        world.project().join("a.txt").display().to_string()
    );
    assert_eq!(
        daemon.call(json!({"action": "chat_list"}))["chats"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        daemon.call(json!({"action": "chat_list", "global": true}))["chats"][0]["global"],
        true
    );

    let reply = daemon.call(json!({"action": "chat_move", "id": id, "to": "project"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert!(world.chats_dir().join(&id).join("chat.json").is_file());
    assert!(!world.home().join(".bb7/chats").join(&id).exists());
    assert_eq!(
        daemon.call(json!({"action": "chat_list"}))["chats"][0]["id"],
        json!(id)
    );
    assert!(
        daemon
            .call(json!({"action": "chat_active"}))
            .get("global")
            .is_none()
    );
    // As the first bb7: a file inside the project becomes a relative, writable entry again,
    // and its snapshot follows.
    let moved = daemon.call(json!({"action": "context_list"}))["files"][0].clone();
    assert_eq!(moved["path"], "a.txt");
    assert_eq!(moved["external"], false);
    assert_eq!(moved["readonly"], false);
    assert_eq!(
        daemon.call(json!({"action": "get_context_file", "path": "a.txt"}))["content"],
        "A\n"
    );
    let reply = daemon.call(json!({"action": "chat_move", "id": id, "to": "elsewhere"}));
    assert_eq!(
        reply["message"],
        "Missing or invalid field: to (must be 'global' or 'project')"
    );
}

#[test]
fn xdg_config_home_and_explicit_default_model() {
    let world = World::new();
    let xdg = world.root().join("xdg");
    std::fs::create_dir_all(xdg.join("bb7")).unwrap();
    std::fs::write(
        xdg.join("bb7/config.json"),
        r#"{"api_key":"k","default_model":"cfg/model"}"#,
    )
    .unwrap();
    std::fs::write(xdg.join("bb7/instructions.md"), "be brief\n").unwrap();
    let project = world.project().display().to_string();
    let mut child = std::process::Command::new(ybs_e2e::binary("bb7"))
        .env("HOME", world.home())
        .env("XDG_CONFIG_HOME", &xdg)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        json!({"request_id": "1", "action": "bb7_init", "project_root": project}),
        json!({"request_id": "2", "action": "init", "project_root": project}),
        json!({"request_id": "3", "action": "chat_new", "model": "asked/model"}),
        json!({"request_id": "4", "action": "chat_get"}),
        json!({"request_id": "5", "action": "get_customization_info"}),
        json!({"request_id": "6", "action": "shutdown"}),
    ];
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for line in &lines {
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        replies[1],
        json!({"type": "ok", "request_id": "2", "default_model": "cfg/model"})
    );
    assert_eq!(
        replies[3]["model"], "cfg/model",
        "an explicit config default wins"
    );
    assert_eq!(replies[3]["instructions_info"]["global_exists"], true);
    assert_eq!(replies[4]["global_instructions"], true);
}

#[test]
fn an_apply_through_a_link_out_of_the_project_is_refused() {
    // The destination resolves the way context paths do: through an in-project
    // link that leaves the project it is outside, refused like its absolute form, and
    // nothing is written.
    let world = World::new();
    let mut daemon = init(&world);
    let outside = world.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, world.project().join("link")).unwrap();
    let id = daemon.call(json!({"action": "chat_new"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::write(world.chats_dir().join(&id).join("output/x.txt"), "payload").unwrap();
    let reply = daemon
        .call(json!({"action": "apply_file_as", "path": "x.txt", "destination": "link/x.txt"}));
    assert_eq!(
        reply["message"],
        "Invalid path \"link/x.txt\": is outside the project"
    );
    assert!(
        !outside.join("x.txt").exists(),
        "nothing was written outside"
    );
    assert_eq!(
        daemon.call(json!({"action": "get_output_file", "path": "x.txt"}))["content"],
        "payload"
    );
}
