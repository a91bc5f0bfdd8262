//! What the model is sent and what a reply's end looks like, as the first bb7 does it.
//! Each test drives the real binary against the fake OpenRouter of `ybs-testkit` and checks
//! the protocol lines, the saved chat and the requests; the test names say which behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixture::{Setup, has_output, message_text, write_call as write};
use common::{Daemon, chat_requests};
use serde_json::{Value, json};
use ybs_testkit::{Script, ToolCall, Turn};

const A_RS: &str = "fn alpha() {\n    one();\n}\n";

fn setup(turns: Vec<Turn>, extra: Value) -> Setup {
    Setup::start(Script::new(turns), A_RS, extra)
}

fn a_rs_id() -> String {
    ybs_core::file_id("src/a.rs", A_RS)
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
    // The call before the bad one is announced.
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

#[test]
fn item2_the_system_prompt_states_the_rules_of_each_diff_mode() {
    for (mode, marker) in [
        ("search_replace_multi", "edit_file {edits: [{path, file_id"),
        ("search_replace", "edit_file {path, file_id, old_string"),
        ("anchored", "changes: [{start, end?, content}"),
        ("off", "Your only file tool is write_file"),
    ] {
        let Setup {
            world,
            server,
            mut daemon,
            chat: _chat,
        } = setup(vec![Turn::text(["ok"])], json!({"diff_mode": mode}));
        // Kept as written: the leading blank line and the indentation reach the model.
        world.write(".bb7/instructions", "\n  Indent with two spaces.\n");
        std::fs::write(
            world.home().join(".config/bb7/instructions.md"),
            "@@ a comment\nAnswer in English.",
        )
        .unwrap();
        assert_eq!(daemon.send("s1", "go").last().unwrap()["type"], "done");
        let system = message_text(&chat_requests(&server)[0], "system");
        let global = "<user-instructions source=\"~/.config/bb7/instructions.md\">\nAnswer in English.\n</user-instructions>\n";
        let project = "<project-instructions source=\".bb7/instructions\">\n\n  Indent with two spaces.\n</project-instructions>\n";
        let tools = system.find("# File tools").expect(mode);
        let (g, p) = (system.find(global), system.find(project));
        assert!(g.is_some() && p.is_some(), "{mode}: {system}");
        assert!(g < p && p < Some(tools), "{mode}");
        assert!(system.contains(marker), "{mode}");
        // Rules of every mode: the input layout, read-only files, one reply, missing files.
        for rule in [
            "status=pending_output",
            "Response aborted by user.",
            "refused",
            "never both edit_file and write_file",
            "ask the user to add it",
            "one reply per user message",
        ] {
            assert!(system.contains(rule), "{mode}: {rule:?}");
        }
        assert_eq!(system.contains("# edit_file"), mode != "off", "{mode}");
    }
}

#[test]
fn item3_pending_output_is_sent_with_its_original_reasoning_and_ids() {
    let first = Turn::text(["Renamed."])
        .with_thinking(["Rename one to uno."])
        .with_tool_call(edit("one();", "uno();"))
        .with_tool_call(write("new.txt", "n\n"));
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(vec![first, Turn::text(["ok"])], json!({}));
    assert_eq!(daemon.send("s1", "rename").last().unwrap()["type"], "done");
    assert_eq!(daemon.send("s2", "again").last().unwrap()["type"], "done");
    let user = message_text(&chat_requests(&server)[1], "user");
    let original = a_rs_id();
    let edited = "fn alpha() {\n    uno();\n}\n";
    let pending = ybs_core::file_id("src/a.rs", edited);
    let added = ybs_core::file_id("new.txt", "n\n");
    let readme = ybs_core::file_id("docs/readme.md", "# Readme\n");
    let read_only = format!(
        "<read-only-files>\n\
         <file id=\"{readme}\" path=\"docs/readme.md\" mode=\"ro\" source=\"context\">\n# Readme\n</file>\n\
         <file id=\"{original}\" path=\"src/a.rs\" mode=\"ro\" source=\"context\" status=\"original\">\n{A_RS}</file>\n\
         </read-only-files>\n"
    );
    assert!(user.starts_with(&read_only), "{user}");
    let writable = format!(
        "<writable-files>\n\
         <file id=\"{added}\" path=\"new.txt\" mode=\"rw\" source=\"output\" status=\"added_output\">\nn\n</file>\n\
         <file id=\"{pending}\" path=\"src/a.rs\" mode=\"rw\" source=\"output\" status=\"pending_output\">\n{edited}</file>\n\
         </writable-files>\n"
    );
    assert!(user.ends_with(&writable), "{user}");
    let summary = format!(
        "<files>\n\
         - id={readme} path=docs/readme.md mode=ro source=context\n\
         - id={original} path=src/a.rs mode=ro source=context status=original\n\
         - id={added} path=new.txt mode=rw source=output status=added_output\n\
         - id={pending} path=src/a.rs mode=rw source=output status=pending_output\n\
         </files>\nagain\n</latest-message>\n"
    );
    assert!(user.contains(&summary), "{user}");
    // The kept reasoning goes before the reply's text, as its parts are saved.
    let reasoning = "<message role=\"assistant\" kind=\"reasoning\">\nRename one to uno.\n</message>\n<message role=\"assistant\">\nRenamed.\n</message>\n";
    assert!(user.contains(reasoning), "{user}");
}

#[test]
fn item4_without_reasoning_effort_in_send_none_is_asked() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(vec![Turn::text(["ok"])], json!({}));
    let saved = daemon.call(json!({"action":"save_chat_settings","reasoning_effort":"high"}));
    assert_eq!(saved["type"], "ok", "{saved}");
    assert_eq!(daemon.send("s1", "go").last().unwrap()["type"], "done");
    let request = &chat_requests(&server)[0];
    assert!(request.get("reasoning").is_none(), "{request}");
}

#[test]
fn item9_every_file_carries_its_own_original_tokens() {
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(
        vec![Turn::default().with_tool_call(write("new.txt", "n\n"))],
        json!({}),
    );
    assert_eq!(daemon.send("s1", "go").last().unwrap()["type"], "done");
    let estimate = daemon.call(json!({"action":"estimate_tokens"}));
    let files = estimate["files"].as_array().unwrap();
    for file in files {
        if file["has_output"] == false && file["path"] != "new.txt" {
            assert!(file["original_tokens"].as_u64().unwrap() > 0, "{file}");
            assert_eq!(file["original_tokens"], file["tokens"], "{file}");
            assert_eq!(file["output_tokens"], 0, "{file}");
        }
    }
    assert!(
        files.iter().any(|file| file["path"] == "src/a.rs"),
        "{estimate}"
    );
}

#[test]
fn item11_an_empty_or_mistyped_diff_mode_is_an_error() {
    for (value, message) in [
        (json!(""), None),
        (json!(3), Some("invalid config JSON")),
        (json!(true), Some("invalid config JSON")),
    ] {
        let Setup {
            mut daemon,
            server,
            world: _world,
            chat: _chat,
        } = setup(vec![Turn::text(["ok"])], json!({"diff_mode": value}));
        let last = daemon.send("s1", "go").pop().unwrap();
        assert_eq!(last["type"], "error", "{last}");
        let text = last["message"].as_str().unwrap();
        match message {
            Some(message) => assert_eq!(text, message),
            None => assert!(text.starts_with("invalid diff_mode \"\""), "{text}"),
        }
        assert!(chat_requests(&server).is_empty());
    }
}

#[test]
fn item12_sections_without_lines_are_refused_with_the_first_bb7_words() {
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(Vec::new(), json!({}));
    for request in [
        json!({"action":"context_add_section","path":"src/a.rs","content":"x"}),
        json!({"action":"context_add_section","path":"src/a.rs","content":"x","start_line":1}),
        json!({"action":"context_remove_section","path":"src/a.rs"}),
    ] {
        let reply = daemon.call(request);
        assert_eq!(
            (&reply["type"], &reply["message"]),
            (
                &json!("error"),
                &json!("start_line and end_line must be positive integers")
            ),
            "{reply}"
        );
    }
}

#[test]
fn item14_the_debug_switch_logs_the_whole_exchange() {
    let Setup {
        world,
        server: _server,
        daemon,
        chat,
    } = setup(vec![Turn::text(["Logged reply."])], json!({}));
    drop(daemon);
    let log = world.home().join(".bb7/logs/bb7.log");
    let before = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!before.contains("<latest-message>"));
    std::fs::write(world.home().join(".bb7/debug"), "").unwrap();
    let mut daemon = world.open_project();
    let selected = daemon.call(json!({"action":"chat_select","id":chat}));
    assert_eq!(selected["type"], "ok", "{selected}");
    assert_eq!(daemon.send("s1", "log me").last().unwrap()["type"], "done");
    let text = std::fs::read_to_string(&log).unwrap();
    for part in [
        "You are BB-7",
        "<latest-message>",
        "log me",
        "Logged reply.",
    ] {
        assert!(text.contains(part), "{part:?} not in the log:\n{text}");
    }
    // The whole exchange, but never the key.
    assert!(!text.contains("sk-test"));
}

#[test]
fn item15_the_templates_guide_as_the_first_bb7_ones() {
    let Setup {
        world,
        mut daemon,
        chat: _chat,
        server: _server,
    } = setup(Vec::new(), json!({}));
    let read = |daemon: &mut Daemon, level: &str| {
        let reply = daemon.call(json!({"action":"prepare_instructions","level":level}));
        std::fs::read_to_string(reply["path"].as_str().unwrap()).unwrap()
    };
    let project = read(&mut daemon, "project");
    assert!(project.starts_with("@@ BB-7 project instructions\n@@\n"));
    for guide in [
        "with every request",
        "@include <path>",
        "\"path with spaces\"",
        "inside the project",
        "(``` or ~~~)",
        "@@ @include ARCHITECTURE.md",
    ] {
        assert!(project.contains(guide), "{guide:?}");
    }
    // The one line that is not a comment: where the user's text goes.
    let sent: Vec<&str> = project
        .lines()
        .filter(|line| !line.starts_with("@@") && !line.is_empty())
        .collect();
    assert_eq!(sent, ["# Project context (Markdown is fine)"]);
    let global = read(&mut daemon, "global");
    assert!(global.starts_with("@@ BB-7 global instructions\n@@\n"));
    assert!(global.contains("every project") && global.contains("experience"));
    let system = read(&mut daemon, "system");
    assert!(system.starts_with("@@ BB-7 system prompt override\n@@\n"));
    assert!(system.contains("replaces the built-in system\n@@ prompt completely"));
    assert!(system.contains("You are BB-7"));
    drop(world);
}

#[test]
fn item10_every_get_models_asks_the_provider() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(Vec::new(), json!({}));
    for _ in 0..2 {
        let reply = daemon.call(json!({"action":"get_models"}));
        assert_eq!(reply["models"][0]["id"], "test/model", "{reply}");
    }
    let fetched = server
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/models"))
        .count();
    assert_eq!(fetched, 2);
}

#[test]
fn table_a_half_written_state_file_does_not_fail_save_chat_settings() {
    let Setup {
        world,
        mut daemon,
        chat: _chat,
        server: _server,
    } = setup(Vec::new(), json!({}));
    // The first client truncates, then writes: ours may read it in between.
    let state = world.home().join(".bb7/state.json");
    std::fs::write(&state, "{\"favorites\": [\"a/b\"").unwrap();
    let reply = daemon.call(json!({"action":"save_chat_settings","model":"other/model"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(
        daemon.call(json!({"action":"chat_get"}))["model"],
        "other/model"
    );
    // The half-written file is left for its writer to finish.
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        "{\"favorites\": [\"a/b\""
    );
}

#[test]
fn item5_calls_the_first_bb7_drops_are_diff_errors_here() {
    let odd = Turn::text(["Odd calls."])
        .with_tool_call(ToolCall::new("u", "run_shell", json!({"command":"ls"})))
        .with_tool_call(ToolCall::new(
            "c",
            "write_file",
            json!({"path":"empty.txt"}),
        ))
        .with_tool_call(ToolCall::new("p", "write_file", json!({"content":"x"})))
        .with_tool_call(write("fine.txt", "f\n"));
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![odd], json!({}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    let errors: Vec<&str> = last["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|error| error.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("unknown tool `run_shell`"), "{errors:?}");
    assert!(
        errors[1].starts_with("write_file (empty.txt)"),
        "{errors:?}"
    );
    assert!(errors[2].starts_with("write_file (?)"), "{errors:?}");
    // All or nothing: the good write waits for a retry too.
    assert!(!has_output(&world, &chat, "fine.txt"));

    let off = Turn::default().with_tool_call(edit("one();", "uno();"));
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(vec![off], json!({"diff_mode":"off"}));
    let last = daemon.send("s1", "go").pop().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert!(
        last["errors"][0]
            .as_str()
            .unwrap()
            .contains("edit_file is not available (diff_mode is off)"),
        "{last}"
    );
}

#[test]
fn item5_a_write_after_a_failed_edit_of_the_same_path_is_a_diff_error() {
    // As the first bb7: only an edit that applied claims the path.
    let turn = Turn::text(["Both."])
        .with_tool_call(edit("missing();", "x();"))
        .with_tool_call(write("src/a.rs", "replaced\n"));
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let lines = daemon.send("s1", "go");
    let chunks: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "chunk")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(chunks, ["Both.", "\n[Assistant modified: src/a.rs]\n"]);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert_eq!(last["tool_calls"].as_array().unwrap().len(), 2, "{last}");
}

#[test]
fn item13_an_oversized_line_is_an_error_and_the_daemon_goes_on() {
    let Setup {
        mut daemon,
        world: _world,
        chat: _chat,
        server: _server,
    } = setup(Vec::new(), json!({}));
    let content = "x".repeat(1024 * 1024 + 10);
    daemon
        .send_line(&json!({"request_id":"big","action":"save_draft","draft":content}).to_string());
    let reply = daemon.read_reply().unwrap();
    assert_eq!(
        reply["message"],
        "Request too large (max 1MB). Reduce context size or split the request."
    );
    // Unlike the first bb7, which exits here.
    assert_eq!(daemon.call(json!({"action":"ping"}))["type"], "ok");
}
