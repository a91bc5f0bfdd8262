//! Issue #32: what the model is sent and what a reply's end looks like, as the first bb7 does
//! it. Each test drives the real binary against the fake OpenRouter of `ybs-testkit` and
//! checks the protocol lines, the saved chat and the requests; the test names give the item.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Daemon, World, chat_requests};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, Script, ToolCall, Turn};

const MODEL: &str = "test/model";
const A_RS: &str = "fn alpha() {\n    one();\n}\n";

struct Setup {
    world: World,
    server: FakeLlm,
    daemon: Daemon,
    chat: String,
}

fn setup(turns: Vec<Turn>, extra: Value) -> Setup {
    let world = World::new();
    let script = Script::new(turns).with_models([Model::new(MODEL, 200_000)]);
    let server = FakeLlm::start(script).unwrap();
    world.configure(&server.base_url(), MODEL, extra);
    world.write("src/a.rs", A_RS);
    world.write("docs/readme.md", "# Readme\n");
    let mut daemon = world.open_project();
    let chat = daemon.call(json!({"action":"chat_new","name":"t"}))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (path, readonly) in [("src/a.rs", false), ("docs/readme.md", true)] {
        let content = world.read(path);
        let reply = daemon.call(
            json!({"action":"context_add","path":path,"content":content,"readonly":readonly}),
        );
        assert_eq!(reply["type"], "ok", "{reply}");
    }
    Setup {
        world,
        server,
        daemon,
        chat,
    }
}

fn a_rs_id() -> String {
    ybs_core::file_id("src/a.rs", A_RS)
}

fn write(path: &str, content: &str) -> ToolCall {
    ToolCall::new("w", "write_file", json!({"path":path,"content":content}))
}

fn edit(old: &str, new: &str) -> ToolCall {
    ToolCall::new(
        "e",
        "edit_file",
        json!({"edits":[{"path":"src/a.rs","file_id":a_rs_id(),"old_string":old,"new_string":new}]}),
    )
}

fn messages(daemon: &mut Daemon) -> Vec<Value> {
    daemon.call(json!({"action":"chat_get"}))["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn has_output(world: &World, chat: &str, path: &str) -> bool {
    world
        .chats_dir()
        .join(chat)
        .join("output")
        .join(path)
        .exists()
}

/// The text of the last system message of the chat.
fn last_system(daemon: &mut Daemon) -> Value {
    let all = messages(daemon);
    let last = all.last().unwrap().clone();
    assert_eq!(last["role"], "system", "{last}");
    last["parts"][0]["content"].clone()
}

/// Lines up to the final reply of `send` `s1`, cancelling it after the first line whose
/// content is `trigger`.
fn send_and_cancel_at(daemon: &mut Daemon, trigger: &str) -> Vec<Value> {
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"go"}).to_string());
    let mut lines = Vec::new();
    let mut cancelled = false;
    loop {
        let line = daemon.read_reply().unwrap();
        if line["request_id"] == "c1" {
            continue;
        }
        let last = matches!(line["type"].as_str(), Some("done" | "diff_error" | "error"));
        if !cancelled && line["content"].as_str() == Some(trigger) {
            daemon.send_line(
                &json!({"request_id":"c1","action":"cancel","target_request_id":"s1"}).to_string(),
            );
            cancelled = true;
        }
        lines.push(line);
        if last {
            return lines;
        }
    }
}

#[test]
fn item1_a_cancel_during_the_hidden_repair_reads_as_a_cancel() {
    let first = Turn::text(["Editing."]).with_tool_call(edit("missing();", "x();"));
    let slow: Vec<String> = (0..200).map(|i| format!("r{i} ")).collect();
    let repair = Turn::text(slow)
        .with_delay_ms(20)
        .with_tool_call(edit("one();", "uno();"));
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(
        vec![first, repair],
        json!({"auto_retry_partial_edits": true}),
    );
    let lines = send_and_cancel_at(&mut daemon, "\n[Reattempting to apply file changes...]\n");
    assert_eq!(
        lines.last().unwrap(),
        &json!({"type":"error","request_id":"s1","message":"Response aborted by user."})
    );
    assert_eq!(last_system(&mut daemon), "Response aborted by user.");
    let all = messages(&mut daemon);
    let kept = &all[all.len() - 2];
    assert_eq!(kept["role"], "assistant");
    assert_eq!(kept["parts"][0]["content"], "Editing.");
    assert!(!has_output(&world, &chat, "src/a.rs"));
}

#[test]
fn item5_a_cancel_writes_no_file_of_the_complete_calls() {
    let long = "x".repeat(400);
    let turn = Turn::text(["start"])
        .with_tool_call(write("new.txt", "n\n"))
        .with_tool_call(write("slow.txt", &long).in_fragments(150))
        .with_delay_ms(20);
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"go"}).to_string());
    assert_eq!(daemon.read_reply().unwrap()["content"], "start");
    // The first call is complete well before the second one's 150 fragments are.
    std::thread::sleep(std::time::Duration::from_millis(400));
    daemon.send_line(
        &json!({"request_id":"c1","action":"cancel","target_request_id":"s1"}).to_string(),
    );
    let mut replies = vec![daemon.read_reply().unwrap(), daemon.read_reply().unwrap()];
    replies.sort_by_key(|reply| reply["request_id"].as_str().unwrap().to_owned());
    assert_eq!(
        replies[1]["message"], "Response aborted by user.",
        "{replies:?}"
    );
    assert!(!has_output(&world, &chat, "new.txt"));
    assert_eq!(last_system(&mut daemon), "Response aborted by user.");
}

#[test]
fn item5_a_write_after_an_edit_of_the_same_path_ends_the_reply() {
    let turn = Turn::text(["Both."])
        .with_tool_call(edit("one();", "uno();"))
        .with_tool_call(write("src/a.rs", "replaced\n"));
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let lines = daemon.send("s1", "go");
    let chunks: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "chunk")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    // Item 6: the call before the bad one is announced.
    assert_eq!(chunks, ["Both.", "\n[Assistant modified: 1 edit(s)]\n"]);
    let message = "Duplicate write_file for path in single response: src/a.rs";
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["type"], &last["message"]),
        (&json!("error"), &json!(message))
    );
    assert_eq!(last_system(&mut daemon), message);
    assert!(!has_output(&world, &chat, "src/a.rs"));
}

#[test]
fn item6_a_path_outside_the_context_ends_the_reply_after_the_earlier_calls() {
    let outside = ToolCall::new(
        "o",
        "edit_file",
        json!({"edits":[{"path":"nowhere.rs","file_id":"00000000","old_string":"a","new_string":"b"}]}),
    );
    let turn = Turn::default()
        .with_tool_call(write("new.txt", "n\n"))
        .with_tool_call(ToolCall::new(
            "e",
            "edit_file",
            json!({"edits":[
                {"path":"src/a.rs","file_id":a_rs_id(),"old_string":"one();","new_string":"uno();"},
                {"path":"src/a.rs","file_id":a_rs_id(),"old_string":"same","new_string":"same"}
            ]}),
        ))
        .with_tool_call(outside);
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let lines = daemon.send("s1", "go");
    let chunks: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "chunk")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    // The no-op edit is not counted.
    assert_eq!(
        chunks,
        [
            "\n[Assistant added: new.txt]\n",
            "\n[Assistant modified: 1 edit(s)]\n"
        ]
    );
    let message = "edit_file: nowhere.rs not in context or output";
    assert_eq!(lines.last().unwrap()["message"], message);
    assert_eq!(last_system(&mut daemon), message);
    assert!(!has_output(&world, &chat, "new.txt"));
}

#[test]
fn item4_the_hidden_repair_asks_for_no_reasoning() {
    let first = Turn::text(["Editing."]).with_tool_call(edit("missing();", "x();"));
    let repair = Turn::default().with_tool_call(edit("one();", "uno();"));
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(
        vec![first, repair],
        json!({"auto_retry_partial_edits": true}),
    );
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"go","reasoning_effort":"high"}),
    );
    assert_eq!(lines.last().unwrap()["type"], "done", "{lines:?}");
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0]["reasoning"]["effort"], "high",
        "{}",
        requests[0]
    );
    assert!(requests[1].get("reasoning").is_none(), "{}", requests[1]);
}

#[test]
fn item7_edit_errors_read_as_the_first_bb7_words_them() {
    let empty = Turn::default().with_tool_call(edit("", "x();"));
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(vec![empty], json!({}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert_eq!(
        last["errors"],
        json!([
            "edit_file edit 0 (src/a.rs, base=context): old_string is empty but file has content"
        ])
    );

    let anchored = |changes: Value| {
        Turn::default().with_tool_call(ToolCall::new(
            "a",
            "edit_file",
            json!({"path":"src/a.rs","file_id":a_rs_id(),"changes":changes}),
        ))
    };
    let missing = anchored(json!([
        {"start":["fn alpha() {"],"content":["fn alpha() {"]},
        {"start":["nope","more"],"content":["x"]}
    ]));
    let overlap = anchored(json!([
        {"start":["fn alpha() {"],"end":["}"],"content":["a"]},
        {"start":["    one();"],"content":["b"]}
    ]));
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(vec![missing, overlap], json!({"diff_mode":"anchored"}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(
        last["errors"],
        json!(["edit_file src/a.rs: change 1: anchor not found (start: \"nope\" ...)"]),
        "{last}"
    );
    let last = daemon.send("s2", "again").pop().unwrap();
    assert_eq!(
        last["errors"],
        json!([
            "edit_file src/a.rs: change 1: regions overlap (lines 1-3 and 2-2) (start: \"    one();\")"
        ]),
        "{last}"
    );
}
