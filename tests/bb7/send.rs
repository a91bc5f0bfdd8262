//! `send` and the other model-calling actions against the fake OpenRouter server, as
//! protocol transcripts: streaming, file writes, diff errors and retries, auto repair, 429,
//! context overflow trimming, cancel, titles, estimates, models, balance, the safety guard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixture::{MODEL, Setup};
use common::{Redactor, World, chat_requests};
use serde_json::{Value, json};
use ybs_testkit::{Fault, Script, ToolCall, Turn, Usage};

const A_RS: &str = "fn alpha() {\n    one();\n    two();\n}\n";

fn script(turns: Vec<Turn>) -> Script {
    Script::new(turns).with_credits(10.0, 3.45)
}

fn setup(turns: Vec<Turn>, extra: Value) -> Setup {
    Setup::start(script(turns), A_RS, extra)
}

fn a_rs_id() -> String {
    ybs_core::file_id("src/a.rs", A_RS)
}

fn edit(old: &str, new: &str) -> Value {
    json!({"path":"src/a.rs","file_id":a_rs_id(),"old_string":old,"new_string":new})
}

fn user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => panic!("unexpected content {other}"),
    }
}

#[test]
fn send_streams_and_writes_a_new_and_an_edited_file() {
    let turn = Turn::default()
        .with_thinking(["Let me ", "look."])
        .with_text(["I will ", "add b.rs and ", "rename one."])
        .with_tool_call(
            ToolCall::new(
                "call_1",
                "write_file",
                json!({"path":"src/b.rs","content":"fn b() {}\n"}),
            )
            .in_fragments(3),
        )
        .with_tool_call(
            ToolCall::new(
                "call_2",
                "edit_file",
                json!({"edits":[edit("one();","uno();")]}),
            )
            .in_fragments(4),
        )
        .with_usage(Usage::new(120, 30).with_cached(100).with_cost(0.0123));
    let Setup {
        world,
        server,
        mut daemon,
        chat,
    } = setup(vec![turn], json!({}));
    let mut transcript = daemon.send("s1", "Add b and rename one");
    let statuses = daemon.call(json!({"action":"get_file_statuses"}));
    let files: Vec<Value> = statuses["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| json!({"path": f["path"], "status": f["status"]}))
        .collect();
    transcript.push(json!({"file_statuses": files}));
    let mut redactor = Redactor::new(&world);
    redactor.id(&chat, "chat");
    insta::assert_json_snapshot!(redactor.apply(&Value::Array(transcript.clone())));

    let done = transcript.iter().find(|l| l["type"] == "done").unwrap();
    assert_eq!(done["output_files"], json!(["src/b.rs", "src/a.rs"]));
    assert_eq!(done["usage"]["cost"], json!(0.0123));
    let output = world.chats_dir().join(&chat).join("output");
    assert_eq!(
        std::fs::read_to_string(output.join("src/b.rs")).unwrap(),
        "fn b() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(output.join("src/a.rs")).unwrap(),
        "fn alpha() {\n    uno();\n    two();\n}\n"
    );

    // The request: system prompt with the diff mode rules, tools, privacy, one user message.
    let body = &chat_requests(&server)[0];
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["stream"], true);
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["write_file", "edit_file"]);
    assert_eq!(body["provider"]["data_collection"], "deny");
    assert!(body.get("prompt_cache_key").is_none());
    let system = body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(system.contains("You are BB-7"), "{system}");
    // The rules of the default mode, search_replace_multi.
    assert!(system.contains("edit_file {edits: [{path, file_id"));
    let user = user_text(body);
    assert!(user.starts_with("<read-only-files>\n<file id=\""));
    assert!(user.contains(&format!(
        "<file id=\"{}\" path=\"src/a.rs\" mode=\"rw\" source=\"context\">",
        a_rs_id()
    )));
    assert!(user.contains("path=\"docs/readme.md\" mode=\"ro\""));

    // The chat records the user message and the assistant's text, thinking and events.
    let chat_json = daemon.call(json!({"action":"chat_get"}));
    let messages = chat_json["messages"].as_array().unwrap();
    let user = &messages[messages.len() - 2];
    assert_eq!(user["role"], "user");
    assert_eq!(user["model"], MODEL);
    assert_eq!(user["context_snapshot"].as_array().unwrap().len(), 2);
    let assistant = messages.last().unwrap();
    assert_eq!(assistant["output_files"], json!(["src/b.rs", "src/a.rs"]));
    let kinds: Vec<&str> = assistant["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["thinking", "text", "context_event", "context_event"]
    );
    let parts = assistant["parts"].as_array().unwrap();
    assert_eq!(
        parts[2],
        json!({"type":"context_event","action":"AssistantWriteFile","path":"src/b.rs",
            "version":ybs_core::file_id("src/b.rs", "fn b() {}\n"),
            "readonly":false,"external":false,"added":true})
    );
    assert_eq!(
        parts[3],
        json!({"type":"context_event","action":"AssistantWriteFile","path":"src/a.rs",
            "version":ybs_core::file_id("src/a.rs", "fn alpha() {\n    uno();\n    two();\n}\n"),
            "prev_version":a_rs_id(),"readonly":false,"external":false})
    );
    // What the reply cost and took, as the first bb7 records it (no effort was set).
    let mut usage = assistant["usage"].clone();
    assert!(usage["duration"].as_f64().unwrap() > 0.0, "{usage}");
    usage.as_object_mut().unwrap().remove("duration");
    assert_eq!(
        usage,
        json!({"prompt_tokens":120,"completion_tokens":30,"cached_tokens":100,"total_tokens":150,"cost":0.0123})
    );
    assert!(assistant.get("reasoning_effort").is_none(), "{assistant}");

    // usage.csv has a row in the first bb7's format (no header; project root, model,
    // prompt, completion, cached tokens, cost).
    let usage = std::fs::read_to_string(world.home().join(".bb7/usage.csv")).unwrap();
    assert_eq!(usage.lines().count(), 1, "{usage}");
    let project = world.project().display().to_string();
    assert!(
        usage
            .trim_end()
            .ends_with(&format!(",{project},{MODEL},120,30,100,0.012300")),
        "{usage}"
    );
}

#[test]
fn a_failing_edit_sends_diff_error_and_writes_nothing_then_retry_context_fixes_it() {
    let bad = Turn::text(["Two edits."]).with_tool_call(ToolCall::new(
        "call_1",
        "edit_file",
        json!({"edits":[edit("one();","uno();"), edit("three();","tres();")]}),
    ));
    let good = Turn::text(["Fixed."]).with_tool_call(ToolCall::new(
        "call_2",
        "edit_file",
        json!({"edits":[edit("one();","uno();"), edit("two();","dos();")]}),
    ));
    let Setup {
        world,
        server,
        mut daemon,
        chat,
    } = setup(vec![bad, good], json!({}));
    let lines = daemon.send("s1", "Rename");
    let redactor = Redactor::new(&world);
    insta::assert_json_snapshot!(
        "diff_error_transcript",
        redactor.apply(&Value::Array(lines.clone()))
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    let errors = last["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0],
        "edit_file edit 1 (src/a.rs, base=pending): old_string not found in file"
    );
    assert_eq!(last["tool_calls"][0]["tool"], "edit_file");
    assert_eq!(last["tool_calls"][0]["path"], "src/a.rs");
    assert!(last["tool_calls"][0]["args"]["edits"].is_array());
    assert!(last["usage"]["total_tokens"].is_u64());
    assert!(
        !world
            .chats_dir()
            .join(&chat)
            .join("output/src/a.rs")
            .exists()
    );
    let chat_json = daemon.call(json!({"action":"chat_get"}));
    let assistant = chat_json["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(assistant["parts"][0]["content"], "Two edits.");
    assert!(
        assistant["usage"]["duration"].as_f64().unwrap() > 0.0,
        "{assistant}"
    );

    let retry = json!({"errors": last["errors"], "tool_calls": last["tool_calls"]});
    let lines = daemon.stream(
        "s2",
        json!({"action":"send","content":"Try again","retry_context":retry}),
    );
    insta::assert_json_snapshot!(
        "retry_context_transcript",
        redactor.apply(&Value::Array(lines.clone()))
    );
    assert_eq!(lines.last().unwrap()["type"], "done");
    let user = user_text(&chat_requests(&server)[1]);
    let retry_at = user.find("<retry-context>").unwrap();
    assert!(user.find("</latest-message>").unwrap() < retry_at);
    assert!(retry_at < user.find("<writable-files>").unwrap());
    assert!(
        user.contains("edit_file edit 1 (src/a.rs, base=pending): old_string not found in file")
    );
    assert_eq!(
        std::fs::read_to_string(world.chats_dir().join(&chat).join("output/src/a.rs")).unwrap(),
        "fn alpha() {\n    uno();\n    dos();\n}\n"
    );
}

#[test]
fn auto_retry_repairs_failed_edits_once() {
    let bad = Turn::text(["Edit."])
        .with_tool_call(ToolCall::new(
            "c1",
            "edit_file",
            json!({"edits":[edit("nope","x")]}),
        ))
        .with_usage(Usage::new(10, 5).with_cost(0.01));
    let good = Turn::default()
        .with_tool_call(ToolCall::new(
            "c2",
            "edit_file",
            json!({"edits":[edit("two();","dos();")]}),
        ))
        .with_usage(Usage::new(20, 5).with_cost(0.02));
    let Setup {
        world,
        server,
        mut daemon,
        chat,
    } = setup(vec![bad, good], json!({"auto_retry_partial_edits": true}));
    let lines = daemon.send("s1", "Edit");
    insta::assert_json_snapshot!(
        "auto_repair_transcript",
        Redactor::new(&world).apply(&Value::Array(lines.clone()))
    );
    let chunks: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "chunk")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        chunks,
        ["Edit.", "\n[Reattempting to apply file changes...]\n"]
    );
    let done = lines.last().unwrap();
    assert_eq!(done["type"], "done", "{done}");
    assert_eq!(done["output_files"], json!(["src/a.rs"]));
    assert_eq!(done["usage"]["prompt_tokens"], 30);
    assert!((done["usage"]["cost"].as_f64().unwrap() - 0.03).abs() < 1e-9);
    assert!(
        world
            .chats_dir()
            .join(&chat)
            .join("output/src/a.rs")
            .exists()
    );
    let repair = user_text(&chat_requests(&server)[1]);
    assert!(repair.contains("<retry-context>"));
    assert!(repair.contains("old_string not found in file"));
}

#[test]
fn auto_retry_that_fails_again_sends_diff_error() {
    let bad = || {
        Turn::text(["Edit."]).with_tool_call(ToolCall::new(
            "c1",
            "edit_file",
            json!({"edits":[edit("nope","x")]}),
        ))
    };
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(
        vec![bad(), bad()],
        json!({"auto_retry_partial_edits": true}),
    );
    let lines = daemon.send("s1", "Edit");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert_eq!(
        last["errors"][0],
        "edit_file edit 0 (src/a.rs, base=context): old_string not found in file"
    );
    assert!(
        !world
            .chats_dir()
            .join(&chat)
            .join("output")
            .join("src/a.rs")
            .exists()
    );
}

#[test]
fn a_rate_limit_is_retried() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(
        vec![
            Turn::fault(Fault::rate_limited(1)),
            Turn::text(["after the wait"]),
        ],
        json!({}),
    );
    let lines = daemon.send("s1", "hi");
    assert_eq!(lines.last().unwrap()["type"], "done", "{lines:?}");
    assert_eq!(lines[0]["content"], "after the wait");
    assert_eq!(chat_requests(&server).len(), 2);
}

#[test]
fn a_context_overflow_trims_the_oldest_pairs_and_retries() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(
        vec![
            Turn::text(["first answer"]),
            Turn::text(["second answer"]),
            Turn::fault(Fault::context_overflow(300_000, 200_000)),
            Turn::fault(Fault::context_overflow(250_000, 200_000)),
            Turn::text(["fits now"]),
        ],
        json!({}),
    );
    // The context events recorded before the first message form a pair of their own.
    let done = daemon.send("s1", "first question").pop().unwrap();
    let base = done["visible"].as_u64().unwrap();
    assert_eq!(done["predicted"], base);
    let done = daemon.send("s2", "second question").pop().unwrap();
    assert_eq!(
        (
            done["predicted"].clone(),
            done["trimmed"].clone(),
            done["visible"].clone()
        ),
        (json!(base + 1), json!(0), json!(base + 1))
    );
    let lines = daemon.send("s3", "third question");
    let done = lines.last().unwrap();
    assert_eq!(done["type"], "done", "{done}");
    assert_eq!(done["predicted"], base + 2);
    assert_eq!(done["trimmed"], 2);
    assert_eq!(done["visible"], base + 2);
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 5);
    let overflowed = user_text(&requests[2]);
    let retried = user_text(&requests[4]);
    assert!(overflowed.contains("first question") && overflowed.contains("second question"));
    assert!(!retried.contains("first question"), "{retried}");
    assert!(retried.contains("second question"));
    assert!(retried.contains("third question"));
}

#[test]
fn provider_errors_are_labelled_and_keep_the_user_message() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![Turn::fault(Fault::status(401))], json!({}));
    let last = daemon.send("s1", "hello").pop().unwrap();
    assert_eq!(last["type"], "error");
    assert!(
        last["message"].as_str().unwrap().starts_with("auth: "),
        "{last}"
    );
    let chat_json = daemon.call(json!({"action":"chat_get"}));
    let messages = chat_json["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "user");
    assert_eq!(messages[n - 2]["parts"][0]["content"], "hello");
    // As the first bb7: the error is recorded as a system message after the user's.
    assert_eq!(messages[n - 1]["role"], "system");
    assert_eq!(messages[n - 1]["parts"][0]["content"], last["message"]);
}

#[test]
fn cancel_keeps_partial_text_and_records_the_abort() {
    let chunks: Vec<String> = (0..200).map(|i| format!("c{i} ")).collect();
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![Turn::text(chunks).with_delay_ms(20)], json!({}));
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"long"}).to_string());
    let first = daemon.read_reply().unwrap();
    assert_eq!(first["type"], "chunk", "{first}");

    // Read-only actions are answered during the stream, state-changing ones refused.
    daemon.send_line(&json!({"request_id":"r1","action":"context_list"}).to_string());
    daemon.send_line(
        &json!({"request_id":"r2","action":"context_remove","path":"src/a.rs"}).to_string(),
    );
    daemon.send_line(&json!({"request_id":"r3","action":"send","content":"again"}).to_string());
    daemon.send_line(
        &json!({"request_id":"c1","action":"cancel","target_request_id":"s1"}).to_string(),
    );
    let mut replies = std::collections::BTreeMap::new();
    let mut streamed = first["content"].as_str().unwrap().to_owned();
    // Replies to different requests may come in any order: wait for all of them.
    while ["s1", "r1", "r2", "r3", "c1"]
        .iter()
        .any(|id| !replies.contains_key(*id))
    {
        let line = daemon.read_reply().unwrap();
        let id = line["request_id"].as_str().unwrap().to_owned();
        if line["type"] == "chunk" {
            streamed.push_str(line["content"].as_str().unwrap());
            continue;
        }
        replies.insert(id, line);
    }
    assert_eq!(replies["r1"]["type"], "context_list");
    assert_eq!(
        replies["r2"]["message"],
        "Another request is already in progress"
    );
    assert_eq!(
        replies["r3"]["message"],
        "Another request is already in progress"
    );
    assert_eq!(replies["c1"]["type"], "ok");
    assert_eq!(
        replies["s1"],
        json!({"type":"error","request_id":"s1","message":"Response aborted by user."})
    );
    assert!(!streamed.contains("c199"));

    let chat_json = daemon.call(json!({"action":"chat_get"}));
    let messages = chat_json["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 1]["role"], "system");
    assert_eq!(
        messages[n - 1]["parts"][0]["content"],
        "Response aborted by user."
    );
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 2]["parts"][0]["content"], streamed.as_str());
    assert!(messages[n - 2]["usage"]["duration"].as_f64().unwrap() > 0.0);
    // Nothing is streaming any more.
    let again = daemon.call(json!({"action":"cancel","target_request_id":"s1"}));
    assert_eq!(again["message"], "No active request to cancel");
}

#[test]
fn init_and_rename_are_answered_during_a_stream() {
    let chunks: Vec<String> = (0..30).map(|i| format!("c{i} ")).collect();
    let Setup {
        mut daemon,
        world,
        server: _server,
        chat,
    } = setup(vec![Turn::text(chunks).with_delay_ms(20)], json!({}));
    let root = world.project().display().to_string();
    let other = world.home().display().to_string();
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"long"}).to_string());
    let first = daemon.read_reply().unwrap();
    assert_eq!(first["type"], "chunk", "{first}");
    for request in [
        json!({"request_id":"i1","action":"init","project_root":root}),
        json!({"request_id":"a1","action":"chat_active"}),
        json!({"request_id":"n1","action":"chat_rename","id":chat,"name":"Renamed"}),
        json!({"request_id":"i2","action":"init","project_root":other}),
        json!({"request_id":"y1","action":"sync_context"}),
    ] {
        daemon.send_line(&request.to_string());
    }
    let mut replies = std::collections::BTreeMap::new();
    // Replies to different requests may come in any order: wait for all of them.
    while ["s1", "i1", "a1", "n1", "i2", "y1"]
        .iter()
        .any(|id| !replies.contains_key(*id))
    {
        let line = daemon.read_reply().unwrap();
        if line["type"] != "chunk" {
            replies.insert(line["request_id"].as_str().unwrap().to_owned(), line);
        }
    }
    assert_eq!(
        replies["i1"],
        json!({"type":"ok","request_id":"i1","default_model":MODEL})
    );
    assert_eq!(
        replies["a1"],
        json!({"type":"chat_active","request_id":"a1","id":chat})
    );
    assert_eq!(replies["n1"], json!({"type":"ok","request_id":"n1"}));
    for id in ["i2", "y1"] {
        assert_eq!(
            replies[id],
            json!({"type":"error","request_id":id,"message":"Another request is already in progress"})
        );
    }
    assert_eq!(replies["s1"]["type"], "done", "{}", replies["s1"]);
    let got = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(got["name"], "Renamed");
    let last = got["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "assistant");
    let list = daemon.call(json!({"action":"chat_list"}));
    assert_eq!(list["chats"][0]["name"], "Renamed");
}

#[test]
fn the_first_exchange_gets_a_title() {
    let Setup {
        mut daemon,
        chat,
        world: _world,
        server: _server,
    } = setup(
        vec![
            Turn::text(["answer"]),
            Turn::text(["\"Physics Refactor Plan\""]),
        ],
        json!({"title_model": "test/title"}),
    );
    daemon.send("s1", "Refactor the physics");
    let event = daemon.read_reply().unwrap();
    assert_eq!(
        event,
        json!({"type":"title_updated","chat_id":chat,"title":"Physics Refactor Plan"})
    );
    let list = daemon.call(json!({"action":"chat_list"}));
    assert_eq!(list["chats"][0]["name"], "Physics Refactor Plan");
}

#[test]
fn generate_title_renames_on_request() {
    let Setup {
        server,
        mut daemon,
        chat,
        world: _world,
    } = setup(
        vec![Turn::text(["  'Short Title'  "])],
        json!({"title_model": "test/title"}),
    );
    daemon.send_line(
        &json!({"request_id":"g1","action":"generate_title","chat_id":chat,"content":"What is up"})
            .to_string(),
    );
    // `ok` at once, then the event when the title arrives.
    let reply = daemon.read_reply().unwrap();
    assert_eq!(reply, json!({"type":"ok","request_id":"g1"}));
    let reply = daemon.read_reply().unwrap();
    assert_eq!(reply["type"], "title_updated");
    assert_eq!(reply["title"], "Short Title");
    let request = &chat_requests(&server)[0];
    assert_eq!(request["model"], "test/title");
    assert_eq!(request["temperature"], 0.5);
}

#[test]
fn generate_title_needs_a_chat_id_and_a_title_model() {
    let Setup {
        server,
        mut daemon,
        chat,
        world: _world,
    } = setup(vec![Turn::text(["never asked"])], json!({}));
    let reply = daemon.call(json!({"action":"generate_title","content":"What is up"}));
    assert_eq!(reply["message"], "Missing required field: chat_id");
    let reply =
        daemon.call(json!({"action":"generate_title","chat_id":chat,"content":"What is up"}));
    assert_eq!(reply["message"], "title_model not configured");
    assert!(chat_requests(&server).is_empty(), "no paid call was made");
}

#[test]
fn token_estimates_count_cl100k() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    let reply = daemon.call(json!({"action":"estimate_text_tokens","text":"hello world"}));
    assert_eq!(
        reply,
        json!({"type":"text_token_estimate","request_id":reply["request_id"],"tokens":2})
    );
    let reply = daemon.call(json!({"action":"estimate_tokens"}));
    assert_eq!(reply["type"], "token_estimate");
    let total = reply["total"].as_u64().unwrap();
    let parts: u64 = ["context_files", "history", "instructions", "system_prompt"]
        .iter()
        .map(|key| reply[key].as_u64().unwrap())
        .sum();
    assert_eq!(total, parts);
    let files = reply["files"].as_array().unwrap();
    let readme = files
        .iter()
        .find(|f| f["path"] == "docs/readme.md")
        .unwrap();
    let counted = daemon.call(json!({"action":"estimate_text_tokens","text":"# Readme\n"}));
    assert_eq!(readme["tokens"], counted["tokens"]);
    assert!(readme["tokens"].as_u64().unwrap() > 0);
    assert_eq!(reply["input_text"], 0);

    // The text being typed is counted and added to the total.
    let typed = daemon.call(json!({"action":"estimate_tokens","input_text":"hello world"}));
    assert_eq!(typed["input_text"], 2);
    assert_eq!(typed["total"].as_u64().unwrap(), total + 2);
    let mut rest = typed.clone();
    let mut before = reply.clone();
    for value in [&mut rest, &mut before] {
        for key in ["input_text", "total", "request_id"] {
            value.as_object_mut().unwrap().remove(key);
        }
    }
    assert_eq!(rest, before);
}

#[test]
fn estimate_text_tokens_counts_each_of_texts_in_order() {
    let world = World::new();
    let mut daemon = world.spawn();
    let reply = daemon.call(json!({"request_id":"t1","action":"estimate_text_tokens","texts":["hello world", "", "hello world hello world"]}));
    assert_eq!(
        reply,
        json!({"type":"text_token_estimate","request_id":reply["request_id"],"tokens":[2, 0, 4]})
    );
    for args in [json!({"texts": []}), json!({})] {
        let mut request = json!({"request_id":"t2","action":"estimate_text_tokens"});
        for (key, value) in args.as_object().unwrap() {
            request[key] = value.clone();
        }
        let reply = daemon.call(request);
        assert_eq!(
            reply,
            json!({"type":"error","request_id":reply["request_id"],"message":"Missing or empty 'texts' array"})
        );
    }
}

#[test]
fn models_and_balance_in_the_protocol_shape() {
    let Setup {
        mut daemon,
        world: _world,
        server: _server,
        chat: _chat,
    } = setup(vec![], json!({}));
    let reply = daemon.call(json!({"action":"get_models"}));
    assert_eq!(reply["type"], "models");
    let model = &reply["models"][0];
    assert_eq!(model["id"], MODEL);
    assert_eq!(model["context_length"], 200_000);
    for key in ["name", "supports_reasoning", "supports_tools", "pricing"] {
        assert!(model.get(key).is_some(), "{key} in {model}");
    }
    // What the fake OpenRouter gives is passed on (it has no max_completion_tokens).
    assert_eq!(model["description"], "A scripted fake model for tests.");
    assert!(model["created"].as_i64().unwrap() > 0, "{model}");
    assert_eq!(model["pricing"]["internal_reasoning"], "0");
    // As the first bb7, every key is present, with a zero value when unknown.
    assert_eq!(model["max_completion_tokens"], 0, "{model}");
    assert_eq!(model["expiration_date"], Value::Null, "{model}");
    assert_eq!(model["pricing"]["input_cache_read"], "", "{model}");
    let reply = daemon.call(json!({"action":"get_balance"}));
    assert_eq!(reply["type"], "balance");
    assert_eq!(reply["total_credits"], 10.0);
    assert_eq!(reply["total_usage"], 3.45);
}

#[test]
fn config_errors_are_the_protocol_strings() {
    let world = World::new();
    let mut daemon = world.spawn();
    let root = world.project().display().to_string();
    daemon.call(json!({"action":"bb7_init","project_root":root}));
    daemon.call(json!({"action":"init","project_root":root}));
    daemon.call(json!({"action":"chat_new"}));
    let reply = daemon.call(json!({"action":"send","content":"hi"}));
    assert_eq!(
        reply["message"],
        "Config file not found: ~/.config/bb7/config.json"
    );
    let dir = world.home().join(".config/bb7");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"default_model":"x"}"#).unwrap();
    let reply = daemon.call(json!({"action":"send","content":"hi"}));
    assert_eq!(reply["message"], "API key not set in config");
    let reply = daemon.call(json!({"action":"get_balance"}));
    assert_eq!(reply["message"], "API key not set in config");
}

#[test]
fn the_same_state_sends_the_same_bytes() {
    let Setup {
        server,
        mut daemon,
        chat,
        world: _world,
    } = setup(vec![Turn::text(["one"]), Turn::text(["two"])], json!({}));
    daemon.send("s1", "question");
    let path = _world.chats_dir().join(&chat).join("chat.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let index = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["role"] == "user")
        .unwrap();
    let edited = daemon.call(
        json!({"action":"chat_edit","chat_id":chat,"message_index":index,"content":"question"}),
    );
    assert_eq!(edited["type"], "ok", "{edited}");
    daemon.send("s2", "question");
    let requests = chat_requests(&server);
    assert_eq!(requests[0]["messages"], requests[1]["messages"]);
}

#[test]
fn a_write_outside_the_project_stops_the_daemon() {
    // Slow frames: the link is planted once the send is under way (a chat that has one
    // before it is sent is refused earlier, see tests/security.rs).
    let turn = Turn::text(["writing"])
        .with_tool_call(ToolCall::new(
            "c1",
            "write_file",
            json!({"path":"escape/evil.txt","content":"x"}),
        ))
        .with_delay_ms(150);
    let Setup {
        world,
        mut daemon,
        chat,
        server: _server,
    } = setup(vec![turn], json!({}));
    let outside = tempfile::tempdir().unwrap();
    let output = world.chats_dir().join(&chat).join("output");
    std::fs::create_dir_all(&output).unwrap();
    daemon.send_line(&json!({"request_id":"s1","action":"send","content":"go"}).to_string());
    let first = daemon.read_reply().unwrap();
    assert_eq!(first["type"], "chunk", "{first}");
    std::os::unix::fs::symlink(outside.path(), output.join("escape")).unwrap();
    while let Some(line) = daemon.read_reply() {
        assert_ne!(line["type"], "done", "{line}");
    }
    let (status, stderr) = daemon.wait();
    assert_eq!(status.code(), Some(2));
    assert!(
        stderr.contains("BB-7 fatal: attempted to write outside project root"),
        "{stderr}"
    );
    assert!(!outside.path().join("evil.txt").exists());
}

#[test]
fn options_reach_the_request_and_global_chats_get_no_tools() {
    let Setup {
        server,
        mut daemon,
        world: _world,
        chat: _chat,
    } = setup(
        vec![
            Turn::text(["project"]),
            Turn::text(["again"]),
            Turn::text(["global"]),
        ],
        json!({"explicit_cache_key": true, "allow_data_retention": false, "allow_training": true}),
    );
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"hi","reasoning_effort":"high"}),
    );
    assert_eq!(lines.last().unwrap()["type"], "done");
    let body = &chat_requests(&server)[0];
    // The first bb7's key: `bb7:<chat id>:<model>`.
    let key = body["prompt_cache_key"].as_str().unwrap();
    assert!(
        key.starts_with("bb7:") && key.ends_with(&format!(":{}", body["model"].as_str().unwrap())),
        "{key}"
    );
    assert_eq!(body["provider"]["zdr"], true);
    assert!(body["provider"].get("data_collection").is_none(), "{body}");
    assert_eq!(body["reasoning"]["effort"], "high");
    assert!(body["tools"].is_array());
    let got = daemon.call(json!({"action":"chat_get"}));
    let assistant = got["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_effort"], "high");

    // The chat remembers the model a send used.
    let lines = daemon.stream(
        "s1b",
        json!({"action":"send","content":"again","model":"other/model"}),
    );
    assert_eq!(lines.last().unwrap()["type"], "done", "{lines:?}");
    assert_eq!(chat_requests(&server)[1]["model"], "other/model");
    let got = daemon.call(json!({"action":"chat_get"}));
    assert_eq!(got["model"], "other/model");

    let created = daemon.call(json!({"action":"chat_new","global":true}));
    assert_eq!(created["type"], "ok", "{created}");
    let lines = daemon.send("s2", "hello");
    assert_eq!(lines.last().unwrap()["type"], "done", "{lines:?}");
    let body = &chat_requests(&server)[2];
    assert!(body.get("tools").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("# edit_file"));
}

#[test]
fn edit_calls_fail_in_the_first_bb7_s_words() {
    // Every edit a no-op: the call cannot be read, and the reply ends with an error.
    let noops = Turn::text(["Edit."]).with_tool_call(ToolCall::new(
        "c1",
        "edit_file",
        json!({"edits":[edit("one();","one();")]}),
    ));
    // The second edit's file_id is wrong: numbered from 0 within its call, the third edit is
    // not tried, and the id error names the id expected.
    let wrong_id = Turn::text(["Edit."]).with_tool_call(ToolCall::new(
        "c2",
        "edit_file",
        json!({"edits":[
            edit("one();","uno();"),
            {"path":"src/a.rs","file_id":"0000","old_string":"two();","new_string":"dos();"},
            edit("missing","x"),
        ]}),
    ));
    let Setup {
        world,
        mut daemon,
        server: _server,
        ..
    } = setup(vec![noops, wrong_id], json!({}));
    let lines = daemon.send("s1", "Edit");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "error", "{last}");
    assert_eq!(
        last["message"],
        "edit_file parse error: edit_file: all edits are no-ops"
    );
    let lines = daemon.send("s2", "Edit again");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{last}");
    assert_eq!(
        last["errors"],
        json!([format!(
            "edit_file edit 1 (src/a.rs): file_id mismatch: got 0000, expected {} (base=context). \
             Use the writable @file id for this path.",
            a_rs_id()
        )])
    );
    assert_eq!(world.read("src/a.rs"), A_RS);
}
