//! Providers and models end to end, as a newcomer meets them: a provider chosen without a
//! model asks for that provider's own default (a server of one's own for the model it
//! lists), a model the provider does not have is named with how to choose another, a server
//! that is down is said at once and never retried, a chat file's local endpoint gets neither
//! the configured hosted model nor a price, and a hosted API's format at a local server
//! still learns the server's window and tokenizer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::TcpListener;

use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::{Fault, Model, Script, Turn, Window};

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Retries so slow that a retried request would keep the test waiting for an hour: a run
/// that ends at all did not retry.
fn retries_that_would_hang(project: &Project) {
    project.configure(|config| {
        config["agent"]["retry_attempts"] = json!(3);
        config["agent"]["retry_backoff_base_ms"] = json!(3_600_000);
    });
}

/// The configuration with `llm` replaced (no model unless `llm` names one).
fn with_llm(project: &Project, llm: Value) {
    project.configure(|config| config["llm"] = llm);
}

fn requests_to(project: &Project, suffix: &str) -> Vec<Value> {
    (project.llm.requests().into_iter())
        .filter(|request| request.path.ends_with(suffix))
        .map(|request| request.body)
        .collect()
}

#[test]
fn a_provider_without_a_model_asks_for_its_own_default() {
    let project = Project::new(vec![Turn::text(["Hi from OpenAI."])]);
    with_llm(&project, json!({"provider": "openai"}));
    let endpoint = format!("{}/v1", project.llm.base_url());
    let output = project
        .command(&["--endpoint", &endpoint, "exec", "hi"])
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("Hi from OpenAI."));
    assert_eq!(project.bodies()[0]["model"], "gpt-4.1");

    let project = Project::new(vec![Turn::text(["Hi from Anthropic."])]);
    with_llm(&project, json!({}));
    let endpoint = project.llm.base_url();
    let output = project.ybs(&["-p", "anthropic", "--endpoint", &endpoint, "exec", "hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let sent = requests_to(&project, "/v1/messages");
    assert_eq!(sent[0]["model"], "claude-sonnet-4-20250514");

    // `ybs config` says so without asking anyone.
    let project = Project::new(Vec::new());
    with_llm(&project, json!({}));
    let output = project
        .command(&["-p", "openai", "config"])
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .unwrap();
    let shown = text(&output.stdout);
    assert!(
        shown.contains(
            "# Effective provider and model: openai gpt-4.1 at https://api.openai.com/v1\n"
        ),
        "{shown}"
    );
    assert!(project.llm.requests().is_empty());
}

#[test]
fn a_local_server_without_a_model_gets_the_one_it_lists() {
    let project = Project::with_script(
        Script::new([Turn::text(["Hello from the local model."])])
            .with_models([Model::new("qwen2.5-coder-7b-q4", 8192)]),
    );
    let endpoint = format!("{}/v1", project.llm.base_url());
    with_llm(
        &project,
        json!({"provider": "llamacpp", "endpoint": endpoint}),
    );
    let output = project.ybs_with_input(&[], "hi\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("(llamacpp qwen2.5-coder-7b-q4, "),
        "{stdout}"
    );
    assert_eq!(project.bodies()[0]["model"], "qwen2.5-coder-7b-q4");
}

#[test]
fn a_model_the_provider_lacks_is_named_with_how_to_choose_another() {
    let body = json!({"error": {"message": "The model `gpt-9` does not exist",
        "type": "invalid_request_error", "code": "model_not_found"}});
    let fault = Fault::Status {
        status: 404,
        body: Some(body.to_string()),
        retry_after: None,
    };
    let project = Project::with_script(
        Script::new([Turn::fault(fault)])
            .with_models([Model::new("small-a", 8192), Model::new("small-b", 8192)]),
    );
    let output = project.ybs(&["-m", "gpt-9", "exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("has no model `gpt-9` (The model `gpt-9` does not exist)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Choose another with -m/--model NAME"),
        "{stderr}"
    );
    assert!(stderr.contains("it lists small-a, small-b"), "{stderr}");
}

#[test]
fn a_server_that_is_down_is_said_at_once_and_not_retried() {
    let project = Project::new(Vec::new());
    retries_that_would_hang(&project);
    let endpoint = format!("http://127.0.0.1:{}/v1", closed_port());
    with_llm(
        &project,
        json!({"provider": "llamacpp", "endpoint": endpoint}),
    );

    // `exec` fails with the error alone (the hour-long retries never ran).
    let output = project.ybs(&["exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let error = format!("ybs: error: cannot reach the llamacpp provider at {endpoint}: ");
    assert!(stderr.starts_with(&error), "{stderr}");
    assert!(stderr.contains("Connection refused"), "{stderr}");

    // The REPL says it before the first prompt.
    let warning = format!("ybs: warning: the llamacpp server at {endpoint} does not answer");
    let output = project.ybs_with_input(&[], "");
    let stderr = text(&output.stderr);
    assert!(stderr.starts_with(&warning), "{stderr}");

    // `ybs config` prints everything and marks the provider.
    let output = project.ybs(&["config"]);
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        shown.contains(&format!(
            "# Effective provider and model: llamacpp (the model the server lists) at {endpoint}\n\
             # Unreachable: llamacpp at {endpoint} does not answer (cannot reach"
        )),
        "{shown}"
    );
    assert!(shown.contains("llm.provider = \"llamacpp\""), "{shown}");
}

#[test]
fn a_chat_files_local_endpoint_gets_neither_the_hosted_model_nor_a_price() {
    let project = Project::with_script(
        Script::new([Turn::text(["Local answer."])]).with_models([Model::new("tiny", 8192)]),
    );
    with_llm(
        &project,
        json!({"provider": "anthropic", "model": "claude-sonnet-4-20250514",
               "api_key": "sk-ant-test"}),
    );
    let chat = format!("endpoint: {}\n\nHello?\n", project.llm.base_url());
    project.write("q.chat", &chat);
    let output = project.ybs(&["--trust-project", "ask", "--chat", "q.chat"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let sent = requests_to(&project, "/v1/messages");
    assert_eq!(sent[0]["model"], "tiny", "{}", sent[0]);
    let all = format!("{}{stderr}", text(&output.stdout));
    assert!(!all.contains('$'), "no dollars for a local reply: {all}");
    assert!(project.read("q.chat").contains("Local answer."));
}

#[test]
fn switching_to_a_model_the_server_does_not_list_warns() {
    let project = Project::with_script(
        Script::new([Turn::text(["Hi."])]).with_models([Model::new("fake-model", 8192)]),
    );
    let output = project.ybs_with_input(&[], "/model other-model\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let warned = stdout
        .find("server does not list `other-model`; requests may fail. It lists fake-model")
        .unwrap_or_else(|| panic!("{stdout}"));
    let switched = stdout
        .find("now using openai-compatible other-model")
        .unwrap();
    assert!(warned < switched, "{stdout}");
    let listed = project.ybs_with_input(&[], "/model fake-model\n");
    assert!(!text(&listed.stdout).contains("does not list"));
}

#[test]
fn a_hosted_apis_format_at_a_local_server_learns_its_window_and_tokenizer() {
    let window = Window {
        n_ctx: 6_000,
        bytes_per_token: 2.0,
    };
    let project = Project::with_script(Script::new(Vec::new()).with_window(window));
    let endpoint = format!("{}/v1", project.llm.base_url());
    with_llm(
        &project,
        json!({"provider": "openai", "model": "gpt-4.1", "endpoint": endpoint,
               "api_key": "sk-test"}),
    );
    let output = project.ybs(&["config"]);
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        shown.contains("#   context window 6,000 tokens (the provider's GET /props)"),
        "{shown}"
    );
    assert!(
        shown.contains("#   the server's tokenizer counts about 2.0 characters a token"),
        "{shown}"
    );
    assert!(
        project
            .llm
            .requests()
            .iter()
            .any(|request| request.path == "/tokenize")
    );
}
