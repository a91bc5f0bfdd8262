//! bb7 on providers other than OpenRouter, chosen in its config as in ybs (`provider`,
//! `base_url`, `api_key`): a chat sent through Anthropic Messages and through local
//! OpenAI-compatible and Ollama servers against the fake server, with what each request
//! carried, and the model lists with the limits each provider lets bb7 learn. The first
//! bb7's OpenRouter config (no `provider`) is what every other bb7 test runs on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Daemon, World};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, RecordedRequest, Script, Turn, Usage, Window};

/// A project with a chat on `provider` (the config's other keys are `extra`), against a
/// fake server that lists `models` and replies with `turns`.
fn open(
    provider: &str,
    script: Script,
    base: impl Fn(&str) -> String,
    extra: Value,
) -> (World, FakeLlm, Daemon) {
    let world = World::new();
    let server = FakeLlm::start(script).unwrap();
    let mut config = json!({"provider": provider, "base_url": base(&server.base_url())});
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    let dir = world.home().join(".config/bb7");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let mut daemon = world.open_project();
    let reply = daemon.call(json!({"action":"chat_new","name":"t"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    (world, server, daemon)
}

/// The text of the `chunk` lines of a send, and its last line.
fn reply_of(lines: &[Value]) -> (String, Value) {
    let text = lines
        .iter()
        .filter(|line| line["type"] == "chunk")
        .filter_map(|line| line["content"].as_str())
        .collect();
    (text, lines.last().cloned().unwrap_or(Value::Null))
}

/// The requests to `path`.
fn requests_to(server: &FakeLlm, path: &str) -> Vec<RecordedRequest> {
    (server.requests().into_iter())
        .filter(|request| request.path == path)
        .collect()
}

/// Every text in a request body's messages (string contents and text parts alike).
fn texts(body: &Value) -> String {
    let mut all = String::new();
    let messages = body["messages"].as_array().unwrap();
    for message in messages {
        match &message["content"] {
            Value::String(text) => all.push_str(text),
            Value::Array(parts) => {
                for part in parts {
                    all.push_str(part["text"].as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    all
}

/// The `models` reply's entry for `id`.
fn listed(daemon: &mut Daemon, id: &str) -> Value {
    let reply = daemon.call(json!({"action":"get_models"}));
    assert_eq!(reply["type"], "models", "{reply}");
    (reply["models"].as_array().unwrap().iter())
        .find(|model| model["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not listed: {reply}"))
}

#[test]
fn a_chat_goes_through_anthropic_messages() {
    let model = "claude-sonnet-4-5";
    let script =
        Script::new([Turn::text(["Hel", "lo from ", "Claude"]).with_usage(Usage::new(40, 4))])
            .with_models([Model::new(model, 200_000)]);
    let (_world, server, mut daemon) = open(
        "anthropic",
        script,
        str::to_owned,
        json!({"api_key": "sk-ant-test", "default_model": model}),
    );
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Say hello","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "Hello from Claude");

    let sent = requests_to(&server, "/v1/messages");
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    let request = &sent[0];
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert!(request.header("anthropic-version").is_some());
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["model"], model);
    assert_eq!(request.body["stream"], true);
    assert!(request.body["system"].is_array() || request.body["system"].is_string());
    assert!(
        texts(&request.body).contains("Say hello"),
        "{}",
        request.body
    );
    // The file tools reach Anthropic in its own shape.
    let tools = request.body["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|tool| tool["name"] == "write_file" && tool["input_schema"].is_object())
    );
    // Not OpenRouter's request: no privacy routing, no chat completions.
    assert!(request.body.get("provider").is_none());
    assert!(requests_to(&server, "/api/v1/chat/completions").is_empty());
}

#[test]
fn anthropic_models_have_the_catalogs_limits() {
    let script = Script::new([]).with_models([
        Model::new("claude-sonnet-4-5", 0),
        Model::new("claude-unknown", 0),
    ]);
    let (_world, server, mut daemon) = open(
        "anthropic",
        script,
        str::to_owned,
        json!({"api_key": "sk-ant-test"}),
    );
    let known = listed(&mut daemon, "claude-sonnet-4-5");
    assert_eq!(known["context_length"], 200_000, "{known}");
    assert_eq!(known["max_completion_tokens"], 64_000, "{known}");
    let unknown = listed(&mut daemon, "claude-unknown");
    assert_eq!(unknown["context_length"], 0, "{unknown}");
    let list = requests_to(&server, "/v1/models");
    assert_eq!(list[0].header("x-api-key"), Some("sk-ant-test"));
    // Anthropic has no balance: answered at once, without asking the server.
    let before = server.requests().len();
    let reply = daemon.call(json!({"action":"get_balance"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["message"], "Balance not available for this API");
    assert_eq!(server.requests().len(), before);
}

#[test]
fn a_chat_goes_through_a_local_openai_compatible_server_without_a_key() {
    let model = "qwen2.5-coder-7b";
    let script = Script::new([Turn::text(["local ", "reply"]).with_usage(Usage::new(30, 2))])
        .with_models([Model::new(model, 131_072)])
        .with_window(Window {
            n_ctx: 32_768,
            bytes_per_token: 4.0,
        });
    let (_world, server, mut daemon) = open(
        "llamacpp",
        script,
        |base| format!("{base}/v1"),
        json!({"default_model": model}),
    );
    let entry = listed(&mut daemon, model);
    assert_eq!(entry["context_length"], 32_768, "{entry}");

    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Hello, local model","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "local reply");
    let sent = requests_to(&server, "/v1/chat/completions");
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    let request = &sent[0];
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["model"], model);
    assert_eq!(request.body["stream"], true);
    assert!(
        texts(&request.body).contains("Hello, local model"),
        "{}",
        request.body
    );
    assert!(request.body.get("provider").is_none(), "{}", request.body);
    assert_eq!(request.body["messages"][0]["role"], "system");
    let reply = daemon.call(json!({"action":"get_balance"}));
    assert_eq!(reply["message"], "Balance not available for this API");
}

#[test]
fn a_local_servers_limits_are_asked_of_it() {
    // LM Studio's `/v1/models` names no window; its own list does.
    let model = "mistral-small";
    let mut listed_model = Model::new(model, 24_000);
    listed_model.loaded_context_length = Some(8_192);
    let script = Script::new([]).with_models([listed_model]).with_lm_studio();
    let (_world, server, mut daemon) =
        open("lmstudio", script, |base| format!("{base}/v1"), json!({}));
    let entry = listed(&mut daemon, model);
    assert_eq!(entry["context_length"], 8_192, "{entry}");
    assert!(
        (server.requests().iter()).any(|request| request.path.starts_with("/api/v0/models")),
        "{:?}",
        server.requests()
    );
}

#[test]
fn a_chat_goes_through_ollama() {
    let model = "qwen3:14b";
    let script =
        Script::new([Turn::text(["from ", "ollama"])]).with_models([Model::new(model, 40_960)]);
    let (_world, server, mut daemon) = open(
        "ollama",
        script,
        str::to_owned,
        json!({"default_model": model}),
    );
    let entry = listed(&mut daemon, model);
    assert_eq!(entry["context_length"], 40_960, "{entry}");
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Hi Ollama","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "from ollama");
    let sent = requests_to(&server, "/api/chat");
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    assert_eq!(sent[0].body["model"], model);
    assert!(texts(&sent[0].body).contains("Hi Ollama"));
    // Ollama loads the model with the window bb7 budgets with, not its small default.
    assert_eq!(
        sent[0].body["options"]["num_ctx"], 40_960,
        "{}",
        sent[0].body
    );
}

#[test]
fn the_first_bb7s_config_still_talks_to_openrouter() {
    let world = World::new();
    let script = Script::new([Turn::text(["ok"])])
        .with_models([Model::new("test/model", 100_000)])
        .with_credits(10.0, 2.5);
    let server = FakeLlm::start(script).unwrap();
    world.configure(&server.base_url(), "test/model", json!({}));
    let mut daemon = world.open_project();
    daemon.call(json!({"action":"chat_new","name":"t"}));
    let entry = listed(&mut daemon, "test/model");
    assert_eq!(entry["context_length"], 100_000);
    let reply = daemon.call(json!({"action":"get_balance"}));
    assert_eq!(reply["type"], "balance", "{reply}");
    assert_eq!(reply["total_credits"], 10.0);
    let lines = daemon.send("s1", "Hi");
    assert_eq!(reply_of(&lines).0, "ok");
    let sent = requests_to(&server, "/api/v1/chat/completions");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent[0].header("x-title"), Some("BB-7"));
    assert_eq!(sent[0].body["provider"]["data_collection"], "deny");
}

#[test]
fn a_chat_goes_through_gemini_with_its_tools_and_limits() {
    let model = "gemini-2.5-flash";
    let script = Script::new([Turn::text(["Hello ", "from Gemini"])
        .with_thinking(["Greeting back."])
        .with_usage(Usage::new(50, 6))])
    .with_models([Model::new(model, 1_048_576)]);
    let (_world, server, mut daemon) = open(
        "gemini",
        script,
        str::to_owned,
        json!({"api_key": "AIza-bb7-test", "default_model": model}),
    );
    // The models endpoint names each model's window, which bb7 budgets with.
    let entry = listed(&mut daemon, model);
    assert_eq!(entry["context_length"], 1_048_576, "{entry}");
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Say hello","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "Hello from Gemini");
    let path = format!("/v1beta/models/{model}:streamGenerateContent");
    let sent = requests_to(&server, &path);
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    let request = &sent[0];
    assert_eq!(request.query.as_deref(), Some("alt=sse"));
    assert_eq!(request.header("x-goog-api-key"), Some("AIza-bb7-test"));
    assert_eq!(request.header("authorization"), None);
    let contents = request.body["contents"].as_array().unwrap();
    let said: String = (contents.iter())
        .flat_map(|content| content["parts"].as_array().unwrap().iter())
        .filter_map(|part| part["text"].as_str())
        .collect();
    assert!(said.contains("Say hello"), "{}", request.body);
    // bb7's file tools reach Gemini as function declarations.
    let declarations = request.body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap();
    assert!(
        (declarations.iter()).any(|tool| tool["name"] == "write_file"),
        "{}",
        request.body
    );
    assert!(request.body.get("provider").is_none());
}

#[test]
fn a_chat_goes_through_an_azure_openai_deployment() {
    let script = Script::new([Turn::text(["Hello ", "from Azure"]).with_usage(Usage::new(40, 4))])
        .with_models([Model::new("gpt-4.1", 0)]);
    let (_world, server, mut daemon) = open(
        "azure",
        script,
        |base| format!("{base}/openai/deployments/prod-41?api-version=2024-10-21"),
        json!({"api_key": "azure-bb7-key", "default_model": "gpt-4.1"}),
    );
    // Azure's model list names no windows: the catalog's limits are used.
    let entry = listed(&mut daemon, "gpt-4.1");
    assert_eq!(entry["context_length"], 1_047_576, "{entry}");
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Say hello","model":"gpt-4.1"}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "Hello from Azure");
    let sent = requests_to(&server, "/openai/deployments/prod-41/chat/completions");
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    let request = &sent[0];
    assert_eq!(request.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(request.header("api-key"), Some("azure-bb7-key"));
    assert_eq!(request.header("authorization"), None);
    assert!(
        texts(&request.body).contains("Say hello"),
        "{}",
        request.body
    );
    assert!(request.body.get("provider").is_none());
}

#[test]
fn a_chat_goes_through_claude_on_vertex_with_a_service_account() {
    let model = "claude-sonnet-4-5@20250929";
    let world = World::new();
    let server = FakeLlm::start(Script::new([
        Turn::text(["Hello ", "from Vertex"]).with_usage(Usage::new(30, 3))
    ]))
    .unwrap();
    let key_file = world.home().join("service-account.json");
    let account = ybs_testkit::service_account_file(&server.url("/token"), "bb7-project");
    std::fs::write(&key_file, account.unwrap()).unwrap();
    let config = json!({"provider": "vertex-anthropic", "base_url": server.base_url(),
        "default_model": model});
    let dir = world.home().join(".config/bb7");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let key_path = key_file.display().to_string();
    let mut daemon = world.open_project_with(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", key_path.as_str()),
        ("CLOUD_ML_REGION", "us-east5"),
    ]);
    let reply = daemon.call(json!({"action":"chat_new","name":"t"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Say hello","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "Hello from Vertex");
    // The project comes from the key file; the token from its token endpoint.
    let path = format!(
        "/v1/projects/bb7-project/locations/us-east5/publishers/anthropic/models/{model}:streamRawPredict"
    );
    let sent = requests_to(&server, &path);
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    assert!(
        (sent[0].header("authorization").unwrap()).starts_with("Bearer ya29.fake-"),
        "{:?}",
        sent[0].headers
    );
    assert_eq!(sent[0].body["anthropic_version"], "vertex-2023-10-16");
    assert_eq!(requests_to(&server, "/token").len(), 1);
}

#[test]
fn a_chat_goes_through_amazon_bedrock_signed_with_sigv4() {
    use ybs_testkit::bedrock::{ACCESS_KEY_ID, SECRET_ACCESS_KEY};
    let model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    let world = World::new();
    let server = FakeLlm::start(Script::new([
        Turn::text(["Hello ", "from Bedrock"]).with_usage(Usage::new(30, 3).with_cached(20))
    ]))
    .unwrap();
    let config = json!({"provider": "bedrock", "base_url": server.base_url(),
        "default_model": model});
    let dir = world.home().join(".config/bb7");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let mut daemon = world.open_project_with(&[
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY),
        ("AWS_REGION", "us-east-1"),
    ]);
    let reply = daemon.call(json!({"action":"chat_new","name":"t"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let lines = daemon.stream(
        "s1",
        json!({"action":"send","content":"Say hello","model":model}),
    );
    let (text, last) = reply_of(&lines);
    assert_eq!(last["type"], "done", "{lines:?}");
    assert_eq!(text, "Hello from Bedrock");
    let path = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    let sent = requests_to(&server, path);
    assert_eq!(sent.len(), 1, "{:?}", server.requests());
    let authorization = sent[0].header("authorization").unwrap();
    assert!(
        authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={ACCESS_KEY_ID}/")),
        "{authorization}"
    );
    assert!(texts(&sent[0].body).contains("Say hello"));
    let shown: String = lines.iter().map(Value::to_string).collect();
    assert!(!shown.contains(SECRET_ACCESS_KEY));
}
