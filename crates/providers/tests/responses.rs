//! The Responses adapter against `ybs-testkit`'s fake server on 127.0.0.1: the response id,
//! text, reasoning summaries kept to go back, function calls split across deltas, hosted web
//! searches, usage with cached tokens, a length stop, a second turn continued by id, and the
//! failures (in-stream error, disconnect, HTTP error).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, ErrorKind, FinishReason, Message, Part, Role, ToolSpec};
use ybs_providers::{Provider, ProviderConfig, ProviderKind, RetryPolicy, build_with_env};
use ybs_testkit::{FakeLlm, Fault, Script, ToolCall, Turn, Usage};

fn provider(server: &FakeLlm) -> std::sync::Arc<dyn Provider> {
    let retry = RetryPolicy {
        attempts: 1,
        base: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(1),
    };
    let config = ProviderConfig::new(ProviderKind::Responses, "gpt-5-nano")
        .with_endpoint(server.url("/v1"))
        .with_retry(retry);
    build_with_env(&config, |_| None).unwrap()
}

#[tokio::test]
async fn a_turn_with_reasoning_search_text_and_calls_folds_into_a_reply() {
    let turn = Turn::default()
        .with_web_search("weather in Madrid")
        .with_thinking(["Search ", "first."])
        .with_signature("gAAAA-enc")
        .with_text(["It is ", "sunny."])
        .with_tool_call(
            ToolCall::new("call_7", "read_file", json!({"path": "a.txt"})).in_fragments(3),
        )
        .with_usage(Usage::new(120, 30).with_cached(100).with_reasoning(12));
    let server = FakeLlm::start(Script::new([turn])).unwrap();
    let provider = provider(&server);
    let mut request = ChatRequest::new("", vec![Message::user("Weather?")]);
    request.web_search = true;
    request.tools = vec![ToolSpec::new(
        "read_file",
        "Read.",
        json!({"type": "object"}),
    )];
    let reply = provider
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.response_id.as_deref(), Some("resp_fake_1"));
    assert_eq!(reply.message.text_content(), "It is sunny.");
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(reply.usage.prompt_tokens, 120);
    assert_eq!(reply.usage.cached_tokens, 100);
    assert_eq!(reply.usage.reasoning_tokens, 12);
    let calls: Vec<_> = reply.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_7");
    assert_eq!(calls[0].arguments, json!({"path": "a.txt"}));
    let thinking = reply
        .message
        .parts
        .iter()
        .find_map(|part| match part {
            Part::Thinking(thinking) => Some(thinking.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(thinking.content, "Search first.");
    let item = &thinking.details.unwrap()[0];
    assert_eq!(item["encrypted_content"], "gAAAA-enc");

    let sent = server.last_request().unwrap();
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["tools"][1], json!({"type": "web_search"}));
    assert_eq!(
        sent.header("authorization"),
        None,
        "no key for a local server"
    );

    // The next turn continues the stored reply: only the tool result goes, with the id,
    // and the reasoning item would go back whole if the history were resent.
    server.push_turn(Turn::text(["Done."]));
    let result = Message::new(
        Role::Tool,
        vec![Part::ToolResult(ybs_core::ToolResult {
            call_id: "call_7".into(),
            name: None,
            content: "alpha".into(),
            is_error: false,
        })],
    );
    let mut next = ChatRequest::new("", vec![result]);
    next.previous_response_id = reply.response_id.clone();
    let reply = provider
        .complete(&next, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.response_id.as_deref(), Some("resp_fake_2"));
    let sent = server.last_request().unwrap();
    assert_eq!(sent.body["previous_response_id"], "resp_fake_1");
    assert_eq!(
        sent.body["input"],
        json!([{"type": "function_call_output", "call_id": "call_7", "output": "alpha"}])
    );
    let full = ChatRequest::new(
        "",
        vec![
            Message::user("Weather?"),
            Message::new(Role::Assistant, vec![Part::Thinking(thinking_part())]),
        ],
    );
    let body = provider.request_body(&full).unwrap();
    assert_eq!(body["input"][1]["type"], "reasoning");
}

fn thinking_part() -> ybs_core::Thinking {
    ybs_core::Thinking {
        content: "x".into(),
        details: Some(vec![
            json!({"type": "reasoning", "id": "rs_0", "summary": [], "status": "completed"}),
        ]),
        ..ybs_core::Thinking::default()
    }
}

#[tokio::test]
async fn a_length_stop_is_reported() {
    let turn = Turn::text(["cut"]).with_finish(ybs_testkit::FinishReason::Length);
    let server = FakeLlm::start(Script::new([turn])).unwrap();
    let reply = provider(&server)
        .complete(
            &ChatRequest::new("", vec![Message::user("Hi")]),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(reply.finish_reason, Some(FinishReason::Length));
    assert_eq!(reply.message.text_content(), "cut");
}

#[tokio::test]
async fn failures_keep_what_arrived_and_say_why() {
    let server = FakeLlm::start(Script::new([
        Turn::text(["a", "b", "c"]).with_fault(Fault::StreamError {
            after: 2,
            message: "overloaded".into(),
        }),
        Turn::text(["a", "b", "c"]).with_fault(Fault::Disconnect { after: 1 }),
        Turn::fault(Fault::status(401)),
    ]))
    .unwrap();
    let provider = provider(&server);
    let request = ChatRequest::new("", vec![Message::user("Hi")]);
    let error = provider
        .complete(&request, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.message, "overloaded");
    let error = provider
        .complete(&request, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network, "{error:?}");
    let error = provider
        .complete(&request, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.status, Some(401));
}

/// llama.cpp's `llama-server` leaves `output_index` out of its events: items are told apart
/// by their ids, and the finished message does not repeat the streamed text.
#[test]
fn events_without_output_index_are_told_apart_by_item_id() {
    let frames = [
        r#"{"type":"response.created","response":{"id":"resp_llama","object":"response","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"content":[],"id":"msg_1","role":"assistant","status":"in_progress","type":"message"}}"#,
        r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"Quick"}"#,
        r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":" fox!"}"#,
        r#"{"type":"response.output_item.done","item":{"type":"message","status":"completed","id":"msg_1","content":[{"type":"output_text","annotations":[],"text":"Quick fox!"}],"role":"assistant"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"read_file","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"path\":\"a\"}"}"#,
        r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_2","call_id":"c2","name":"list_files","arguments":""}}"#,
        r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_2","call_id":"c2","name":"list_files","arguments":"{}"}}"#,
        r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"read_file","arguments":"{\"path\":\"a\"}"}}"#,
        r#"{"type":"response.completed","response":{"id":"resp_llama","status":"completed","usage":{"input_tokens":19,"output_tokens":11,"total_tokens":30,"input_tokens_details":{"cached_tokens":0}}}}"#,
    ];
    let body: String = frames
        .iter()
        .map(|data| format!("event: x\ndata: {data}\n\n"))
        .collect();
    let events = ybs_providers::replay(ProviderKind::Responses, [bytes::Bytes::from(body)]);
    let mut accumulator = ybs_core::Accumulator::new();
    for event in events {
        accumulator.push(event.unwrap());
    }
    let reply = accumulator.finish();
    assert_eq!(reply.response_id.as_deref(), Some("resp_llama"));
    assert_eq!(reply.message.text_content(), "Quick fox!");
    let calls: Vec<_> = reply
        .message
        .tool_calls()
        .map(|c| (c.id.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("c1".to_owned(), json!({"path": "a"})),
            ("c2".to_owned(), json!({}))
        ]
    );
    assert_eq!(reply.usage.prompt_tokens, 19);
}
