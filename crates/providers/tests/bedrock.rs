//! The Bedrock adapter against `ybs-testkit`'s fake of the Converse API: a stream in the
//! binary event-stream framing with reasoning, text and tool calls split across deltas,
//! usage with cached tokens, a broken connection, a corrupt message, an exception
//! mid-stream, and the model list. The fake checks every SigV4 signature.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{ChatRequest, ErrorKind, FinishReason, LlmError, Message, StreamEvent};
use ybs_providers::{Provider, ProviderConfig, ProviderKind, RetryPolicy, build_with_env};
use ybs_testkit::bedrock::{ACCESS_KEY_ID, SECRET_ACCESS_KEY};
use ybs_testkit::{FakeLlm, Fault, Model, Script, ToolCall, Turn, Usage};

const MODEL: &str = "anthropic.claude-sonnet-4-20250514-v1:0";

fn provider(server: &FakeLlm, secret: &'static str) -> Arc<dyn Provider> {
    let config = ProviderConfig::new(ProviderKind::Bedrock, MODEL)
        .with_endpoint(server.base_url())
        .with_retry(RetryPolicy {
            attempts: 1,
            base: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(5),
        });
    let env = move |name: &str| match name {
        "AWS_ACCESS_KEY_ID" => Some(ACCESS_KEY_ID.to_owned()),
        "AWS_SECRET_ACCESS_KEY" => Some(secret.to_owned()),
        "AWS_REGION" => Some("us-east-1".to_owned()),
        _ => None,
    };
    build_with_env(&config, env).unwrap()
}

async fn collect(provider: &dyn Provider) -> Vec<Result<StreamEvent, LlmError>> {
    let request = ChatRequest {
        messages: vec![Message::user("hi")],
        ..ChatRequest::default()
    };
    provider
        .stream(&request, CancellationToken::new())
        .collect()
        .await
}

fn texts(events: &[Result<StreamEvent, LlmError>]) -> String {
    (events.iter())
        .filter_map(|event| match event {
            Ok(StreamEvent::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_stream_carries_reasoning_text_calls_and_cached_usage() {
    let turn = Turn::text(["Reading ", "both."])
        .with_thinking(["Two ", "files."])
        .with_signature("c2ln")
        .with_tool_call(
            ToolCall::new("tooluse_a", "read_file", json!({"path": "a"})).in_fragments(3),
        )
        .with_tool_call(
            ToolCall::new("tooluse_b", "read_file", json!({"path": "b"})).in_fragments(2),
        )
        .with_usage(Usage::new(1_000, 40).with_cached(800).with_cache_write(100));
    let server = FakeLlm::start(Script::new([turn])).unwrap();
    let events = collect(provider(&server, SECRET_ACCESS_KEY).as_ref()).await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(texts(&events), "Reading both.");
    let mut accumulated = ybs_core::Accumulator::default();
    for event in events.iter().flatten() {
        accumulated.push(event.clone());
    }
    let reply = accumulated.finish();
    let calls: Vec<_> = (reply.message.tool_calls())
        .map(|call| (call.id.clone(), call.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("tooluse_a".to_owned(), json!({"path": "a"})),
            ("tooluse_b".to_owned(), json!({"path": "b"}))
        ]
    );
    let thinking = events.iter().flatten().any(|event| {
        matches!(event, StreamEvent::ThinkingDelta { signature: Some(signature), .. } if signature == "c2ln")
    });
    assert!(thinking, "{events:?}");
    let usage = (events.iter().flatten())
        .find_map(|event| match event {
            StreamEvent::Usage(usage) => Some(*usage),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.cached_tokens,
            usage.cache_write_tokens,
            usage.completion_tokens
        ),
        (1_000, 800, 100, 40)
    );
    assert_eq!(
        events.last().unwrap().as_ref().unwrap(),
        &StreamEvent::Done {
            finish_reason: FinishReason::ToolCalls
        }
    );
}

#[tokio::test]
async fn broken_streams_and_exceptions_end_in_an_error() {
    let server = FakeLlm::start(Script::new([
        Turn::text(["one ", "two"]).with_fault(Fault::Disconnect { after: 1 }),
        Turn::text(["one ", "two"]).with_fault(Fault::Malformed { after: 1 }),
        Turn::text(["one ", "two"]).with_fault(Fault::StreamError {
            after: 1,
            message: "The model is overloaded".into(),
        }),
    ]))
    .unwrap();
    let provider = provider(&server, SECRET_ACCESS_KEY);
    let events = collect(provider.as_ref()).await;
    assert_eq!(texts(&events), "one ");
    let error = events.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network, "{error:?}");

    let events = collect(provider.as_ref()).await;
    let error = events.last().unwrap().as_ref().unwrap_err();
    assert!(error.message.contains("not an event stream"), "{error:?}");

    let events = collect(provider.as_ref()).await;
    assert_eq!(texts(&events), "one ");
    let error = events.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Server, "{error:?}");
    assert_eq!(error.message, "The model is overloaded");
}

#[tokio::test]
async fn a_wrong_secret_is_refused_by_the_signature_check() {
    let server = FakeLlm::start(Script::new([Turn::text(["never"])])).unwrap();
    let events = collect(provider(&server, "not-the-secret").as_ref()).await;
    let error = events.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth, "{error:?}");
    assert_eq!(error.status, Some(403));
    assert!(
        error.message.contains("InvalidSignatureException"),
        "{error:?}"
    );
    assert!(!error.message.contains("not-the-secret"));
}

#[tokio::test]
async fn the_model_list_is_the_regions_foundation_models() {
    let script = Script::new([]).with_models([
        Model::new("amazon.nova-pro-v1:0", 300_000),
        Model::new(MODEL, 200_000),
    ]);
    let server = FakeLlm::start(script).unwrap();
    let models = provider(&server, SECRET_ACCESS_KEY)
        .list_models()
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|model| model.id.as_str()).collect();
    assert_eq!(ids, ["amazon.nova-pro-v1:0", MODEL]);
    // Refused (no permission to list): the configured model alone.
    let models = provider(&server, "not-the-secret")
        .list_models()
        .await
        .unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].id, MODEL);
}
