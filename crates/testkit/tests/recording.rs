//! Request recording, the control endpoints, sync use, and the fake-llm binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{get, post};
use serde_json::json;
use ybs_testkit::{FakeLlm, RecordedRequest, Script, Turn};

#[tokio::test]
async fn records_method_path_headers_and_body() {
    let fake = FakeLlm::start(Script::new([Turn::text(["ok"])])).unwrap();
    post(
        fake.url("/v1/chat/completions"),
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    get(fake.url("/v1/models?limit=1")).await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let chat = &requests[0];
    assert_eq!(chat.method, "POST");
    assert_eq!(chat.path, "/v1/chat/completions");
    assert_eq!(chat.header("Authorization"), Some("Bearer sk-test"));
    assert_eq!(chat.body["messages"][0]["content"], "hi");
    assert_eq!(requests[1].query.as_deref(), Some("limit=1"));
    assert_eq!(requests[1].body, json!(null));
    fake.clear_requests();
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn control_endpoints_expose_requests_and_queue_turns() {
    let fake = FakeLlm::start(Script::default()).unwrap();
    let added = post(
        fake.url("/_fake/turns"),
        json!([{"text": ["one"]}, {"text": ["two"]}]),
    )
    .await;
    assert_eq!(added.json(), json!({"added": 2, "remaining": 2}));
    assert_eq!(fake.remaining_turns(), 2);
    let reply = post(fake.url("/v1/chat/completions"), json!({"model": "m"})).await;
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "one");

    let recorded: Vec<RecordedRequest> =
        serde_json::from_value(get(fake.url("/_fake/requests")).await.json()).unwrap();
    assert_eq!(recorded.len(), 1, "control requests are not recorded");
    assert_eq!(recorded[0].body["model"], "m");

    let turns = get(fake.url("/_fake/turns")).await.json();
    assert_eq!(turns["remaining"], 1);
    assert_eq!(turns["turns"][0]["text"][0], "two");

    let bad = post(fake.url("/_fake/turns"), json!({"nope": true})).await;
    assert_eq!(bad.status, 400);
    let unknown = get(fake.url("/nowhere")).await;
    assert_eq!(unknown.status, 404);
}

#[test]
fn works_from_a_plain_test_and_push_turn() {
    let fake = FakeLlm::start(Script::default()).unwrap();
    fake.push_turn(Turn::text(["sync"]));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let reply = runtime.block_on(post(fake.url("/api/chat"), json!({"stream": false})));
    assert_eq!(reply.json()["message"]["content"], "sync");
    assert_eq!(fake.requests().len(), 1);
    drop(fake);
}

#[test]
fn example_script_parses() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hello.json");
    let script = Script::from_file(path).unwrap();
    assert_eq!(script.turns.len(), 4);
    assert!(Script::from_file("/nonexistent/script.json").is_err());
}

#[test]
fn fake_llm_binary_prints_its_url_first() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hello.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-llm"))
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base = line.trim_end().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let reply = runtime.block_on(post(
        format!("{base}/v1/chat/completions"),
        json!({"model": "fake-model"}),
    ));
    assert_eq!(reply.json()["choices"][0]["message"]["content"], "Hello!");
    let recorded = runtime
        .block_on(get(format!("{base}/_fake/requests")))
        .json();
    assert_eq!(recorded.as_array().unwrap().len(), 1);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn fake_llm_binary_reports_a_bad_script() {
    let output = Command::new(env!("CARGO_BIN_EXE_fake-llm"))
        .arg("/nonexistent/script.json")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot read script"), "{stderr}");
}

#[test]
fn drop_returns_while_a_slow_stream_is_open() {
    use futures::StreamExt;
    let fake = FakeLlm::start(Script::new([
        Turn::text(["a", "b", "c"]).with_delay_ms(10_000)
    ]))
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = fake.url("/v1/chat/completions");
    let response = runtime.block_on(async {
        reqwest::Client::new()
            .post(url)
            .json(&json!({"stream": true}))
            .send()
            .await
            .unwrap()
    });
    assert_eq!(fake.last_request().unwrap().path, "/v1/chat/completions");
    let started = std::time::Instant::now();
    drop(fake);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // The open stream breaks instead of hanging.
    let next = runtime.block_on(async { response.bytes_stream().next().await });
    assert!(matches!(next, None | Some(Err(_))), "{next:?}");
}
