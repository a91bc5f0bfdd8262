//! The daemon behaves like the first bb7 wherever its client or users can tell.
//! Each test runs the real binary against the fake OpenRouter of `ybs-testkit` and checks the
//! protocol lines and the `.bb7/` (or `~/.bb7/`) state after them; the test names say which
//! behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::fixture::{Setup, write_call as write};
use common::{Daemon, World, chat_requests};
use serde_json::{Value, json};
use ybs_testkit::{Script, ToolCall, Turn, Usage};

const A_RS: &str = "fn alpha() {\n    one();\n}\n";

fn setup_with(script: Script, extra: Value) -> Setup {
    Setup::start(script, A_RS, extra)
}

fn setup(turns: Vec<Turn>, extra: Value) -> Setup {
    setup_with(Script::new(turns), extra)
}

fn edit(old: &str, new: &str) -> ToolCall {
    ToolCall::new(
        "e",
        "edit_file",
        json!({"edits":[{"path":"src/a.rs","file_id":ybs_core::file_id("src/a.rs", A_RS),
            "old_string":old,"new_string":new}]}),
    )
}

/// A reply without its `request_id` (the helpers number requests themselves).
fn no_id(mut reply: Value) -> Value {
    reply.as_object_mut().unwrap().remove("request_id");
    reply
}

fn messages(daemon: &mut Daemon) -> Vec<Value> {
    daemon.call(json!({"action":"chat_get"}))["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn outputs(world: &World, chat: &str) -> Vec<String> {
    let base = world.chats_dir().join(chat).join("output");
    let mut found = Vec::new();
    let mut pending = vec![base.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                let rel = entry.path().strip_prefix(&base).unwrap().to_owned();
                found.push(rel.display().to_string());
            }
        }
    }
    found.sort();
    found
}

fn put_output(world: &World, chat: &str, path: &str, content: &str) {
    let target = world.chats_dir().join(chat).join("output").join(path);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(target, content).unwrap();
}

#[test]
fn item01_apply_file_updates_the_snapshot_but_never_the_project_file() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    let script = world.project().join("src/a.rs");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("a.rs", world.project().join("src/link.rs")).unwrap();
    put_output(&world, &chat, "src/a.rs", "fn alpha() {}\n");
    put_output(&world, &chat, "src/b.rs", "fn b() {}\n");

    let reply = no_id(daemon.call(json!({"action":"apply_file","path":"src/a.rs"})));
    assert_eq!(reply, json!({"type":"ok","content":"fn alpha() {}\n"}));
    assert_eq!(world.read("src/a.rs"), A_RS, "the client writes the file");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    assert!(
        std::fs::symlink_metadata(world.project().join("src/link.rs"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let reply = no_id(
        daemon.call(json!({"action":"apply_file_as","path":"src/b.rs","destination":"lib/b.rs"})),
    );
    assert_eq!(reply, json!({"type":"ok","content":"fn b() {}\n"}));
    assert!(!world.project().join("lib").exists());
    assert!(outputs(&world, &chat).is_empty(), "outputs are deleted");
    assert_eq!(
        daemon.call(json!({"action":"get_context_file","path":"src/a.rs"}))["content"],
        "fn alpha() {}\n"
    );
    assert_eq!(
        daemon.call(json!({"action":"get_context_file","path":"lib/b.rs"}))["content"],
        "fn b() {}\n"
    );
    let all = messages(&mut daemon);
    let n = all.len();
    assert_eq!(all[n - 2]["parts"][0]["action"], "UserApplyFile");
    assert_eq!(
        all[n - 2]["parts"][0]["prev_version"],
        ybs_core::file_id("src/a.rs", A_RS)
    );
    assert_eq!(all[n - 1]["parts"][0]["action"], "UserSaveAs");
    assert_eq!(all[n - 1]["parts"][0]["original_path"], "src/b.rs");
}

#[test]
fn item02_two_processes_updating_state_json_lose_nothing() {
    let world = World::new();
    let state = world.home().join(".bb7/state.json");
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::write(
        &state,
        r#"{"favorites":["a/fav"],"client_only":{"keep":true},"counter":0}"#,
    )
    .unwrap();
    let second = world.root().join("second");
    std::fs::create_dir_all(&second).unwrap();
    let mut daemons: Vec<Daemon> = Vec::new();
    for root in [world.project(), second.canonicalize().unwrap()] {
        let mut daemon = world.spawn();
        let root = root.display().to_string();
        daemon.call(json!({"action":"bb7_init","project_root":root}));
        daemon.call(json!({"action":"init","project_root":root}));
        daemon.call(json!({"action":"chat_new"}));
        daemons.push(daemon);
    }
    let home = bb7_daemon::Home::new(world.home(), None);
    let writers: Vec<_> = daemons
        .into_iter()
        .enumerate()
        .map(|(n, mut daemon)| {
            std::thread::spawn(move || {
                for i in 0..40 {
                    let model = format!("p{n}/m{i}");
                    let reply = daemon.call(json!({"action":"save_chat_settings","model":model}));
                    assert_eq!(reply["type"], "ok", "{reply}");
                }
                daemon
            })
        })
        .collect();
    // Meanwhile this process counts under the same lock.
    for _ in 0..40 {
        bb7_daemon::store::global::GlobalState::update(&home, |fields| {
            let next = fields["counter"].as_u64().unwrap() + 1;
            fields.insert("counter".into(), json!(next));
        })
        .unwrap();
    }
    for writer in writers {
        drop(writer.join().unwrap());
    }
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(after["counter"], 40, "no update was lost: {after}");
    assert_eq!(after["favorites"], json!(["a/fav"]));
    assert_eq!(after["client_only"], json!({"keep": true}));
    let last = after["last_model"].as_str().unwrap();
    assert!(last == "p0/m39" || last == "p1/m39", "{last}");
}

#[test]
fn item04_the_home_directory_is_never_a_project() {
    let world = World::new();
    let mut daemon = world.spawn();
    let home = world.home().display().to_string();
    for action in ["bb7_init", "init"] {
        let reply = daemon.call(json!({"action":action,"project_root":home}));
        assert_eq!(
            reply["message"],
            "cannot initialize BB-7 in home directory (conflicts with global data)",
            "{action}"
        );
    }
    assert!(
        !world.home().join(".bb7/chats").exists() && !world.home().join(".bb7/index.json").exists(),
        "no store was created"
    );
}

#[test]
fn item05_write_file_on_a_read_only_context_file_is_a_diff_error() {
    let turn = Turn::default()
        .with_text(["Updating the readme."])
        .with_tool_call(write("docs/readme.md", "# Changed\n"));
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let lines = daemon.send("s1", "change the readme");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert!(
        last["errors"][0]
            .as_str()
            .unwrap()
            .contains("docs/readme.md is read-only"),
        "{last}"
    );
    assert!(outputs(&world, &chat).is_empty(), "nothing was written");
}

#[test]
fn item06_init_needs_bb7_and_an_empty_root_is_global_only() {
    let world = World::new();
    let mut daemon = world.spawn();
    let root = world.project().display().to_string();
    let reply = no_id(daemon.call(json!({"action":"init","project_root":root})));
    assert_eq!(
        reply,
        json!({"type":"error","message":"Not initialized. Run :BB7Init"})
    );
    let reply = no_id(daemon.call(json!({"action":"init","project_root":""})));
    assert_eq!(reply, json!({"type":"ok","global_only":true}));
    let id = daemon.call(json!({"action":"chat_new"}))["id"].clone();
    assert!(
        world
            .home()
            .join(".bb7/chats")
            .join(id.as_str().unwrap())
            .is_dir()
    );
    assert!(!world.project().join(".bb7").exists());
}

#[test]
fn item07_a_selected_global_chat_is_restored_and_unknown_index_fields_kept() {
    let world = World::new();
    let mut daemon = world.open_project();
    let global = daemon.call(json!({"action":"chat_new","global":true}))["id"].clone();
    let index = world.chats_dir().join("index.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    assert_eq!(value["active_chat_id"], global);
    assert_eq!(value["active_chat_global"], true);
    value["client_note"] = json!("kept");
    std::fs::write(&index, value.to_string()).unwrap();
    daemon.call(json!({"action":"shutdown"}));
    let _ = daemon.wait();

    let mut daemon = world.open_project();
    let active = no_id(daemon.call(json!({"action":"chat_active"})));
    assert_eq!(
        active,
        json!({"type":"chat_active","id":global,"global":true})
    );
    daemon.call(json!({"action":"chat_new"}));
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    assert_eq!(value["client_note"], "kept");
    assert!(value.get("active_chat_global").is_none(), "{value}");
}

/// A chat with two exchanges: the first wrote `x.txt`, the second `y.txt`.
fn two_exchanges() -> Setup {
    let mut setup = setup(
        vec![
            Turn::default()
                .with_text(["one"])
                .with_tool_call(write("x.txt", "x\n")),
            Turn::default()
                .with_text(["two"])
                .with_tool_call(write("y.txt", "y\n")),
        ],
        json!({}),
    );
    setup.daemon.send("s1", "first");
    setup.daemon.send("s2", "second");
    assert_eq!(outputs(&setup.world, &setup.chat), ["x.txt", "y.txt"]);
    setup
}

fn user_index(messages: &[Value], nth: usize) -> usize {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "user")
        .nth(nth)
        .unwrap()
        .0
}

#[test]
fn item08_chat_edit_deletes_outputs_no_remaining_reply_produced() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = two_exchanges();
    let all = messages(&mut daemon);
    let second = user_index(&all, 1);
    let reply = daemon.call(
        json!({"action":"chat_edit","chat_id":chat,"message_index":second,"content":"again"}),
    );
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(outputs(&world, &chat), ["x.txt"]);
    let reply = daemon.call(json!({"action":"chat_edit","message_index":999}));
    assert_eq!(reply["message"], "message index out of range");
    let reply = daemon.call(json!({"action":"chat_edit","message_index":second - 1}));
    assert_eq!(reply["message"], "can only edit user messages");
}

#[test]
fn message_delete_removes_a_pair_and_its_outputs() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = two_exchanges();
    let all = messages(&mut daemon);
    let first = user_index(&all, 0);
    let second = user_index(&all, 1);
    let reply = no_id(daemon.call(json!({"action":"message_delete","index":second - 1})));
    assert_eq!(
        reply,
        json!({"type":"error","message":"can only delete user messages"})
    );
    let reply = no_id(daemon.call(json!({"action":"message_delete","index":first})));
    assert_eq!(reply, json!({"type":"ok"}));
    let after = messages(&mut daemon);
    assert_eq!(after.len(), all.len() - (second - first), "{after:?}");
    assert_eq!(after[first]["parts"][0]["content"], "second");
    assert_eq!(outputs(&world, &chat), ["y.txt"], "x.txt's reply is gone");
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(world.chats_dir().join(&chat).join("chat.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stored["messages"].as_array().unwrap().len(), after.len());
    let reply = daemon.call(json!({"action":"message_delete","index":99}));
    assert_eq!(reply["message"], "message index out of range");
    let reply = daemon.call(json!({"action":"message_delete"}));
    assert_eq!(reply["message"], "Missing required field: index");
    let reply = daemon.call(json!({"action":"message_delete","chat_id":"0000000000","index":0}));
    assert_eq!(reply["message"], "Chat is not active");
}

#[test]
fn message_delete_is_refused_while_streaming() {
    let chunks: Vec<String> = (0..100).map(|i| format!("c{i} ")).collect();
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![Turn::text(chunks).with_delay_ms(20)], json!({}));
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"long"}).to_string());
    let first = daemon.read_reply().unwrap();
    assert_eq!(first["type"], "chunk");
    daemon.send_line(&json!({"request_id":"d","action":"message_delete","index":0}).to_string());
    loop {
        let line = daemon.read_reply().unwrap();
        if line["request_id"] == "d" {
            assert_eq!(line["message"], "Another request is already in progress");
            break;
        }
    }
}

#[test]
fn item09_chat_new_with_context_reads_files_again() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    world.write("src/a.rs", "fn changed() {}\n");
    std::fs::remove_file(world.project().join("docs/readme.md")).unwrap();
    let reply = daemon.call(json!({"action":"chat_new_with_context","source_chat_id":chat}));
    assert_eq!(reply["type"], "ok");
    let files = daemon.call(json!({"action":"context_list"}))["files"].clone();
    assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
    assert_eq!(files[0]["path"], "src/a.rs");
    assert_eq!(
        files[0]["version"],
        ybs_core::file_id("src/a.rs", "fn changed() {}\n")
    );
    assert_eq!(
        daemon.call(json!({"action":"get_context_file","path":"src/a.rs"}))["content"],
        "fn changed() {}\n"
    );
}

#[test]
fn item10_chat_move_to_global_needs_no_pending_output() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    let created = daemon.call(json!({"action":"chat_get"}))["created"].clone();
    put_output(&world, &chat, "src/a.rs", "x");
    let reply = daemon.call(json!({"action":"chat_move","id":chat,"to":"global"}));
    assert_eq!(
        reply["message"],
        "chat has pending file modifications — apply or reject changes before moving"
    );
    assert!(world.chats_dir().join(&chat).join("chat.json").is_file());
    daemon.call(json!({"action":"output_delete","path":"src/a.rs"}));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let reply = no_id(daemon.call(json!({"action":"chat_move","id":chat,"to":"global"})));
    assert_eq!(reply, json!({"type":"ok"}));
    let moved = world.home().join(".bb7/chats").join(&chat);
    assert!(moved.join("chat.json").is_file());
    assert!(!moved.join("output").exists());
    let got = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(got["id"], json!(chat), "the moved chat is active");
    assert_eq!(got["global"], true);
    assert_ne!(got["created"], created);
    let files = daemon.call(json!({"action":"context_list"}))["files"].clone();
    assert!(
        files
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["readonly"] == true)
    );
}

#[test]
fn chat_move_is_answered_during_a_stream_except_for_the_streaming_chat() {
    let chunks: Vec<String> = (0..100).map(|i| format!("c{i} ")).collect();
    let Setup {
        mut daemon,
        chat,
        world: _world,
        server: _server,
    } = setup(vec![Turn::text(chunks).with_delay_ms(20)], json!({}));
    daemon.call(json!({"action":"chat_new","name":"other"}));
    let other = daemon.call(json!({"action":"chat_active"}))["id"].clone();
    daemon.call(json!({"action":"chat_select","id":chat}));
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"long"}).to_string());
    assert_eq!(daemon.read_reply().unwrap()["type"], "chunk");
    daemon.send_line(
        &json!({"request_id":"m1","action":"chat_move","id":other,"to":"global"}).to_string(),
    );
    daemon.send_line(
        &json!({"request_id":"m2","action":"chat_move","id":chat,"to":"global"}).to_string(),
    );
    let mut seen = 0;
    while seen < 2 {
        let line = daemon.read_reply().unwrap();
        if line["request_id"] == "m1" {
            assert_eq!(line["type"], "ok", "{line}");
            seen += 1;
        }
        if line["request_id"] == "m2" {
            assert_eq!(line["message"], "Another request is already in progress");
            seen += 1;
        }
    }
}

#[test]
fn item11_send_leaves_the_draft_alone() {
    let Setup {
        mut daemon,
        world,
        server: _server,
        chat,
    } = setup(vec![Turn::text(["ok"]), Turn::text(["ok"])], json!({}));
    daemon.call(json!({"action":"save_draft","draft":"still typing"}));
    daemon.send("s1", "hello");
    assert_eq!(
        daemon.call(json!({"action":"chat_get"}))["draft"],
        "still typing"
    );
    // As the first bb7 writes chat.json: no empty draft, no empty context snapshot.
    daemon.call(json!({"action":"save_draft","draft":""}));
    for path in ["src/a.rs", "docs/readme.md"] {
        daemon.call(json!({"action":"context_remove","path":path}));
    }
    daemon.send("s2", "again");
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(world.chats_dir().join(&chat).join("chat.json")).unwrap(),
    )
    .unwrap();
    assert!(stored.get("draft").is_none(), "{stored}");
    let users: Vec<&Value> = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert!(users[0].get("context_snapshot").is_some());
    assert!(users.last().unwrap().get("context_snapshot").is_none());
    assert_eq!(daemon.call(json!({"action":"chat_get"}))["draft"], "");
}

#[test]
fn item12_automatic_titles_use_the_first_message_and_the_file_names() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(
        vec![
            Turn::text(["answer"]),
            Turn::text(["A Title"]),
            Turn::text(["second answer"]),
        ],
        json!({"title_model":"test/title"}),
    );
    daemon.send("s1", "Refactor physics");
    assert_eq!(daemon.read_reply().unwrap()["type"], "title_updated");
    daemon.send("s2", "more");
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 3, "one title only, for the first message");
    let title = &requests[1];
    assert_eq!(title["model"], "test/title");
    assert_eq!(title["temperature"], 0.5);
    assert_eq!(title["stream"], false, "the title request is not streamed");
    assert_eq!(
        title["messages"][1]["content"],
        "User message: Refactor physics\n\nContext files attached: src/a.rs, docs/readme.md"
    );
}

#[test]
fn item14_a_duplicate_write_ends_the_reply_with_an_error() {
    let turn = Turn::default()
        .with_text(["twice"])
        .with_tool_call(write("n.txt", "1\n"))
        .with_tool_call(write("n.txt", "2\n"));
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(
        last["message"],
        "Duplicate write_file for path in single response: n.txt"
    );
    assert!(outputs(&world, &chat).is_empty());
    let all = messages(&mut daemon);
    let system = all.last().unwrap();
    assert_eq!(system["role"], "system");
    assert_eq!(
        system["parts"][0]["content"],
        "Duplicate write_file for path in single response: n.txt"
    );
}

#[test]
fn item14_an_edit_outside_context_and_output_ends_the_reply_with_an_error() {
    let call = ToolCall::new(
        "e",
        "edit_file",
        json!({"edits":[{"path":"nowhere.rs","file_id":"00000000","old_string":"a","new_string":"b"}]}),
    );
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![Turn::default().with_tool_call(call)], json!({}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(
        last["message"],
        "edit_file: nowhere.rs not in context or output"
    );
}

#[test]
fn item15_diff_error_lists_every_tool_call() {
    let turn = Turn::default()
        .with_tool_call(write("new.txt", "n\n"))
        .with_tool_call(edit("missing();", "x();"));
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![turn], json!({}));
    let lines = daemon.send("s1", "go");
    assert!(
        lines
            .iter()
            .any(|l| l["content"] == "\n[Assistant added: new.txt]\n"),
        "{lines:?}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error");
    let calls = last["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{last}");
    assert_eq!(calls[0]["tool"], "write_file");
    assert_eq!(calls[0]["path"], "new.txt");
    assert_eq!(calls[1]["tool"], "edit_file");
    assert_eq!(calls[1]["path"], "src/a.rs");
    assert!(last["duration"].as_f64().is_some());
}

#[test]
fn item16_the_repair_builds_on_the_first_attempts_writes() {
    let first = Turn::default()
        .with_tool_call(write("new.txt", "n\n"))
        .with_tool_call(edit("missing();", "x();"));
    let repair = Turn::default().with_tool_call(edit("one();", "uno();"));
    let Setup {
        world,
        server,
        mut daemon,
        chat,
    } = setup(
        vec![first, repair],
        json!({"auto_retry_partial_edits": true}),
    );
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "done", "{last}");
    assert_eq!(last["output_files"], json!(["new.txt", "src/a.rs"]));
    assert_eq!(outputs(&world, &chat), ["new.txt", "src/a.rs"]);
    let requests = chat_requests(&server);
    let repair_text =
        requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(repair_text.contains("new.txt"), "{repair_text}");
}

#[test]
fn item16_a_failed_repair_reports_both_attempts() {
    let first = Turn::default().with_tool_call(edit("missing();", "x();"));
    let repair = Turn::default().with_tool_call(edit("still missing();", "x();"));
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(
        vec![first, repair],
        json!({"auto_retry_partial_edits": true}),
    );
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "diff_error");
    let errors: Vec<&str> = last["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(!errors[0].starts_with("retry attempt: "));
    assert!(errors[1].starts_with("retry attempt: "), "{errors:?}");
}

#[test]
fn item19_ping_and_chat_get_answer_while_get_models_waits() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup_with(Script::new(vec![]).with_models_delay_ms(3000), json!({}));
    let started = std::time::Instant::now();
    daemon.send_line(r#"{"request_id":"models","action":"get_models"}"#);
    daemon.send_line(r#"{"request_id":"ping","action":"ping"}"#);
    daemon.send_line(r#"{"request_id":"get","action":"chat_get"}"#);
    let first = daemon.read_reply().unwrap();
    let ping_after = started.elapsed();
    assert_eq!(first, json!({"type":"ok","request_id":"ping"}));
    let second = daemon.read_reply().unwrap();
    assert_eq!(second["request_id"], "get");
    assert_eq!(second["type"], "chat");
    let third = daemon.read_reply().unwrap();
    assert_eq!(third["request_id"], "models");
    assert_eq!(third["type"], "models");
    let models_after = started.elapsed();
    assert!(ping_after < models_after, "{ping_after:?} {models_after:?}");
    // A generous bound: the ping did not wait for the 3 s list.
    assert!(
        ping_after < std::time::Duration::from_secs(2),
        "{ping_after:?}"
    );
}

#[test]
fn item19_cancel_before_the_network_aborts_the_send() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup_with(
        Script::new(vec![Turn::text(["never"])]).with_models_delay_ms(3000),
        json!({}),
    );
    let before = messages(&mut daemon).len();
    daemon.send_line(r#"{"request_id":"s1","action":"send","content":"hi"}"#);
    daemon.send_line(r#"{"request_id":"c","action":"cancel","target_request_id":"s1"}"#);
    // Both answers come at once, in either order.
    let mut replies = [daemon.read_reply().unwrap(), daemon.read_reply().unwrap()];
    replies.sort_by_key(|reply| reply["request_id"].as_str().unwrap().to_owned());
    assert_eq!(
        replies,
        [
            json!({"type":"ok","request_id":"c"}),
            json!({"type":"error","message":"Response aborted by user.","request_id":"s1"}),
        ]
    );
    assert!(chat_requests(&server).is_empty(), "no request was sent");
    assert_eq!(messages(&mut daemon).len(), before, "nothing was saved");
}

#[test]
fn item20_sync_context_needs_a_path_and_records_nothing() {
    let Setup {
        world,
        mut daemon,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    let reply = daemon.call(json!({"action":"sync_context"}));
    assert_eq!(reply["message"], "Missing required field: path");
    let before = messages(&mut daemon).len();
    world.write("src/a.rs", "fn formatted() {}\n");
    let reply = no_id(daemon.call(json!({"action":"sync_context","path":"src/a.rs"})));
    assert_eq!(reply, json!({"type":"ok"}));
    assert_eq!(messages(&mut daemon).len(), before);
    assert_eq!(
        daemon.call(json!({"action":"get_context_file","path":"src/a.rs"}))["content"],
        "fn formatted() {}\n"
    );
}

#[test]
fn item21_22_partial_apply_and_reject_events() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    put_output(
        &world,
        &chat,
        "src/a.rs",
        "fn alpha() {\n    uno();\n    dos();\n}\n",
    );
    world.write("src/a.rs", "fn alpha() {\n    uno();\n}\n");
    let reply = daemon.call(json!({"action":"diff_local_done","path":"src/a.rs"}));
    assert_eq!(reply["outcome"], "partial");
    put_output(&world, &chat, "fresh.txt", "all\nof it\n");
    world.write("fresh.txt", "all\n");
    let reply = daemon.call(json!({"action":"diff_local_done","path":"fresh.txt"}));
    assert_eq!(reply["outcome"], "partial");
    let all = messages(&mut daemon);
    let n = all.len();
    assert_eq!(all[n - 2]["parts"][0]["action"], "UserPartialApplyFile");
    assert!(all[n - 2]["parts"][0].get("added").is_none());
    assert_eq!(all[n - 1]["parts"][0]["action"], "UserPartialApplyFile");
    assert_eq!(all[n - 1]["parts"][0]["added"], true);

    let context = daemon.call(json!({"action":"context_list"}))["files"][0]["version"].clone();
    daemon.call(json!({"action":"output_delete","path":"src/a.rs"}));
    let last = messages(&mut daemon).pop().unwrap();
    let event = &last["parts"][0];
    assert_eq!(event["action"], "UserRejectOutput");
    assert_eq!(event["prev_version"], context);
    assert!(event.get("version").is_none(), "{event}");
}

#[test]
fn item21_a_full_apply_records_the_outputs_id() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    let output = "fn alpha() {\n    uno();\n}\n";
    put_output(&world, &chat, "src/a.rs", output);
    world.write("src/a.rs", output);
    let reply = daemon.call(json!({"action":"diff_local_done","path":"src/a.rs"}));
    assert_eq!(reply["outcome"], "full");
    let last = messages(&mut daemon).pop().unwrap();
    assert_eq!(last["parts"][0]["action"], "UserApplyFile");
    assert_eq!(
        last["parts"][0]["version"],
        ybs_core::file_id("src/a.rs", output)
    );
}

#[test]
fn item23_context_update_always_records() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    let before = messages(&mut daemon).len();
    daemon.call(json!({"action":"context_update","path":"src/a.rs","content":A_RS}));
    let all = messages(&mut daemon);
    assert_eq!(all.len(), before + 1);
    assert_eq!(all.last().unwrap()["parts"][0]["action"], "UserWriteFile");
}

#[test]
fn item24_every_file_estimate_has_both_counts() {
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![], json!({}));
    put_output(&world, &chat, "src/a.rs", "fn alpha() {\n    uno();\n}\n");
    let estimate = daemon.call(json!({"action":"estimate_tokens"}));
    let files = estimate["files"].as_array().unwrap();
    for file in files {
        assert!(file["original_tokens"].is_u64(), "{file}");
        assert!(file["output_tokens"].is_u64(), "{file}");
    }
    let a = files.iter().find(|f| f["path"] == "src/a.rs").unwrap();
    let readme = files
        .iter()
        .find(|f| f["path"] == "docs/readme.md")
        .unwrap();
    assert_eq!(readme["output_tokens"], 0);
    assert_eq!(estimate["potential_savings"], a["original_tokens"]);
}

#[test]
fn item27_the_system_template_holds_the_whole_builtin_prompt() {
    let Setup {
        world,
        mut daemon,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    let reply = daemon.call(json!({"action":"prepare_instructions","level":"system"}));
    let path = reply["path"].as_str().unwrap();
    assert_eq!(
        Path::new(path),
        world.home().join(".config/bb7/system_prompt.txt")
    );
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("@@ "), "{text}");
    assert!(text.ends_with(bb7_daemon::send::prompt::BUILTIN), "{text}");
    let reply = daemon.call(json!({"action":"prepare_instructions","level":"nope"}));
    assert_eq!(
        reply["message"],
        "invalid level: must be project, global, or system"
    );
}

#[test]
fn item28_the_log_stays_quiet_by_default() {
    let Setup {
        world,
        mut daemon,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    for _ in 0..20 {
        daemon.call(json!({"action":"chat_get"}));
        daemon.call(json!({"action":"context_add","path":"absent/file.rs","content":"x"}));
    }
    daemon.call(json!({"action":"shutdown"}));
    let _ = daemon.wait();
    let log = world.home().join(".bb7/logs/bb7.log");
    let size = std::fs::metadata(&log).map_or(0, |meta| meta.len());
    assert_eq!(size, 0, "nothing at info level by default");
}

#[test]
fn item18_done_carries_duration() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(
        vec![Turn::text(["hi"]).with_usage(Usage::new(1, 1))],
        json!({}),
    );
    let done = daemon.send("s1", "hello").pop().unwrap();
    assert_eq!(done["type"], "done");
    assert!(done["duration"].as_f64().unwrap() >= 0.0, "{done}");
    assert!(done.get("predicted").is_some());
}

#[test]
fn error_texts_of_the_first_bb7_for_system_messages_names_and_instructions() {
    let world = World::new();
    let mut daemon = world.spawn();
    let reply = no_id(daemon.call(json!({"action":"init","project_root":""})));
    assert_eq!(reply, json!({"type":"ok","global_only":true}));
    let reply = no_id(daemon.call(json!({"action":"prepare_instructions","level":"project"})));
    assert_eq!(
        reply,
        json!({"type":"error","message":"no project root set"})
    );
    daemon.call(json!({"action":"chat_new","name":"c"}));
    let reply = no_id(daemon.call(json!({"action":"add_system_message","message":""})));
    assert_eq!(
        reply,
        json!({"type":"error","message":"Missing required field: message"})
    );
    // Blank text is accepted and adds nothing.
    let before = messages(&mut daemon).len();
    let reply = no_id(daemon.call(json!({"action":"add_system_message","message":"  \n"})));
    assert_eq!(reply, json!({"type":"ok"}));
    assert_eq!(messages(&mut daemon).len(), before);
    let id = daemon.call(json!({"action":"chat_active"}))["id"].clone();
    let reply = no_id(daemon.call(json!({"action":"chat_rename","id":id,"name":"   "})));
    assert_eq!(
        reply,
        json!({"type":"error","message":"chat name cannot be empty"})
    );
}
