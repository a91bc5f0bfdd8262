//! Stalls: a huge file or prompt, an adversarial edit or a reply of
//! thousands of tool calls cannot hold the daemon. Token counting runs off the session's
//! thread, so other requests are answered while it runs; edit matching is bounded; `cancel`
//! after the stream ended stops the processing of its tool calls. No timing thresholds: the
//! tests look at the order of the replies, at what the daemon answers and at its log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::World;
use serde_json::{Value, json};
use ybs_testkit::{ToolCall, Turn};

/// About `megabytes` MB of varied text (every line different, so nothing is cached twice).
fn big_text(megabytes: usize) -> String {
    let mut text = String::new();
    let mut n = 0u64;
    while text.len() < megabytes << 20 {
        n += 1;
        text.push_str(&format!(
            "line {n}: the quick brown fox {} jumps over {} lazy dogs\n",
            n * 7919 % 1_000_003,
            n % 97
        ));
    }
    text
}

/// Plants (as a cloned repository ships it) the active chat `cloned` whose context holds
/// `big.txt` with `content` (requests are at most 1 MiB: a file this big reaches the daemon
/// only from disk); the project file is there too.
fn plant_chat_with_big_file(world: &World, content: &str) {
    world.write("big.txt", content);
    let id = "bbbbbbbbbb";
    let dir = world.chats_dir().join(id);
    std::fs::create_dir_all(dir.join("context")).unwrap();
    std::fs::write(dir.join("context/big.txt"), content).unwrap();
    let chat = json!({"version": 2, "id": id, "name": "cloned", "model": "test/model",
        "created": "2026-01-01T00:00:00Z", "draft": "", "messages": [],
        "context_files": [{"path": "big.txt", "readonly": false, "external": false,
            "version": ybs_core::file_id("big.txt", content)}]});
    std::fs::write(dir.join("chat.json"), chat.to_string()).unwrap();
    let index = json!({"version": 1, "active_chat_id": id, "chats": [
        {"id": id, "name": "cloned", "created": "2026-01-01T00:00:00Z"}]});
    std::fs::write(world.chats_dir().join("index.json"), index.to_string()).unwrap();
}

/// Reads replies until each of `ids` has its final reply (anything but a chunk); returns the
/// request ids in the order their first line (chunk or final) arrived, and the finals.
fn collect(
    daemon: &mut common::Daemon,
    ids: &[&str],
) -> (Vec<String>, std::collections::HashMap<String, Value>) {
    let mut order: Vec<String> = Vec::new();
    let mut finals = std::collections::HashMap::new();
    while finals.len() < ids.len() {
        let line = daemon.read_reply().expect("a reply");
        let rid = line["request_id"].as_str().unwrap_or_default().to_owned();
        if !ids.contains(&rid.as_str()) {
            continue;
        }
        if !order.contains(&rid) {
            order.push(rid.clone());
        }
        if line["type"] != "chunk" {
            finals.insert(rid, line);
        }
    }
    (order, finals)
}

// `get_file_statuses` of a chat with a 4 MB context file counts its tokens off the
// session's thread: a `chat_list` sent after it is answered first, and the counts are right.
#[test]
fn counting_a_huge_file_does_not_hold_other_requests() {
    let world = World::new();
    let content = big_text(4);
    plant_chat_with_big_file(&world, &content);
    let mut daemon = world.open_project();
    daemon.send_line(&json!({"request_id":"fs","action":"get_file_statuses"}).to_string());
    daemon.send_line(&json!({"request_id":"cl","action":"chat_list"}).to_string());
    let (order, finals) = collect(&mut daemon, &["fs", "cl"]);
    assert_eq!(order, ["cl", "fs"], "chat_list waited for the count");
    assert_eq!(finals["cl"]["type"], "chat_list", "{}", finals["cl"]);
    let statuses = &finals["fs"];
    assert_eq!(statuses["type"], "file_statuses");
    let file = &statuses["files"][0];
    assert_eq!(file["path"], "big.txt");
    let tokens = file["tokens"].as_u64().unwrap();
    assert!(tokens > 500_000, "{tokens}");
    assert_eq!(file["original_tokens"].as_u64(), Some(tokens));
    // The count is right: cl100k's.
    use ybs_context_budget::TokenCounter;
    let expected = ybs_context_budget::Bpe::cl100k().count(&content);
    assert_eq!(tokens, expected as u64);
}

// `estimate_text_tokens` of a long prompt (requests are at most 1 MiB) and
// `estimate_tokens` of a chat with a 4 MB file are counted off the session's thread too.
#[test]
fn estimating_a_huge_prompt_does_not_hold_other_requests() {
    let world = World::new();
    plant_chat_with_big_file(&world, &big_text(4));
    let mut daemon = world.open_project();
    let mut prompt = big_text(1);
    prompt.truncate(900_000);
    daemon.send_line(
        &json!({"request_id":"et","action":"estimate_text_tokens","texts":[prompt]}).to_string(),
    );
    daemon.send_line(&json!({"request_id":"cl","action":"chat_list"}).to_string());
    let (order, finals) = collect(&mut daemon, &["et", "cl"]);
    assert_eq!(order, ["cl", "et"], "chat_list waited for the count");
    assert!(finals["et"]["tokens"][0].as_u64().unwrap() > 100_000);

    daemon.send_line(
        &json!({"request_id":"est","action":"estimate_tokens","input_text":"typing"}).to_string(),
    );
    daemon.send_line(&json!({"request_id":"cl2","action":"chat_list"}).to_string());
    let (order, finals) = collect(&mut daemon, &["est", "cl2"]);
    assert_eq!(order, ["cl2", "est"], "chat_list waited for the count");
    let estimate = &finals["est"];
    assert_eq!(estimate["type"], "token_estimate", "{}", estimate["type"]);
    assert!(
        estimate["context_files"].as_u64().unwrap() > 500_000,
        "{}",
        estimate["context_files"]
    );
}

// A send whose context holds a huge file counts it (for the budget) off the
// session's thread: a `chat_list` sent right after the `send` is answered while the count
// runs, before the send is prepared (its user message saved) and gone to the model.
#[test]
fn a_send_with_a_huge_context_file_does_not_hold_other_requests() {
    use ybs_testkit::{FakeLlm, Model, Script};
    let world = World::new();
    let server = FakeLlm::start(
        Script::new(vec![Turn::text(["REPLY"])])
            .with_models([Model::new("test/model", 50_000_000)]),
    )
    .unwrap();
    world.configure(&server.base_url(), "test/model", json!({}));
    plant_chat_with_big_file(&world, &big_text(8));
    let mut daemon = world.open_project();
    // The models list is cached: nothing else defers the send.
    let models = daemon.call(json!({"action":"get_models"}));
    assert_eq!(models["type"], "models", "{models}");
    daemon
        .send_line(&json!({"request_id":"s","action":"send","content":"UNIQUE-HELLO"}).to_string());
    daemon.send_line(&json!({"request_id":"cl","action":"chat_list"}).to_string());
    loop {
        let line = daemon.read_reply().unwrap();
        assert_ne!(
            line["request_id"], "s",
            "the send answered first: {}",
            line["type"]
        );
        if line["request_id"] == "cl" {
            assert_eq!(line["type"], "chat_list");
            break;
        }
    }
    let chat_json = world.chats_dir().join("bbbbbbbbbb/chat.json");
    let saved = std::fs::read_to_string(&chat_json).unwrap();
    assert!(
        !saved.contains("UNIQUE-HELLO"),
        "chat_list waited until the send was prepared"
    );
    assert!(common::chat_requests(&server).is_empty());
    let (_, finals) = collect(&mut daemon, &["s"]);
    assert_eq!(finals["s"]["type"], "done", "{}", finals["s"]);
}

// An adversarial edit (a 40,000-line file, a 20,000-line `old_string` that almost
// matches at every line) is matched in linear time and answered with a diff error.
#[test]
fn an_adversarial_edit_is_answered_with_a_diff_error() {
    let world = World::new();
    let file = "    x\n".repeat(40_000);
    let old = format!("{}y\n", "x\n".repeat(20_000));
    let id = ybs_core::file_id("big.txt", &file);
    let _server = world.serve(
        vec![Turn::text(["editing"]).with_tool_call(ToolCall::new(
            "c1",
            "edit_file",
            json!({"edits":[{"path":"big.txt","file_id":id,"old_string":old,"new_string":"z\n"}]}),
        ))],
        json!({"diff_mode": "search_replace_multi"}),
    );
    world.write("big.txt", &file);
    let mut daemon = world.open_project();
    let chat = daemon.new_chat("mine");
    let added = daemon.call(json!({"action":"context_add","path":"big.txt","content":file}));
    assert_eq!(added["type"], "ok", "{added}");
    let lines = daemon.send("s", "edit it");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "diff_error", "{}", last["type"]);
    let errors = last["errors"].to_string();
    assert!(errors.contains("old_string not found in file"), "{errors}");
    let output = world.chats_dir().join(chat).join("output");
    assert!(!output.join("big.txt").exists());
    // The session still answers.
    let ping = daemon.call(json!({"action":"chat_list"}));
    assert_eq!(ping["type"], "chat_list");
}

// `cancel` after the stream ended stops the processing of its tool calls: of a reply
// with 20,000 edit calls of a 50 KB file, the calls left when the cancel arrives are not
// processed, none is applied, the text is kept with the abort message.
#[test]
fn cancel_after_the_stream_stops_processing_the_tool_calls() {
    let world = World::new();
    let content = "fn item() {}\n".repeat(4_000);
    let id = ybs_core::file_id("big.rs", &content);
    let mut turn = Turn::text(["STREAMED-TEXT"]);
    for n in 0..20_000 {
        turn = turn.with_tool_call(ToolCall::new(
            format!("c{n}"),
            "edit_file",
            json!({"edits":[{"path":"big.rs","file_id":id,"old_string":"missing","new_string":"x"}]}),
        ));
    }
    let _server = world.serve(vec![turn], json!({"diff_mode": "search_replace_multi"}));
    world.write("big.rs", &content);
    let mut daemon = world.open_project_with(&[("BB7_LOG", "info")]);
    let chat = daemon.new_chat("mine");
    let added = daemon.call(json!({"action":"context_add","path":"big.rs","content":content}));
    assert_eq!(added["type"], "ok", "{added}");
    daemon.send_line(&json!({"request_id":"s","action":"send","content":"edit"}).to_string());
    // The stream is over and processing has begun when the daemon logs it.
    world.wait_for_log("processing the reply's tool calls");
    daemon.send_line(
        &json!({"request_id":"c","action":"cancel","target_request_id":"s"}).to_string(),
    );
    let (_, finals) = collect(&mut daemon, &["s", "c"]);
    assert_eq!(finals["c"]["type"], "ok", "{}", finals["c"]);
    assert_eq!(finals["s"]["type"], "error", "{}", finals["s"]);
    assert_eq!(finals["s"]["message"], "Response aborted by user.");
    // Processing stopped short of the end.
    let log = world.log();
    let stopped = log
        .lines()
        .find(|line| line.contains("the tool calls left are not processed"))
        .unwrap_or_else(|| panic!("no stop logged: {log}"));
    let done: usize = stopped
        .split("done=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stopped}"));
    assert!(done < 20_000, "{stopped}");
    assert!(stopped.contains("of=20000"), "{stopped}");
    // Nothing applied, the text kept with the abort message, no tool call recorded.
    let dir = world.chats_dir().join(&chat);
    assert!(!dir.join("output/big.rs").exists());
    let saved = std::fs::read_to_string(dir.join("chat.json")).unwrap();
    assert!(saved.contains("STREAMED-TEXT"), "the text is kept");
    assert!(
        saved.contains("Response aborted by user."),
        "the abort is recorded"
    );
    assert!(!saved.contains("\"missing\""), "no tool call is kept");
}

// The reader only reads: while the worker is held by a slow request (a debug build's
// `BB7_TEST_SLOW_ACTION` delay before `chat_list`), `ping` and `cancel` sent after it are
// answered before it ends, and a request queued behind it still waits its turn.
#[test]
fn ping_and_cancel_are_answered_while_a_slow_request_runs() {
    if !cfg!(debug_assertions) {
        // Release builds have no such delay.
        return;
    }
    const SLOW_MS: u64 = 3000;
    let world = World::new();
    let mut daemon = common::Daemon::spawn_with(
        &world.home(),
        &[("BB7_TEST_SLOW_ACTION", &format!("chat_list={SLOW_MS}"))],
    );
    let root = world.project().display().to_string();
    assert_eq!(
        daemon.call(json!({"action":"bb7_init","project_root":root}))["type"],
        "ok"
    );
    assert_eq!(
        daemon.call(json!({"action":"init","project_root":root}))["type"],
        "ok"
    );

    let started = std::time::Instant::now();
    daemon.send_line(&json!({"request_id":"slow","action":"chat_list"}).to_string());
    daemon.send_line(&json!({"request_id":"after","action":"chat_new","name":"n"}).to_string());
    let sent = std::time::Instant::now();
    daemon.send_line(&json!({"request_id":"p","action":"ping"}).to_string());
    let ping = daemon.read_reply().expect("a reply");
    let ping_took = sent.elapsed();
    assert_eq!(
        (ping["request_id"].as_str(), ping["type"].as_str()),
        (Some("p"), Some("ok"))
    );
    daemon.send_line(&json!({"request_id":"c","action":"cancel"}).to_string());
    let cancel = daemon.read_reply().expect("a reply");
    assert_eq!(cancel["request_id"], "c", "{cancel}");
    assert_eq!(cancel["message"], "No active request to cancel", "{cancel}");
    let answered_while_slow = started.elapsed();

    let slow = daemon.read_reply().expect("a reply");
    assert_eq!(
        (slow["request_id"].as_str(), slow["type"].as_str()),
        (Some("slow"), Some("chat_list"))
    );
    let slow_took = started.elapsed();
    let after = daemon.read_reply().expect("a reply");
    assert_eq!(after["request_id"], "after", "{after}");
    assert_eq!(after["type"], "ok", "{after}");
    assert!(after["id"].is_string(), "{after}");

    // The slow request was still running when both were answered.
    assert!(
        slow_took >= std::time::Duration::from_millis(SLOW_MS),
        "{slow_took:?}"
    );
    assert!(
        answered_while_slow < std::time::Duration::from_millis(SLOW_MS),
        "ping and cancel waited for the slow request: {answered_while_slow:?}"
    );
    eprintln!("ping answered in {ping_took:?} while a request ran");
}

// 150 `get_file_statuses` pipelined on a chat with a 4 MB file: the ones queued behind each
// other are answered by one computation (not 150 copies of the file), every one of them is
// answered with the same statuses, and `ping` sent after them is answered first (the
// worker is held by a debug build's delay before the first).
#[test]
fn pipelined_file_statuses_are_answered_together_and_ping_first() {
    if !cfg!(debug_assertions) {
        return;
    }
    let world = World::new();
    let content = big_text(4);
    plant_chat_with_big_file(&world, &content);
    let mut daemon = world.open_project_with(&[("BB7_TEST_SLOW_ACTION", "get_file_statuses=300")]);
    let ids: Vec<String> = (0..150).map(|n| format!("s{n}")).collect();
    let mut batch = String::new();
    for id in &ids {
        batch.push_str(&json!({"request_id":id,"action":"get_file_statuses"}).to_string());
        batch.push('\n');
    }
    batch.push_str(&json!({"request_id":"p","action":"ping"}).to_string());
    daemon.send_line(&batch);
    let first = daemon.read_reply().expect("a reply");
    assert_eq!(first["request_id"], "p", "ping before any status: {first}");
    let mut statuses = Vec::new();
    while statuses.len() < ids.len() {
        let reply = daemon.read_reply().expect("a reply");
        assert_eq!(reply["type"], "file_statuses", "{reply}");
        statuses.push(reply);
    }
    let mut answered: Vec<&str> = statuses
        .iter()
        .map(|reply| reply["request_id"].as_str().unwrap())
        .collect();
    answered.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(answered, expected, "each request answered once");
    for reply in &statuses {
        assert_eq!(reply["files"], statuses[0]["files"]);
        assert_eq!(reply["files"][0]["path"], "big.txt", "{reply}");
    }
}
