//! Faults on every wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{post, sse_json};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Fault, Script, Turn};

/// The chat endpoint and a streaming request body for each wire format.
fn endpoints() -> [(&'static str, Value); 4] {
    [
        (
            "/v1/chat/completions",
            json!({"model": "m", "stream": true}),
        ),
        (
            "/api/v1/chat/completions",
            json!({"model": "m", "stream": true}),
        ),
        ("/v1/messages", json!({"model": "m", "stream": true})),
        ("/api/chat", json!({"model": "m"})),
    ]
}

/// `bodies` with the keys of every object sorted (serde_json keeps the order they were
/// built in when a crate built along turns on its `preserve_order`).
fn sorted(bodies: &[Value]) -> Value {
    let mut value = Value::from(bodies.to_vec());
    value.sort_all_objects();
    value
}

fn server_with(turn: Turn, copies: usize) -> FakeLlm {
    FakeLlm::start(Script::new(std::iter::repeat_n(turn, copies))).unwrap()
}

#[tokio::test]
async fn status_with_retry_after_in_each_error_shape() {
    let fake = server_with(Turn::fault(Fault::rate_limited(7)), 4);
    let mut bodies = Vec::new();
    for (path, body) in endpoints() {
        let reply = post(fake.url(path), body).await;
        assert_eq!(reply.status, 429, "{path}");
        assert_eq!(reply.header("retry-after"), Some("7"), "{path}");
        bodies.push(json!({"path": path, "body": reply.json()}));
    }
    insta::assert_json_snapshot!(sorted(&bodies));
}

#[tokio::test]
async fn status_with_verbatim_body() {
    let fake = server_with(
        Turn::fault(Fault::Status {
            status: 503,
            body: Some("upstream down".to_owned()),
            retry_after: None,
        }),
        1,
    );
    let reply = post(fake.url("/v1/chat/completions"), json!({"stream": true})).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.text, "upstream down");
    assert_eq!(reply.header("retry-after"), None);
}

#[tokio::test]
async fn context_overflow_in_each_real_shape() {
    let fake = server_with(Turn::fault(Fault::context_overflow(140_000, 128_000)), 4);
    let mut bodies = Vec::new();
    for (path, body) in endpoints() {
        let reply = post(fake.url(path), body).await;
        assert_eq!(reply.status, 400, "{path}");
        bodies.push(json!({"path": path, "body": reply.json()}));
    }
    insta::assert_json_snapshot!(sorted(&bodies));
    assert_eq!(
        bodies[0]["body"]["error"]["code"],
        "context_length_exceeded"
    );
    assert_eq!(
        bodies[2]["body"]["error"]["message"],
        "prompt is too long: 140000 tokens > 128000 maximum"
    );
    assert_eq!(
        bodies[3]["body"]["error"],
        "prompt too long; exceeded max context length by 12000 tokens"
    );
}

#[tokio::test]
async fn disconnect_after_n_deltas_drops_the_connection() {
    let turn = Turn::text(["a", "b", "c"]).with_fault(Fault::Disconnect { after: 2 });
    let fake = server_with(turn, 4);
    for (path, body) in endpoints() {
        let reply = post(fake.url(path), body).await;
        assert_eq!(reply.status, 200, "{path}");
        assert!(reply.broken, "{path}: the body should end with an error");
        assert!(!reply.text.contains("[DONE]"), "{path}");
        assert!(!reply.text.contains("message_stop"), "{path}");
        assert!(!reply.text.contains("\"done\":true"), "{path}");
        // Exactly the first two text deltas arrived.
        assert!(reply.text.contains("\"b\""), "{path}: {}", reply.text);
        assert!(!reply.text.contains("\"c\""), "{path}: {}", reply.text);
    }
}

#[tokio::test]
async fn disconnect_when_not_streamed_sends_half_a_body() {
    let fake = server_with(
        Turn::text(["hello"]).with_fault(Fault::Disconnect { after: 0 }),
        1,
    );
    let reply = post(fake.url("/v1/chat/completions"), json!({"model": "m"})).await;
    assert!(reply.broken);
    assert!(serde_json::from_str::<Value>(&reply.text).is_err());
}

#[tokio::test]
async fn malformed_frame_then_the_stream_goes_on() {
    let turn = Turn::text(["a", "b"]).with_fault(Fault::Malformed { after: 1 });
    let fake = server_with(turn, 4);
    for (path, body) in endpoints() {
        let reply = post(fake.url(path), body).await;
        assert!(!reply.broken, "{path}");
        let payloads: Vec<&str> = if path == "/api/chat" {
            reply.text.lines().collect()
        } else {
            reply
                .text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter(|d| *d != "[DONE]")
                .collect()
        };
        let bad: Vec<usize> = payloads
            .iter()
            .enumerate()
            .filter(|(_, p)| serde_json::from_str::<Value>(p).is_err())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(bad.len(), 1, "{path}: {}", reply.text);
        // The bad frame sits between the "a" and "b" deltas.
        let a = payloads.iter().position(|p| p.contains("\"a\"")).unwrap();
        let b = payloads.iter().position(|p| p.contains("\"b\"")).unwrap();
        assert!(a < bad[0] && bad[0] < b, "{path}: {}", reply.text);
    }
}

#[tokio::test]
async fn stream_error_ends_the_stream_with_the_provider_error() {
    let turn = Turn::text(["a", "b"]).with_fault(Fault::StreamError {
        after: 1,
        message: "Overloaded".to_owned(),
    });
    let fake = server_with(turn, 4);
    let mut tails = Vec::new();
    for (path, body) in endpoints() {
        let reply = post(fake.url(path), body).await;
        assert!(!reply.broken, "{path}");
        assert!(!reply.text.contains("\"b\""), "{path}");
        let tail: String = reply
            .text
            .lines()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
            .join("|");
        tails.push(json!({"path": path, "tail": tail}));
    }
    insta::assert_json_snapshot!(tails);
}

#[tokio::test]
async fn exhausted_script_fails_loudly() {
    let fake = FakeLlm::start(Script::default()).unwrap();
    let reply = post(fake.url("/v1/messages"), json!({"stream": true})).await;
    assert_eq!(reply.status, 500);
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("script exhausted"), "{message}");
    let reply = post(fake.url("/api/chat"), json!({})).await;
    assert_eq!(reply.status, 500);
    assert!(
        reply.json()["error"]
            .as_str()
            .unwrap()
            .contains("script exhausted")
    );
}

#[tokio::test]
async fn delay_applies_between_frames() {
    let fake = server_with(Turn::text(["a", "b", "c"]).with_delay_ms(40), 1);
    let started = Instant::now();
    let reply = post(fake.url("/v1/chat/completions"), json!({"stream": true})).await;
    // role, a, b, c, finish, [DONE]: six frames, each after 40 ms.
    assert!(started.elapsed() >= Duration::from_millis(6 * 40));
    assert_eq!(sse_json(&reply.text).len(), 5);
}

#[tokio::test]
async fn delay_lets_a_client_cut_a_stream_midway() {
    use futures::StreamExt;
    let fake = server_with(Turn::text(["a", "b", "c", "d"]).with_delay_ms(50), 2);
    let response = reqwest::Client::new()
        .post(fake.url("/v1/chat/completions"))
        .json(&json!({"stream": true}))
        .send()
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let first = stream.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("assistant"));
    drop(stream);
    // The server keeps serving after a client hung up.
    let reply = post(fake.url("/v1/chat/completions"), json!({})).await;
    assert_eq!(reply.status, 200);
}
