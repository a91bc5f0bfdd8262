//! Protocol transcripts against the real `bb7` binary, pinned as insta snapshots (temporary
//! paths, chat ids and times redacted): a session from `bb7_init` through chats, context,
//! sections, statuses and apply; then fork and edit of a chat with history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bb7_daemon::session::push_user_message;
use bb7_daemon::store::ChatStore;
use bb7_daemon::store::active::Active;
use common::{Daemon, Redactor, World};
use serde_json::{Value, json};
use ybs_core::{Message, Part};

struct Transcript {
    steps: Vec<Value>,
}

impl Transcript {
    fn step(&mut self, daemon: &mut Daemon, request: Value) -> Value {
        let reply = daemon.call(request.clone());
        self.steps
            .push(json!({"request": request, "reply": reply.clone()}));
        reply
    }

    fn note(&mut self, text: &str) {
        self.steps.push(json!({"note": text}));
    }

    /// The steps redacted, the keys of every object sorted (the requests are built here, in
    /// the order serde_json keeps in this build).
    fn pinned(self, redact: &Redactor) -> Value {
        let mut steps = redact.apply(&Value::Array(self.steps));
        steps.sort_all_objects();
        steps
    }
}

fn output_dir(world: &World, chat: &str) -> std::path::PathBuf {
    world.chats_dir().join(chat).join("output")
}

#[test]
fn session_from_init_to_apply() {
    let world = World::new();
    let project = world.project().display().to_string();
    let outside = world.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("physics.cs"), "class Physics {}\n").unwrap();
    let external = outside.join("physics.cs").display().to_string();
    world.write("math.cs", "int Add(int a, int b) { return a + b; }\n");
    world.write("utils.cs", "line 1\nline 2\nline 3\nline 4\n");
    world.write("exists.cs", "already here\n");

    let mut daemon = world.spawn();
    let mut t = Transcript { steps: Vec::new() };
    let mut redact = Redactor::new(&world);
    // The external file's id hashes its absolute (temporary) path.
    redact.id(
        &ybs_core::file_id(&external, "class Physics {}\n"),
        "external-file-id",
    );

    t.step(&mut daemon, json!({"action": "ping"}));
    t.step(&mut daemon, json!({"action": "version"}));
    t.step(&mut daemon, json!({"action": "chat_list"}));
    t.step(
        &mut daemon,
        json!({"action": "init", "project_root": project}),
    );
    t.step(
        &mut daemon,
        json!({"action": "bb7_init", "project_root": project}),
    );
    t.step(
        &mut daemon,
        json!({"action": "bb7_init", "project_root": project}),
    );
    t.step(
        &mut daemon,
        json!({"action": "init", "project_root": project}),
    );
    t.step(&mut daemon, json!({"action": "chat_active"}));
    t.step(&mut daemon, json!({"action": "chat_get"}));
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": "math.cs", "content": "x"}),
    );
    let id = t.step(
        &mut daemon,
        json!({"action": "chat_new", "name": "physics-refactor"}),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(id.len(), 10);
    redact.id(&id, "chat-1");
    t.step(&mut daemon, json!({"action": "chat_active"}));
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": "math.cs", "content": world.read("math.cs")}),
    );
    t.step(&mut daemon, json!({"action": "context_add", "path": "utils.cs", "content": world.read("utils.cs"), "readonly": true}));
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": "exists.cs", "content": world.read("exists.cs")}),
    );
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": external, "content": "class Physics {}\n"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": "math.cs", "content": "dup"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "context_add", "path": "../escape.cs", "content": "x"}),
    );
    t.step(&mut daemon, json!({"action": "context_add_section", "path": "utils.cs", "content": "line 2\nline 3\n", "start_line": 2, "end_line": 3}));
    t.step(&mut daemon, json!({"action": "context_add_section", "path": "utils.cs", "content": "x", "start_line": 5, "end_line": 3}));
    t.step(
        &mut daemon,
        json!({"action": "context_set_readonly", "path": external, "readonly": false}),
    );
    t.step(
        &mut daemon,
        json!({"action": "context_set_readonly", "path": "utils.cs", "readonly": false}),
    );
    t.step(
        &mut daemon,
        json!({"action": "context_update", "path": "nothing.cs", "content": "x"}),
    );
    t.step(&mut daemon, json!({"action": "context_list"}));

    t.note("the model writes math.cs (modified), exists.cs (same as context), src/new.cs (added) and other.cs (exists locally)");
    let output = output_dir(&world, &id);
    std::fs::write(
        output.join("math.cs"),
        "int Add(ref int a, ref int b) { return a + b; }\n",
    )
    .unwrap();
    std::fs::create_dir_all(output.join("src")).unwrap();
    std::fs::write(output.join("src/new.cs"), "class New {}\n").unwrap();
    std::fs::write(output.join("exists.cs"), "already here\n").unwrap();
    world.write("other.cs", "local version\n");
    std::fs::write(output.join("other.cs"), "model version\n").unwrap();

    t.step(&mut daemon, json!({"action": "get_file_statuses"}));
    t.step(
        &mut daemon,
        json!({"action": "context_set_readonly", "path": "math.cs", "readonly": true}),
    );
    t.step(
        &mut daemon,
        json!({"action": "get_output_file", "path": "math.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "get_context_file", "path": "math.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "get_context_file", "path": "absent.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "get_diff_paths", "path": "math.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "apply_file", "path": "math.cs"}),
    );
    // The daemon never writes project files (the client writes the returned content).
    assert_eq!(
        world.read("math.cs"),
        "int Add(int a, int b) { return a + b; }\n"
    );
    t.step(
        &mut daemon,
        json!({"action": "apply_file", "path": "math.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "apply_file_as", "path": "other.cs", "destination": "../outside.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "apply_file_as", "path": "other.cs", "destination": "/etc/other.cs"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "apply_file_as", "path": "other.cs", "destination": "renamed/other.cs"}),
    );
    assert!(!world.project().join("renamed/other.cs").exists());
    assert_eq!(world.read("other.cs"), "local version\n");
    t.step(
        &mut daemon,
        json!({"action": "output_delete", "path": "src/new.cs"}),
    );
    assert!(
        !output.join("src").exists(),
        "empty output directories are removed"
    );
    t.step(&mut daemon, json!({"action": "get_file_statuses"}));
    t.step(
        &mut daemon,
        json!({"action": "context_set_readonly", "path": "math.cs", "readonly": true}),
    );
    t.step(&mut daemon, json!({"action": "context_remove_section", "path": "utils.cs", "start_line": 2, "end_line": 3}));
    t.step(
        &mut daemon,
        json!({"action": "context_remove", "path": "exists.cs"}),
    );
    world.write("utils.cs", "line 1\nline 2 changed\nline 3\nline 4\n");
    t.step(&mut daemon, json!({"action": "sync_context"}));
    t.step(
        &mut daemon,
        json!({"action": "save_draft", "draft": "half a thought"}),
    );
    t.step(&mut daemon, json!({"action": "save_chat_settings", "model": "openai/gpt-4o", "reasoning_effort": "high"}));
    t.step(
        &mut daemon,
        json!({"action": "add_system_message", "content": "Response aborted by user."}),
    );
    t.step(&mut daemon, json!({"action": "chat_get"}));
    t.step(
        &mut daemon,
        json!({"action": "chat_rename", "id": id, "name": "Physics Chat"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "search_chats", "query": "PHYSICS"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "search_chats", "query": "aborted"}),
    );
    t.step(&mut daemon, json!({"action": "chat_list"}));
    t.step(&mut daemon, json!({"action": "get_customization_info"}));
    t.step(
        &mut daemon,
        json!({"action": "prepare_instructions", "level": "project"}),
    );
    t.step(
        &mut daemon,
        json!({"action": "prepare_instructions", "level": "sideways"}),
    );
    std::fs::write(
        world.project().join(".bb7/instructions"),
        "@include missing.md\n",
    )
    .unwrap();
    t.step(&mut daemon, json!({"action": "get_customization_info"}));
    t.step(&mut daemon, json!({"action": "send", "content": "hi"}));
    t.step(&mut daemon, json!({"action": "frobnicate"}));
    t.step(&mut daemon, json!({"action": "get_output_file"}));
    t.step(&mut daemon, json!({"action": "shutdown"}));
    let (status, _) = daemon.wait();
    assert!(status.success(), "{status}");
    assert!(
        !world.chats_dir().join(&id).join("lock").exists(),
        "the chat lock is released on shutdown"
    );

    let global_state: Value = serde_json::from_str(
        &std::fs::read_to_string(world.home().join(".bb7/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(global_state["last_model"], "openai/gpt-4o");

    insta::assert_json_snapshot!("session_from_init_to_apply", t.pinned(&redact));
}

#[test]
fn fork_and_edit_restore_context_with_warnings() {
    let world = World::new();
    let project = world.project().display().to_string();
    world.write("math.cs", "v1\n");
    world.write("utils.cs", "u1\n");
    let mut redact = Redactor::new(&world);

    // Phase 1: a chat with two files in context.
    let mut daemon = world.spawn();
    daemon.call(json!({"action": "bb7_init", "project_root": project}));
    daemon.call(json!({"action": "init", "project_root": project}));
    let id = daemon.call(json!({"action": "chat_new", "name": "history"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    redact.id(&id, "chat-1");
    daemon.call(json!({"action": "context_add", "path": "math.cs", "content": "v1\n"}));
    daemon.call(json!({"action": "context_add", "path": "utils.cs", "content": "u1\n"}));
    daemon.call(json!({"action": "shutdown"}));
    assert!(daemon.wait().0.success());

    // What a send would have added: a user message with its context snapshot and an answer.
    let store = ChatStore::new(world.chats_dir(), false);
    let mut active = Active {
        chat: store.load(&id).unwrap(),
        store: store.clone(),
        root: Some(world.project()),
    };
    push_user_message(&mut active, "Refactor math", "m/1");
    active.chat.messages.push(Message::new(
        ybs_core::Role::Assistant,
        vec![Part::text("Done.")],
    ));
    push_user_message(&mut active, "Now utils", "m/1");
    active.save().unwrap();

    // Phase 2: math.cs is re-snapshotted and utils.cs deleted locally, then fork and edit.
    let mut daemon = world.spawn();
    let mut t = Transcript { steps: Vec::new() };
    t.step(
        &mut daemon,
        json!({"action": "init", "project_root": project}),
    );
    t.step(&mut daemon, json!({"action": "chat_active"}));
    t.step(
        &mut daemon,
        json!({"action": "context_update", "path": "math.cs", "content": "v2\n"}),
    );
    std::fs::remove_file(world.project().join("utils.cs")).unwrap();
    t.step(
        &mut daemon,
        json!({"action": "fork_chat", "chat_id": id, "fork_message_index": 3}),
    );
    let late_fork = t.step(
        &mut daemon,
        json!({"action": "fork_chat", "chat_id": id, "fork_message_index": 4}),
    );
    redact.id(late_fork["new_chat_id"].as_str().unwrap(), "fork-0");
    let fork = t.step(
        &mut daemon,
        json!({"action": "fork_chat", "chat_id": id, "fork_message_index": 2}),
    );
    let fork_id = fork["new_chat_id"].as_str().unwrap().to_owned();
    redact.id(&fork_id, "fork-1");
    let forked = t.step(&mut daemon, json!({"action": "chat_get"}));
    // One system message holds every warning, `version` the id in the snapshot.
    let mut warning = forked["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        warning["timestamp"].as_str().unwrap().ends_with('Z'),
        "{warning}"
    );
    warning.as_object_mut().unwrap().remove("timestamp");
    assert_eq!(
        warning,
        json!({"role": "system", "parts": [
            {"type": "context_event", "action": "ForkWarningModified", "path": "math.cs",
             "version": ybs_core::file_id("math.cs", "v1\n")},
            {"type": "context_event", "action": "ForkWarningDeleted", "path": "utils.cs",
             "version": ybs_core::file_id("utils.cs", "u1\n")},
        ]})
    );
    t.step(&mut daemon, json!({"action": "context_list"}));
    t.step(&mut daemon, json!({"action": "chat_select", "id": id}));
    t.step(
        &mut daemon,
        json!({"action": "chat_edit", "chat_id": fork_id, "message_index": 2, "content": "x"}),
    );
    t.step(&mut daemon, json!({"action": "chat_edit", "chat_id": id, "message_index": 4, "content": "Now utils, carefully"}));
    t.step(&mut daemon, json!({"action": "chat_get"}));
    let inherited = t.step(
        &mut daemon,
        json!({"action": "chat_new_with_context", "source_chat_id": id}),
    );
    redact.id(inherited["id"].as_str().unwrap(), "chat-2");
    t.step(&mut daemon, json!({"action": "context_list"}));
    t.step(&mut daemon, json!({"action": "chat_list"}));
    t.step(&mut daemon, json!({"action": "chat_delete", "id": fork_id}));
    t.step(&mut daemon, json!({"action": "chat_delete", "id": fork_id}));
    t.step(&mut daemon, json!({"action": "chat_list"}));
    daemon.call(json!({"action": "shutdown"}));
    assert!(daemon.wait().0.success());
    insta::assert_json_snapshot!("fork_and_edit", t.pinned(&redact));
}
