//! Each wire format, streamed and not, byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{get, post, sse_json};
use serde_json::json;
use ybs_testkit::{FakeLlm, Model, Script, ToolCall, Turn, Usage};

fn rich_turn() -> Turn {
    Turn::text(["Hel", "lo"])
        .with_thinking(["Let me ", "think."])
        .with_signature("sig-abc")
        .with_tool_call(
            ToolCall::new("call_1", "read_file", json!({"path": "a.txt"})).in_fragments(3),
        )
        .with_usage(
            Usage::new(30, 9)
                .with_cached(10)
                .with_reasoning(4)
                .with_cost(0.00012),
        )
}

fn server(turns: impl IntoIterator<Item = Turn>) -> FakeLlm {
    FakeLlm::start(Script::new(turns)).unwrap()
}

#[tokio::test]
async fn openai_stream_with_usage() {
    let fake = server([rich_turn()]);
    let reply = post(
        fake.url("/v1/chat/completions"),
        json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true}, "messages": []}),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert!(!reply.broken);
    assert!(reply.text.ends_with("data: [DONE]\n\n"));
    insta::assert_snapshot!(reply.text);

    // The arguments fragments reassemble to the scripted arguments.
    let args: String = sse_json(&reply.text)
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/arguments"))
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(args, r#"{"path":"a.txt"}"#);
}

#[tokio::test]
async fn openai_stream_without_include_usage_has_no_usage() {
    let fake = server([Turn::text(["a", "b"])]);
    let reply = post(
        fake.url("/v1/chat/completions"),
        json!({"model": "m", "stream": true}),
    )
    .await;
    let chunks = sse_json(&reply.text);
    assert_eq!(chunks.len(), 4); // role, a, b, finish
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
    assert!(!reply.text.contains("OPENROUTER"));
}

#[tokio::test]
async fn openai_not_streamed() {
    let fake = server([rich_turn(), Turn::tool_call("call_9", "ls", json!({}))]);
    let reply = post(
        fake.url("/v1/chat/completions"),
        json!({"model": "gpt-test"}),
    )
    .await;
    assert_eq!(reply.status, 200);
    insta::assert_json_snapshot!(reply.json());
    let reply = post(
        fake.url("/v1/chat/completions"),
        json!({"model": "gpt-test"}),
    )
    .await;
    let body = reply.json();
    assert_eq!(body["choices"][0]["message"]["content"], json!(null));
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn openrouter_stream() {
    let fake = server([rich_turn()]);
    let reply = post(
        fake.url("/api/v1/chat/completions"),
        json!({"model": "vendor/model", "stream": true}),
    )
    .await;
    assert!(reply.text.starts_with(": OPENROUTER PROCESSING\n\n"));
    insta::assert_snapshot!(reply.text);
    let last = sse_json(&reply.text).pop().unwrap();
    assert_eq!(last["usage"]["cost"], json!(0.00012));
}

#[tokio::test]
async fn openrouter_not_streamed() {
    let fake = server([Turn::text(["hi"])]);
    let reply = post(
        fake.url("/api/v1/chat/completions"),
        json!({"model": "vendor/model"}),
    )
    .await;
    insta::assert_json_snapshot!(reply.json());
}

#[tokio::test]
async fn anthropic_stream() {
    let fake = server([rich_turn()]);
    let reply = post(
        fake.url("/v1/messages"),
        json!({"model": "claude-test", "stream": true, "max_tokens": 100, "messages": []}),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert!(!reply.broken);
    insta::assert_snapshot!(reply.text);
}

#[tokio::test]
async fn anthropic_stream_of_plain_text() {
    let fake = server([Turn::text(["Hi"])]);
    let reply = post(
        fake.url("/v1/messages"),
        json!({"model": "claude-test", "stream": true}),
    )
    .await;
    let events: Vec<&str> = reply
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(
        events,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
}

#[tokio::test]
async fn anthropic_not_streamed() {
    let fake = server([rich_turn()]);
    let reply = post(fake.url("/v1/messages"), json!({"model": "claude-test"})).await;
    insta::assert_json_snapshot!(reply.json());
}

#[tokio::test]
async fn ollama_stream() {
    let fake = server([rich_turn().with_tool_call(ToolCall::new("", "ls", json!({"dir": "."})))]);
    let reply = post(
        fake.url("/api/chat"),
        json!({"model": "llama3.2", "messages": []}),
    )
    .await;
    assert_eq!(reply.header("content-type"), Some("application/x-ndjson"));
    insta::assert_snapshot!(reply.text);
    let last: serde_json::Value = serde_json::from_str(reply.text.lines().last().unwrap()).unwrap();
    assert_eq!(last["done"], true);
    assert_eq!(last["prompt_eval_count"], 30);
    assert_eq!(last["eval_count"], 9);
}

#[tokio::test]
async fn ollama_not_streamed() {
    let fake = server([rich_turn()]);
    let reply = post(
        fake.url("/api/chat"),
        json!({"model": "llama3.2", "stream": false}),
    )
    .await;
    insta::assert_json_snapshot!(reply.json());
}

#[tokio::test]
async fn listing_endpoints() {
    let model = Model {
        name: Some("Vendor: Model".to_owned()),
        ..Model::new("vendor/model", 32_000)
    };
    let fake = FakeLlm::start(
        Script::default()
            .with_models([model, Model::new("qwen3:latest", 40_960)])
            .with_credits(20.0, 7.5),
    )
    .unwrap();
    insta::assert_json_snapshot!("openai_models", get(fake.url("/v1/models")).await.json());
    insta::assert_json_snapshot!(
        "openrouter_models",
        get(fake.url("/api/v1/models")).await.json()
    );
    assert_eq!(
        get(fake.url("/api/v1/credits")).await.json(),
        json!({"data": {"total_credits": 20.0, "total_usage": 7.5}})
    );
    insta::assert_json_snapshot!("ollama_tags", get(fake.url("/api/tags")).await.json());
    let show = post(fake.url("/api/show"), json!({"model": "qwen3"})).await;
    assert_eq!(show.status, 200);
    insta::assert_json_snapshot!("ollama_show", show.json());
    assert_eq!(
        show.json()["model_info"]["llama.context_length"],
        json!(40_960)
    );
    let missing = post(fake.url("/api/show"), json!({"model": "nope"})).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json(), json!({"error": "model 'nope' not found"}));
}
