//! Pins the request body every adapter sends, with insta snapshots: plain chat, system prompt,
//! tools, a tool-result round trip, reasoning passed back, images, JSON formats and prompt-cache
//! breakpoints.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use ybs_core::{
    CacheBreakpoints, CacheTtl, ChatRequest, Image, Message, Part, ProviderRouting,
    ReasoningEffort, ResponseFormat, Role, Thinking, ToolCall, ToolChoice, ToolResult, ToolSpec,
};
use ybs_providers::{
    OllamaOptions, OpenRouterOptions, ProviderConfig, ProviderKind, build_with_env,
};

const KINDS: [(&str, ProviderKind); 6] = [
    ("openai", ProviderKind::OpenAi),
    ("responses", ProviderKind::Responses),
    ("openrouter", ProviderKind::OpenRouter),
    ("deepseek", ProviderKind::DeepSeek),
    ("anthropic", ProviderKind::Anthropic),
    ("ollama", ProviderKind::Ollama),
];

/// The body `kind` would send for `request`.
fn body(kind: ProviderKind, request: &ChatRequest) -> Value {
    let mut config = ProviderConfig::new(kind, "default-model")
        .with_endpoint("http://127.0.0.1:9")
        .with_api_key("sk-test");
    config.ollama = OllamaOptions {
        num_ctx: Some(32000),
        keep_alive: Some("10m".into()),
    };
    config.openrouter = OpenRouterOptions {
        allow_data_retention: false,
        ..OpenRouterOptions::default()
    };
    let provider = build_with_env(&config, |_| None).unwrap();
    let mut body = provider.request_body(request).unwrap();
    // Keys sorted whether or not a crate built along (the ACP crate in `ybs`) turns on
    // serde_json's `preserve_order`.
    body.sort_all_objects();
    body
}

fn snapshot_all(case: &str, request: &ChatRequest) {
    for (name, kind) in KINDS {
        insta::assert_json_snapshot!(format!("{case}__{name}"), body(kind, request));
    }
}

fn read_file_tool() -> ToolSpec {
    ToolSpec::new(
        "read_file",
        "Read a file of the project.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )
}

#[test]
fn plain_chat() {
    let mut request = ChatRequest::new("", vec![Message::user("Hello")]);
    request.temperature = Some(0.5);
    request.max_tokens = Some(1000);
    request.stop = vec!["END".into()];
    snapshot_all("plain", &request);
}

#[test]
fn system_prompt() {
    let request = ChatRequest::new(
        "chosen-model",
        vec![
            Message::system("Also be brief."),
            Message::user("Hi"),
            Message::assistant("Hello!"),
            Message::system("Response aborted by user."),
            Message::user("Go on"),
        ],
    )
    .with_system("You are a careful engineer.");
    snapshot_all("system", &request);
}

#[test]
fn tools() {
    let mut request =
        ChatRequest::new("", vec![Message::user("Read a.txt")]).with_tools(vec![read_file_tool()]);
    request.tool_choice = Some(ToolChoice::Tool("read_file".into()));
    snapshot_all("tools", &request);
}

#[test]
fn tool_result_round_trip() {
    let assistant = Message::new(
        Role::Assistant,
        vec![
            Part::text("Reading both."),
            Part::ToolCall(ToolCall::new(
                "call_1",
                "read_file",
                json!({"path": "a.txt"}),
            )),
            Part::ToolCall(ToolCall::from_raw_arguments(
                "call_2",
                "read_file",
                "{\"path\": ",
            )),
        ],
    );
    let results = Message::new(
        Role::Tool,
        vec![
            Part::ToolResult(ToolResult {
                call_id: "call_1".into(),
                name: Some("read_file".into()),
                content: "alpha".into(),
                is_error: false,
            }),
            Part::ToolResult(ToolResult {
                call_id: "call_2".into(),
                name: Some("read_file".into()),
                content: "invalid arguments: EOF while parsing".into(),
                is_error: true,
            }),
        ],
    );
    let request = ChatRequest::new(
        "",
        vec![
            Message::user("Read a.txt"),
            assistant,
            results,
            Message::user("Thanks"),
        ],
    )
    .with_tools(vec![read_file_tool()]);
    snapshot_all("tool_round_trip", &request);
}

#[test]
fn reasoning_passed_back() {
    let assistant = Message::new(
        Role::Assistant,
        vec![
            Part::Thinking(Thinking {
                content: "The user greets me.".into(),
                signature: Some("EqQBCkYIAxgCIkD".into()),
                data: None,
                details: Some(vec![json!({
                    "type": "reasoning.text", "text": "The user greets me.",
                    "signature": "EqQBCkYIAxgCIkD", "format": "anthropic-claude-v1", "index": 0
                })]),
            }),
            Part::Thinking(Thinking {
                data: Some("EmwKAhgBEgy3va".into()),
                ..Thinking::default()
            }),
            Part::thinking("Unsigned thoughts from another provider."),
            Part::text("Hello!"),
        ],
    );
    let mut request = ChatRequest::new(
        "",
        vec![
            Message::user("Hi"),
            assistant,
            Message::user("How are you?"),
        ],
    );
    request.reasoning_effort = Some(ReasoningEffort::High);
    request.temperature = Some(0.7);
    request.prompt_cache_key = Some("chat-abc".into());
    request.routing = Some(ProviderRouting {
        order: vec!["anthropic".into()],
        ..ProviderRouting::default()
    });
    snapshot_all("reasoning_back", &request);
}

#[test]
fn images() {
    let user = Message::new(
        Role::User,
        vec![
            Part::text("What is in these?"),
            Part::Image(Image {
                media_type: Some("image/png".into()),
                path: None,
                data: Some("iVBORw0KGgo=".into()),
            }),
            Part::Image(Image {
                media_type: None,
                path: Some("photo.jpg".into()),
                data: Some("/9j/4AAQ".into()),
            }),
        ],
    );
    snapshot_all("images", &ChatRequest::new("", vec![user]));
}

#[test]
fn json_formats() {
    let mut request = ChatRequest::new("", vec![Message::user("List two colors.")]);
    request.response_format = Some(ResponseFormat::Json);
    snapshot_all("json_object", &request);
    request.response_format = Some(ResponseFormat::JsonSchema {
        name: "colors".into(),
        schema: json!({"type": "object", "properties": {"colors": {"type": "array", "items": {"type": "string"}}}}),
        strict: true,
    });
    snapshot_all("json_schema", &request);
}

#[test]
fn image_urls_are_refused_by_ollama_with_a_fix() {
    let user = Message::new(
        Role::User,
        vec![Part::Image(Image {
            media_type: None,
            path: Some("https://example.com/cat.png".into()),
            data: None,
        })],
    );
    let config = ProviderConfig::new(ProviderKind::Ollama, "m");
    let provider = build_with_env(&config, |_| None).unwrap();
    let err = provider
        .request_body(&ChatRequest::new("", vec![user]))
        .unwrap_err();
    assert_eq!(
        err.message,
        "Ollama takes images as data, not URLs: download https://example.com/cat.png and attach \
         the file"
    );
}

/// A session of two turns, the second with a tool call, marked the way `ybs` marks it.
fn cached_session(model: &str, ttl: CacheTtl) -> ChatRequest {
    let call = Message::new(
        Role::Assistant,
        vec![Part::ToolCall(ToolCall::new(
            "call_1",
            "read_file",
            json!({"path": "a.txt"}),
        ))],
    );
    let result = Message::new(
        Role::Tool,
        vec![Part::ToolResult(ToolResult {
            call_id: "call_1".into(),
            name: Some("read_file".into()),
            content: "alpha".into(),
            is_error: false,
        })],
    );
    let messages = vec![
        Message::user("Hi"),
        Message::assistant("Hello!"),
        Message::user("Read a.txt"),
        call,
        result,
    ];
    let mut request = ChatRequest::new(model, messages)
        .with_system("You are a careful engineer.")
        .with_tools(vec![read_file_tool()]);
    request.cache = Some(CacheBreakpoints::for_conversation(
        &request.messages,
        2,
        ttl,
    ));
    request
}

fn count_marks(body: &Value) -> usize {
    body.to_string().matches("cache_control").count()
}

#[test]
fn cache_breakpoints_for_anthropic_and_anthropic_models_on_openrouter() {
    let anthropic = body(
        ProviderKind::Anthropic,
        &cached_session("claude-sonnet-4-5", CacheTtl::FiveMinutes),
    );
    insta::assert_json_snapshot!("cache__anthropic", anthropic);
    assert_eq!(count_marks(&anthropic), 4, "tools, system, two turns");
    let openrouter = body(
        ProviderKind::OpenRouter,
        &cached_session("anthropic/claude-sonnet-4.5", CacheTtl::FiveMinutes),
    );
    insta::assert_json_snapshot!("cache__openrouter", openrouter);
    assert_eq!(count_marks(&openrouter), 4, "tools, system, two turns");
    assert_eq!(
        openrouter["tools"][0]["cache_control"]["type"], "ephemeral",
        "{openrouter}"
    );

    let hour = body(
        ProviderKind::Anthropic,
        &cached_session("claude-sonnet-4-5", CacheTtl::OneHour),
    );
    assert_eq!(hour.to_string().matches(r#""ttl":"1h""#).count(), 4);
}

#[test]
fn cache_breakpoints_are_left_out_where_the_api_caches_by_itself() {
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::DeepSeek,
        ProviderKind::Ollama,
        ProviderKind::OpenRouter,
    ] {
        let sent = body(kind, &cached_session("openai/gpt-5", CacheTtl::FiveMinutes));
        assert_eq!(count_marks(&sent), 0, "{kind:?}: {sent}");
    }
    let mut request = cached_session("claude-sonnet-4-5", CacheTtl::FiveMinutes);
    request.cache = None;
    assert_eq!(count_marks(&body(ProviderKind::Anthropic, &request)), 0);
}

#[test]
fn more_than_four_breakpoints_keep_the_newest() {
    let mut request = cached_session("claude-sonnet-4-5", CacheTtl::FiveMinutes);
    request.cache = Some(CacheBreakpoints::for_conversation(
        &request.messages,
        5,
        CacheTtl::FiveMinutes,
    ));
    let sent = body(ProviderKind::Anthropic, &request);
    assert_eq!(count_marks(&sent), 4);
    let messages = sent["messages"].as_array().unwrap();
    let first_user = messages[0]["content"].as_array().unwrap();
    assert!(first_user[0].get("cache_control").is_none(), "{sent}");
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(last.last().unwrap()["cache_control"]["type"], "ephemeral");
}

/// A Responses session continued by id: only what follows the stored reply is sent, with
/// the hosted web search, a PDF as `input_file`, a reasoning item of the earlier turn sent
/// back whole (encrypted content asked for, nothing stored), and pass-through fields that
/// never override a field the encoder writes.
#[test]
fn responses_session_features() {
    let earlier = Message::new(
        Role::Assistant,
        vec![
            Part::Thinking(Thinking {
                content: "Check the file.".into(),
                details: Some(vec![json!({
                    "type": "reasoning", "id": "rs_1", "status": "completed",
                    "summary": [{"type": "summary_text", "text": "Check the file."}],
                    "encrypted_content": "gAAAA"
                })]),
                ..Thinking::default()
            }),
            Part::ToolCall(ToolCall::new(
                "call_1",
                "read_file",
                json!({"path": "a.txt"}),
            )),
        ],
    );
    let result = Message::new(
        Role::Tool,
        vec![Part::ToolResult(ToolResult {
            call_id: "call_1".into(),
            name: Some("read_file".into()),
            content: "alpha".into(),
            is_error: false,
        })],
    );
    let question = Message::new(
        Role::User,
        vec![
            Part::text("Summarise the paper."),
            Part::Image(Image {
                media_type: None,
                path: Some("docs/paper.pdf".into()),
                data: Some("JVBERi0xLjQ=".into()),
            }),
        ],
    );
    let mut request = ChatRequest::new("gpt-5-nano", vec![earlier, result, question]);
    request.system = Some("Be brief.".into());
    request.previous_response_id = Some("resp_034e".into());
    request.store = Some(false);
    request.web_search = true;
    request.tools = vec![read_file_tool()];
    request.reasoning_effort = Some(ReasoningEffort::Low);
    request.temperature = Some(0.2);
    request.extra.insert("service_tier".into(), json!("flex"));
    request.extra.insert("model".into(), json!("not-this-one"));
    insta::assert_json_snapshot!("responses_session", body(ProviderKind::Responses, &request));
}

#[test]
fn pdfs_are_refused_by_apis_without_documents() {
    let question = Message::new(
        Role::User,
        vec![Part::Image(Image {
            media_type: None,
            path: Some("paper.pdf".into()),
            data: Some("JVBERi0xLjQ=".into()),
        })],
    );
    let request = ChatRequest::new("", vec![question]);
    for kind in [ProviderKind::OpenAi, ProviderKind::Ollama] {
        let config = ProviderConfig::new(kind, "m")
            .with_endpoint("http://127.0.0.1:9")
            .with_api_key("sk-test");
        let provider = build_with_env(&config, |_| None).unwrap();
        let error = provider.request_body(&request).unwrap_err();
        assert!(
            error
                .message
                .contains("cannot take PDF documents (paper.pdf)"),
            "{kind}: {}",
            error.message
        );
    }
    let anthropic = body(ProviderKind::Anthropic, &request);
    assert_eq!(
        anthropic["messages"][0]["content"][0],
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}})
    );
}
