//! Every adapter against `ybs-testkit`'s fake servers on 127.0.0.1: streamed text, reasoning,
//! parallel tool calls split across many deltas, usage and cost, retries (429 with
//! Retry-After, 500), no retry on 401, mid-stream disconnects, malformed frames, context
//! overflow, timeouts, cancellation, model lists and credits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{
    ChatRequest, ErrorKind, FinishReason, LlmError, Message, Part, StreamEvent, ToolSpec, Usage,
};
use ybs_providers::{
    OllamaOptions, OpenRouterOptions, Provider, ProviderConfig, ProviderKind, RetryPolicy,
    Timeouts, build_with_env,
};
use ybs_testkit::{FakeLlm, Fault, Model, Script, ToolCall, Turn};

/// The four wire formats, by the kind used to reach each.
const KINDS: [ProviderKind; 4] = [
    ProviderKind::OpenAi,
    ProviderKind::OpenRouter,
    ProviderKind::Anthropic,
    ProviderKind::Ollama,
];

fn fast_retries(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        attempts,
        base: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    }
}

fn config(kind: ProviderKind, server: &FakeLlm) -> ProviderConfig {
    let endpoint = match kind {
        ProviderKind::OpenRouter => server.url("/api/v1"),
        ProviderKind::Anthropic | ProviderKind::Ollama => server.base_url(),
        _ => server.url("/v1"),
    };
    let mut config = ProviderConfig::new(kind, "fake-model")
        .with_endpoint(endpoint)
        .with_api_key("sk-test-key-123")
        .with_retry(fast_retries(2));
    config.openrouter = OpenRouterOptions {
        app_url: Some("https://ybs.example".into()),
        app_title: Some("ybs".into()),
        ..OpenRouterOptions::default()
    };
    config.ollama = OllamaOptions {
        num_ctx: Some(16384),
        keep_alive: None,
    };
    config
}

fn provider(kind: ProviderKind, server: &FakeLlm) -> Arc<dyn Provider> {
    build_with_env(&config(kind, server), |_| None).unwrap()
}

fn hello() -> ChatRequest {
    ChatRequest::new("", vec![Message::user("Hello")])
}

async fn collect(
    provider: &dyn Provider,
    request: &ChatRequest,
) -> Vec<Result<StreamEvent, LlmError>> {
    provider
        .stream(request, CancellationToken::new())
        .collect()
        .await
}

fn texts(events: &[Result<StreamEvent, LlmError>]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            Ok(StreamEvent::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn last_error(events: &[Result<StreamEvent, LlmError>]) -> LlmError {
    events.last().unwrap().clone().unwrap_err()
}

#[tokio::test]
async fn streams_text_with_each_wire_format() {
    for kind in KINDS {
        let server = FakeLlm::start(Script::new([Turn::text(["Hel", "lo", " there"])])).unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        let deltas: Vec<_> = events
            .iter()
            .filter(|event| matches!(event, Ok(StreamEvent::TextDelta { .. })))
            .collect();
        assert_eq!(deltas.len(), 3, "{kind}: {events:?}");
        assert_eq!(texts(&events), "Hello there", "{kind}");
        assert_eq!(
            events.last(),
            Some(&Ok(StreamEvent::Done {
                finish_reason: FinishReason::Stop
            })),
            "{kind}"
        );
        let request = server.last_request().unwrap();
        assert_eq!(request.body["model"], "fake-model", "{kind}");
        assert_eq!(request.body["stream"], true, "{kind}");
        match kind {
            ProviderKind::Anthropic => {
                assert_eq!(request.path, "/v1/messages");
                assert_eq!(request.header("x-api-key"), Some("sk-test-key-123"));
                assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
            }
            ProviderKind::Ollama => {
                assert_eq!(request.path, "/api/chat");
                assert_eq!(request.body["options"]["num_ctx"], 16384);
                assert_eq!(request.header("authorization"), None);
            }
            ProviderKind::OpenRouter => {
                assert_eq!(request.path, "/api/v1/chat/completions");
                assert_eq!(
                    request.header("authorization"),
                    Some("Bearer sk-test-key-123")
                );
                assert_eq!(request.header("http-referer"), Some("https://ybs.example"));
                assert_eq!(request.header("x-title"), Some("ybs"));
                assert_eq!(request.body["provider"]["data_collection"], "deny");
            }
            _ => {
                assert_eq!(request.path, "/v1/chat/completions");
                assert_eq!(request.body["stream_options"]["include_usage"], true);
            }
        }
    }
}

#[tokio::test]
async fn reasoning_arrives_as_thinking_and_keeps_what_must_go_back() {
    for kind in KINDS {
        let turn = Turn::text(["Answer."])
            .with_thinking(["Let me ", "think."])
            .with_signature("sig-abc");
        let server = FakeLlm::start(Script::new([turn])).unwrap();
        let provider = provider(kind, &server);
        let reply = provider
            .complete(&hello(), CancellationToken::new())
            .await
            .unwrap();
        let Part::Thinking(thinking) = &reply.message.parts[0] else {
            panic!("{kind}: {reply:?}")
        };
        assert_eq!(thinking.content, "Let me think.", "{kind}");
        match kind {
            ProviderKind::Anthropic => assert_eq!(thinking.signature.as_deref(), Some("sig-abc")),
            ProviderKind::OpenAi | ProviderKind::OpenRouter => {
                let details = thinking.details.as_ref().expect("reasoning details");
                assert!(
                    details
                        .iter()
                        .any(|detail| detail["signature"] == "sig-abc"),
                    "{kind}: {details:?}"
                );
            }
            _ => {}
        }
        assert_eq!(reply.message.text_content(), "Answer.", "{kind}");

        // The next turn sends the reasoning back in the form the backend wants.
        server.push_turn(Turn::text(["ok"]));
        let mut request = hello();
        request.messages.push(reply.message.clone());
        request.messages.push(Message::user("And?"));
        provider
            .complete(&request, CancellationToken::new())
            .await
            .unwrap();
        let body = server.last_request().unwrap().body;
        match kind {
            ProviderKind::Anthropic => {
                assert_eq!(
                    body["messages"][1]["content"][0],
                    json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig-abc"})
                );
            }
            ProviderKind::OpenRouter => {
                let details = &body["messages"][1]["reasoning_details"];
                assert!(details.as_array().is_some_and(|d| !d.is_empty()), "{body}");
            }
            ProviderKind::Ollama => {
                assert_eq!(body["messages"][1]["thinking"], "Let me think.");
            }
            _ => assert!(body["messages"][1].get("reasoning_details").is_none()),
        }
    }
}

#[tokio::test]
async fn parallel_tool_calls_split_across_many_deltas() {
    for kind in KINDS {
        let turn = Turn::default()
            .with_text(["Reading."])
            .with_tool_call(
                ToolCall::new(
                    "call_a",
                    "read_file",
                    json!({"path": "src/main.rs", "limit": 40}),
                )
                .in_fragments(5),
            )
            .with_tool_call(
                ToolCall::new(
                    "call_b",
                    "list_files",
                    json!({"dir": "src", "recursive": true}),
                )
                .in_fragments(4),
            );
        let server = FakeLlm::start(Script::new([turn])).unwrap();
        let mut request = hello();
        request.tools = vec![ToolSpec::new(
            "read_file",
            "Read a file.",
            json!({"type": "object"}),
        )];
        let events = collect(provider(kind, &server).as_ref(), &request).await;
        let argument_deltas = events
            .iter()
            .filter(|event| matches!(event, Ok(StreamEvent::ToolCallDelta { .. })))
            .count();
        if kind != ProviderKind::Ollama {
            assert!(argument_deltas >= 9, "{kind}: {events:?}");
        }
        let mut accumulator = ybs_core::Accumulator::new();
        for event in events {
            accumulator.push(event.unwrap());
        }
        let reply = accumulator.finish();
        let calls: Vec<_> = reply.message.tool_calls().cloned().collect();
        assert_eq!(calls.len(), 2, "{kind}");
        assert_eq!(calls[0].name, "read_file", "{kind}");
        assert_eq!(
            calls[0].arguments,
            json!({"path": "src/main.rs", "limit": 40})
        );
        assert_eq!(calls[1].name, "list_files", "{kind}");
        assert_eq!(calls[1].arguments, json!({"dir": "src", "recursive": true}));
        if kind != ProviderKind::Ollama {
            assert_eq!(
                (calls[0].id.as_str(), calls[1].id.as_str()),
                ("call_a", "call_b")
            );
        }
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls), "{kind}");
        assert_eq!(
            server.last_request().unwrap().body["tools"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
}

#[tokio::test]
async fn usage_and_cost_are_reported() {
    let usage = ybs_testkit::Usage::new(1200, 80)
        .with_cached(1000)
        .with_reasoning(30)
        .with_cost(0.0042);
    for kind in KINDS {
        let server =
            FakeLlm::start(Script::new([Turn::text(["ok"]).with_usage(usage.clone())])).unwrap();
        let reply = provider(kind, &server)
            .complete(&hello(), CancellationToken::new())
            .await
            .unwrap();
        let got = reply.usage;
        assert_eq!(
            (got.prompt_tokens, got.completion_tokens, got.total_tokens),
            (1200, 80, 1280),
            "{kind}"
        );
        let expected = match kind {
            ProviderKind::OpenAi | ProviderKind::OpenRouter => Usage {
                prompt_tokens: 1200,
                completion_tokens: 80,
                cached_tokens: 1000,
                reasoning_tokens: 30,
                total_tokens: 1280,
                cost: Some(0.0042),
                ..Usage::default()
            },
            ProviderKind::Anthropic => Usage {
                prompt_tokens: 1200,
                completion_tokens: 80,
                cached_tokens: 1000,
                total_tokens: 1280,
                ..Usage::default()
            },
            _ => Usage {
                prompt_tokens: 1200,
                completion_tokens: 80,
                total_tokens: 1280,
                ..Usage::default()
            },
        };
        assert_eq!(got, expected, "{kind}");
    }
}

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    let server = FakeLlm::start(Script::new([
        Turn::fault(Fault::rate_limited(1)),
        Turn::text(["after the wait"]),
    ]))
    .unwrap();
    let provider = provider(ProviderKind::OpenAi, &server);
    let started = Instant::now();
    let reply = provider
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After not honoured"
    );
    assert_eq!(reply.message.text_content(), "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    for kind in KINDS {
        let server = FakeLlm::start(Script::new([
            Turn::fault(Fault::status(401)),
            Turn::text(["never"]),
        ]))
        .unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        assert_eq!(events.len(), 1, "{kind}");
        let err = last_error(&events);
        assert_eq!(err.kind, ErrorKind::Auth, "{kind}");
        assert_eq!(err.status, Some(401));
        assert_eq!(err.message, "fake-llm: scripted HTTP 401", "{kind}");
        assert_eq!(server.requests().len(), 1, "{kind}");
        assert_eq!(server.remaining_turns(), 1);
    }
}

#[tokio::test]
async fn server_errors_are_retried_then_given_up() {
    for kind in KINDS {
        let server = FakeLlm::start(Script::new([
            Turn::fault(Fault::status(500)),
            Turn::fault(Fault::status(502)),
            Turn::fault(Fault::status(503)),
            Turn::text(["too late"]),
        ]))
        .unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        let err = last_error(&events);
        assert_eq!(events.len(), 1, "{kind}");
        assert_eq!(err.kind, ErrorKind::Server, "{kind}");
        assert_eq!(err.status, Some(503), "{kind}");
        assert_eq!(err.message, "fake-llm: scripted HTTP 503", "{kind}");
        assert_eq!(err.to_string(), "server: fake-llm: scripted HTTP 503");
        assert_eq!(server.requests().len(), 3, "{kind}: 1 try + 2 retries");
    }
}

#[tokio::test]
async fn a_server_error_then_success_is_retried_transparently() {
    let server = FakeLlm::start(Script::new([
        Turn::fault(Fault::status(500)),
        Turn::text(["fine"]),
    ]))
    .unwrap();
    let reply = provider(ProviderKind::Anthropic, &server)
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "fine");
}

#[tokio::test]
async fn a_mid_stream_disconnect_keeps_the_partial_text() {
    for kind in KINDS {
        let turn = Turn::text(["one ", "two ", "three"]).with_fault(Fault::Disconnect { after: 2 });
        let server = FakeLlm::start(Script::new([turn, Turn::text(["retried!"])])).unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        assert_eq!(texts(&events), "one two ", "{kind}");
        let err = last_error(&events);
        assert_eq!(err.kind, ErrorKind::Network, "{kind}: {err}");
        // A hosted service's API at another address (this fake) is "the server".
        let hosted = kind
            .default_endpoint()
            .is_some_and(|own| own.starts_with("https://"));
        let name = if hosted {
            "the server"
        } else {
            kind.display_name()
        };
        assert!(
            err.message
                .starts_with(&format!("the stream broke off from {name}"))
                || err.message.starts_with("the stream from"),
            "{kind}: {}",
            err.message
        );
        assert_eq!(server.requests().len(), 1, "{kind}: no retry after events");
    }
}

#[tokio::test]
async fn a_disconnect_before_any_event_is_retried() {
    let turn = Turn::text(["lost"]).with_fault(Fault::Disconnect { after: 0 });
    let server = FakeLlm::start(Script::new([turn, Turn::text(["second try"])])).unwrap();
    let reply = provider(ProviderKind::OpenAi, &server)
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "second try");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_malformed_frame_ends_the_stream_after_what_arrived() {
    for kind in KINDS {
        let turn = Turn::text(["good ", "bad"]).with_fault(Fault::Malformed { after: 1 });
        let server = FakeLlm::start(Script::new([turn])).unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        assert_eq!(texts(&events), "good ", "{kind}");
        let err = last_error(&events);
        assert_eq!(err.kind, ErrorKind::Server, "{kind}");
        assert_eq!(err.code.as_deref(), Some("malformed_frame"));
        assert!(
            err.message.starts_with(&format!(
                "malformed stream frame from {}: ",
                kind.display_name()
            )),
            "{kind}: {}",
            err.message
        );
    }
}

#[tokio::test]
async fn in_stream_errors_keep_the_partial_reply() {
    for kind in KINDS {
        let turn = Turn::text(["part", "never"]).with_fault(Fault::StreamError {
            after: 1,
            message: "Overloaded".into(),
        });
        let server = FakeLlm::start(Script::new([turn])).unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        assert_eq!(texts(&events), "part", "{kind}");
        let err = last_error(&events);
        assert_eq!(err.message, "Overloaded", "{kind}");
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn context_overflow_is_classified_and_not_retried() {
    for kind in KINDS {
        let server = FakeLlm::start(Script::new([
            Turn::fault(Fault::context_overflow(140_000, 128_000)),
            Turn::text(["never"]),
        ]))
        .unwrap();
        let events = collect(provider(kind, &server).as_ref(), &hello()).await;
        let err = last_error(&events);
        assert_eq!(
            err.kind,
            ErrorKind::ContextOverflow,
            "{kind}: {}",
            err.message
        );
        assert_eq!(err.status, Some(400));
        assert_eq!(server.requests().len(), 1, "{kind}");
    }
}

#[tokio::test]
async fn cancellation_stops_the_request() {
    for kind in KINDS {
        let chunks: Vec<String> = (0..50).map(|n| format!("{n} ")).collect();
        let turn = Turn::text(chunks).with_delay_ms(100);
        let server = FakeLlm::start(Script::new([turn])).unwrap();
        let provider = provider(kind, &server);
        let cancel = CancellationToken::new();
        let mut stream = provider.stream(&hello(), cancel.clone());
        let started = Instant::now();
        let mut seen = Vec::new();
        while let Some(event) = stream.next().await {
            let done = event.is_err();
            if matches!(event, Ok(StreamEvent::TextDelta { .. })) {
                cancel.cancel();
            }
            seen.push(event);
            if done {
                break;
            }
        }
        let err = last_error(&seen);
        assert_eq!(err.kind, ErrorKind::Cancelled, "{kind}");
        assert_eq!(err.message, "request cancelled");
        assert_eq!(texts(&seen), "0 ", "{kind}");
        assert!(stream.next().await.is_none(), "{kind}: the stream ends");
        // 50 frames at 100 ms would take 5 s; cancelling ends it right away.
        assert!(started.elapsed() < Duration::from_secs(4), "{kind}");
    }
}

#[tokio::test]
async fn cancelling_before_the_reply_ends_the_stream_at_once() {
    let server = FakeLlm::start(Script::new([Turn::text(["x"]).with_delay_ms(3000)])).unwrap();
    let provider = provider(ProviderKind::OpenRouter, &server);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let events: Vec<_> = provider.stream(&hello(), cancel).collect().await;
    assert_eq!(events.len(), 1);
    assert_eq!(last_error(&events).kind, ErrorKind::Cancelled);
}

#[tokio::test]
async fn silence_beyond_the_idle_timeout_fails() {
    let server = FakeLlm::start(Script::new([Turn::text(["late"]).with_delay_ms(1500)])).unwrap();
    let mut config = config(ProviderKind::Ollama, &server).with_retry(RetryPolicy::none());
    config.timeouts = Timeouts {
        idle: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let provider = build_with_env(&config, |_| None).unwrap();
    let events = collect(provider.as_ref(), &hello()).await;
    let err = last_error(&events);
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert_eq!(
        err.message,
        format!(
            "Ollama at {}/api/chat sent nothing for 0.2s (idle timeout)",
            server.base_url()
        )
    );
}

#[tokio::test]
async fn ollama_not_running_says_how_to_start_it() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = ProviderConfig::new(ProviderKind::Ollama, "qwen3")
        .with_endpoint(format!("http://127.0.0.1:{port}"))
        .with_retry(RetryPolicy::none());
    let provider = build_with_env(&config, |_| None).unwrap();
    let events = collect(provider.as_ref(), &hello()).await;
    let err = last_error(&events);
    assert_eq!(err.kind, ErrorKind::Network);
    let prefix = format!("cannot reach Ollama at http://127.0.0.1:{port}/api/chat: ");
    assert!(err.message.starts_with(&prefix), "{}", err.message);
    assert!(
        err.message.ends_with(
            "; Ollama is not running there: start it with `ollama serve`, or set the endpoint \
             to where it runs"
        ),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn openrouter_models_and_credits() {
    let mut model = Model::new("anthropic/claude-sonnet-4", 200_000);
    model.name = Some("Claude Sonnet 4".into());
    model.prompt_price = "0.000003".into();
    model.completion_price = "0.000015".into();
    model.supported_parameters = vec!["tools".into(), "reasoning".into()];
    let script = Script::new([])
        .with_models([model])
        .with_credits(10.0, 3.45);
    let server = FakeLlm::start(script).unwrap();
    let provider = provider(ProviderKind::OpenRouter, &server);
    let models = provider.list_models().await.unwrap();
    assert_eq!(
        serde_json::to_value(&models).unwrap(),
        json!([{"id": "anthropic/claude-sonnet-4", "name": "Claude Sonnet 4",
                "context_length": 200000, "supports_tools": true, "supports_reasoning": true,
                "pricing": {"prompt": "0.000003", "completion": "0.000015",
                            "internal_reasoning": "0"},
                "created": models[0].created.unwrap(),
                "description": "A scripted fake model for tests."}])
    );
    let balance = provider.balance().await.unwrap().unwrap();
    assert_eq!((balance.total_credits, balance.total_usage), (10.0, 3.45));
    assert!((balance.remaining() - 6.55).abs() < 1e-9);
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/api/v1/models", "/api/v1/credits"]);
}

#[tokio::test]
async fn ollama_models_carry_their_context_length() {
    let mut model = Model::new("qwen3:14b", 40_960);
    model.architecture = "qwen3".into();
    let server = FakeLlm::start(Script::new([]).with_models([model])).unwrap();
    let provider = provider(ProviderKind::Ollama, &server);
    let models = provider.list_models().await.unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].id, "qwen3:14b");
    assert_eq!(models[0].context_length, Some(40_960));
    assert_eq!(models[0].supports_tools, Some(true));
    assert_eq!(provider.balance().await.unwrap(), None);
}

#[tokio::test]
async fn openai_and_anthropic_model_lists() {
    let script = Script::new([]).with_models([Model::new("m1", 1000), Model::new("m2", 2000)]);
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let server = FakeLlm::start(script.clone()).unwrap();
        let ids: Vec<String> = provider(kind, &server)
            .list_models()
            .await
            .unwrap()
            .into_iter()
            .map(|model| model.id)
            .collect();
        assert_eq!(ids, ["m1", "m2"], "{kind}");
    }
}

#[tokio::test]
async fn a_retry_after_too_long_to_wait_is_returned_at_once() {
    let server = FakeLlm::start(Script::new([
        Turn::fault(Fault::rate_limited(3600)),
        Turn::text(["never"]),
    ]))
    .unwrap();
    let events = collect(provider(ProviderKind::OpenAi, &server).as_ref(), &hello()).await;
    let err = last_error(&events);
    assert_eq!(
        err.kind,
        ErrorKind::RateLimit {
            retry_after: Some(Duration::from_secs(3600))
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_overall_timeout_bounds_the_whole_reply() {
    let chunks: Vec<String> = (0..20).map(|n| n.to_string()).collect();
    let server = FakeLlm::start(Script::new([Turn::text(chunks).with_delay_ms(100)])).unwrap();
    let mut config = config(ProviderKind::Anthropic, &server);
    config.timeouts = Timeouts {
        overall: Duration::from_secs(1),
        ..Timeouts::default()
    };
    let provider = build_with_env(&config, |_| None).unwrap();
    let events = collect(provider.as_ref(), &hello()).await;
    let err = last_error(&events);
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert_eq!(
        err.message,
        "Anthropic did not finish the reply within 1s (overall timeout)"
    );
}

#[tokio::test]
async fn an_echoed_api_key_never_reaches_the_error() {
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-test-key-123","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    let server = FakeLlm::start(Script::new([Turn::fault(Fault::Status {
        status: 401,
        body: Some(body.into()),
        retry_after: None,
    })]))
    .unwrap();
    let events = collect(provider(ProviderKind::OpenAi, &server).as_ref(), &hello()).await;
    let err = last_error(&events);
    assert_eq!(err.message, "Incorrect API key provided: ***");
    assert_eq!(err.code.as_deref(), Some("invalid_api_key"));
    assert!(!format!("{err:?} {err}").contains("sk-test-key-123"));
}

#[tokio::test]
async fn dropping_the_stream_stops_reading() {
    let chunks: Vec<String> = (0..30).map(|n| format!("{n} ")).collect();
    let server = FakeLlm::start(Script::new([
        Turn::text(chunks).with_delay_ms(50),
        Turn::text(["next"]),
    ]))
    .unwrap();
    let provider = provider(ProviderKind::OpenRouter, &server);
    let mut stream = provider.stream(&hello(), CancellationToken::new());
    assert!(matches!(
        stream.next().await,
        Some(Ok(StreamEvent::TextDelta { .. }))
    ));
    drop(stream);
    // The provider stays usable for the next request.
    let reply = provider
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "next");
}

#[tokio::test]
async fn a_json_answer_where_a_stream_was_asked_for_is_reported() {
    let json_body = |body: &str| {
        Turn::fault(Fault::Status {
            status: 200,
            body: Some(body.into()),
            retry_after: None,
        })
    };
    let server = FakeLlm::start(Script::new([
        json_body(r#"{"error":{"message":"Model is loading","code":503}}"#),
        Turn::text(["loaded"]),
        json_body(r#"{"id":"x","choices":[]}"#),
    ]))
    .unwrap();
    let provider = provider(ProviderKind::OpenRouter, &server);
    let reply = provider
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        reply.message.text_content(),
        "loaded",
        "the 503 was retried"
    );

    let no_retry = build_with_env(
        &config(ProviderKind::OpenRouter, &server).with_retry(RetryPolicy::none()),
        |_| None,
    )
    .unwrap();
    let events = collect(no_retry.as_ref(), &hello()).await;
    assert_eq!(
        last_error(&events).message,
        "unexpected answer from OpenRouter: a JSON body where a stream (text/event-stream) was \
         asked for (got: {\"id\":\"x\",\"choices\":[]})"
    );
}

#[tokio::test]
async fn an_idle_timeout_before_the_first_event_is_retried() {
    let server = FakeLlm::start(Script::new([
        Turn::text(["slow"]).with_delay_ms(1500),
        Turn::text(["quick"]),
    ]))
    .unwrap();
    let mut config = config(ProviderKind::Ollama, &server);
    config.timeouts = Timeouts {
        idle: Duration::from_millis(300),
        ..Timeouts::default()
    };
    let provider = build_with_env(&config, |_| None).unwrap();
    let reply = provider
        .complete(&hello(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "quick");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_unstreamed_completion_asks_without_streaming_where_the_api_can() {
    for kind in [ProviderKind::OpenRouter, ProviderKind::Anthropic] {
        let server = FakeLlm::start(Script::new([Turn::text(["A ", "short ", "title"])
            .with_usage(ybs_testkit::Usage::new(30, 3).with_cost(0.0001))]))
        .unwrap();
        let reply = provider(kind, &server)
            .complete_unstreamed(&hello(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(reply.message.text_content(), "A short title", "{kind}");
        assert_eq!(reply.usage.completion_tokens, 3, "{kind}");
        let body = &server.requests()[0].body;
        if kind == ProviderKind::OpenRouter {
            assert_eq!(body["stream"], false, "{body}");
            assert!(body.get("stream_options").is_none(), "{body}");
            assert_eq!(reply.usage.cost, Some(0.0001));
        } else {
            // Anthropic's adapter has only the streamed call: it streams and collects.
            assert_eq!(body["stream"], true, "{body}");
        }
    }
}

#[tokio::test]
async fn an_unstreamed_completion_reports_errors_and_cancellation() {
    let server = FakeLlm::start(Script::new([Turn::fault(Fault::Status {
        status: 401,
        body: None,
        retry_after: None,
    })]))
    .unwrap();
    let error = provider(ProviderKind::OpenRouter, &server)
        .complete_unstreamed(&hello(), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth, "{error}");

    let server = FakeLlm::start(Script::new([Turn::text(["late"]).with_delay_ms(5_000)])).unwrap();
    let cancel = CancellationToken::new();
    let pending = {
        let cancel = cancel.clone();
        let provider = provider(ProviderKind::OpenRouter, &server);
        tokio::spawn(async move { provider.complete_unstreamed(&hello(), cancel).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    let error = pending.await.unwrap().unwrap_err();
    // The reply would have come after 5 s; the call ended on the cancel instead.
    assert_eq!(error.kind, ErrorKind::Cancelled, "{error}");
}
