//! ybs on the native provider adapters, against fake-llm answering in each service's own
//! wire format: a tool-calling task end to end (the model calls a tool, gets the result,
//! answers), the usage it reports, and its errors (auth, rate limit with the wait the
//! service names, context too long), with the key sent only where it belongs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cloud;
mod common;

use cloud::{assert_task_done_with_reasoning, read_file_task, run_with};
use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::{Fault, Model, Script, Turn, service_account_file};

/// The key the tests give ybs in the environment; it must never be printed.
const GEMINI_KEY: &str = "AIza-test-key-never-shown";

fn gemini_project(turns: Vec<Turn>) -> Project {
    let script = Script::new(turns).with_models([Model::new("gemini-2.5-flash", 1_048_576)]);
    let project = Project::with_script(script);
    project.write("fact.txt", "The answer is 42.\n");
    project
}

/// `ybs exec --json --yes TASK` with these flags before `exec` and `key` in the environment
/// variable `variable`: the exit code, the events and stderr. The key never shows.
fn run(
    project: &Project,
    flags: &[&str],
    (variable, key): (&str, &str),
    task: &str,
) -> (Option<i32>, Vec<Value>, String) {
    run_with(project, flags, &[(variable, key)], &[key], task)
}

/// `ybs exec --json` on Gemini, chosen by flags as a user would.
fn run_gemini(project: &Project, task: &str) -> (Option<i32>, Vec<Value>, String) {
    let endpoint = project.llm.base_url();
    let flags = [
        "-p",
        "gemini",
        "--endpoint",
        &endpoint,
        "-m",
        "gemini-2.5-flash",
    ];
    run(project, &flags, ("GEMINI_API_KEY", GEMINI_KEY), task)
}

/// Checks the end of the read-a-file task: the answer, the usage with its cached and
/// reasoning tokens, and the file untouched.
fn assert_task_done(project: &Project, outcome: &(Option<i32>, Vec<Value>, String)) {
    assert_task_done_with_reasoning(project, outcome, 12);
}

fn gemini_bodies(project: &Project) -> Vec<Value> {
    (project.llm.requests().into_iter())
        .filter(|request| request.path.ends_with(":streamGenerateContent"))
        .map(|request| request.body)
        .collect()
}

#[test]
fn a_gemini_tool_calling_task_runs_end_to_end() {
    let mut turns = read_file_task();
    // The Gemini API sends calls without ids.
    turns[0].tool_calls[0].id = String::new();
    let project = gemini_project(turns);
    let outcome = run_gemini(&project, "what does fact.txt say?");
    assert_task_done(&project, &outcome);

    let requests: Vec<_> = (project.llm.requests().into_iter())
        .filter(|request| request.path.ends_with(":streamGenerateContent"))
        .collect();
    assert_eq!(requests.len(), 2, "{:?}", project.llm.requests());
    for request in &requests {
        assert_eq!(
            request.path,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(request.query.as_deref(), Some("alt=sse"));
        assert_eq!(request.header("x-goog-api-key"), Some(GEMINI_KEY));
        assert_eq!(request.header("authorization"), None);
    }
    let first = &requests[0].body;
    let declarations = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap();
    assert!(
        (declarations.iter())
            .any(|tool| tool["name"] == "read_file" && tool["parametersJsonSchema"].is_object()),
        "{first}"
    );
    assert!(first["systemInstruction"]["parts"][0]["text"].is_string());
    // The second request carries the call back with its signature, then the file's text as
    // the function's response.
    let contents = requests[1].body["contents"].as_array().unwrap();
    let call_turn = &contents[contents.len() - 2];
    assert_eq!(call_turn["role"], "model");
    let call = (call_turn["parts"].as_array().unwrap().iter())
        .find(|part| part.get("functionCall").is_some())
        .unwrap();
    assert_eq!(call["functionCall"]["name"], "read_file");
    assert_eq!(call["functionCall"]["args"], json!({"path": "fact.txt"}));
    assert_eq!(call["thoughtSignature"], "c2lnbmF0dXJl");
    let answer = &contents[contents.len() - 1];
    assert_eq!(answer["role"], "user");
    let response = &answer["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "read_file", "{answer}");
    assert!(
        response["response"]["result"]
            .as_str()
            .unwrap()
            .contains("The answer is 42."),
        "{answer}"
    );
}

#[test]
fn a_gemini_rate_limit_waits_as_long_as_the_body_says() {
    let project = gemini_project(vec![
        Turn::fault(Fault::rate_limited(1)),
        Turn::text(["after the wait"]),
    ]);
    let (code, events, stderr) = run_gemini(&project, "hi");
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    assert_eq!(events.last().unwrap()["text"], "after the wait");
    assert_eq!(gemini_bodies(&project).len(), 2);
}

#[test]
fn gemini_errors_are_classified() {
    let invalid_key = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#;
    let project = gemini_project(vec![Turn::fault(Fault::Status {
        status: 400,
        body: Some(invalid_key.to_owned()),
        retry_after: None,
    })]);
    let (code, events, stderr) = run_gemini(&project, "hi");
    assert_eq!(code, Some(1), "{stderr}");
    let error = events.last().unwrap();
    assert_eq!(error["type"], "error", "{events:?}");
    assert_eq!(error["kind"], "auth", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("API key not valid"),
        "{error}"
    );
    // An auth error is not retried.
    assert_eq!(gemini_bodies(&project).len(), 1);

    let overflow = || Turn::fault(Fault::context_overflow(2_000_000, 1_048_576));
    let project = gemini_project((0..6).map(|_| overflow()).collect());
    let (code, events, stderr) = run_gemini(&project, "hi");
    assert_eq!(code, Some(1), "{stderr}");
    let error = events.last().unwrap();
    assert_eq!(error["type"], "error", "{events:?}");
    assert!(
        stderr.contains("larger than its context window"),
        "{stderr}"
    );
}

/// The key the Azure tests give ybs.
const AZURE_KEY: &str = "azure-test-key-never-shown";

fn azure_project(turns: Vec<Turn>) -> Project {
    let project = Project::with_script(Script::new(turns));
    project.write("fact.txt", "The answer is 42.\n");
    project
}

/// `ybs exec --json` on Azure OpenAI at `endpoint` (a path of the fake server) with `-p
/// provider`.
fn run_azure(
    project: &Project,
    provider: &str,
    endpoint: &str,
    task: &str,
) -> (Option<i32>, Vec<Value>, String) {
    let endpoint = project.llm.url(endpoint);
    let flags = ["-p", provider, "--endpoint", &endpoint, "-m", "gpt-4.1"];
    run(project, &flags, ("AZURE_OPENAI_API_KEY", AZURE_KEY), task)
}

const DEPLOYMENT: &str = "/openai/deployments/prod-41?api-version=2025-01-01-preview";

#[test]
fn an_azure_deployment_runs_a_tool_calling_task() {
    let project = azure_project(read_file_task());
    let outcome = run_azure(&project, "azure", DEPLOYMENT, "what does fact.txt say?");
    assert_task_done(&project, &outcome);
    let requests: Vec<_> = (project.llm.requests().into_iter())
        .filter(|request| request.method == "POST")
        .collect();
    assert_eq!(requests.len(), 2, "{:?}", project.llm.requests());
    for request in &requests {
        assert_eq!(request.path, "/openai/deployments/prod-41/chat/completions");
        assert_eq!(
            request.query.as_deref(),
            Some("api-version=2025-01-01-preview")
        );
        assert_eq!(request.header("api-key"), Some(AZURE_KEY));
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.body["stream"], true);
    }
    // OpenAI's own request shape: the call goes back, then its result.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    assert_eq!(call["tool_calls"][0]["id"], "call_1");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "read_file");
    let result = &messages[messages.len() - 1];
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("The answer is 42."),
        "{result}"
    );
}

#[test]
fn azure_responses_run_a_tool_calling_task_at_the_v1_api() {
    let project = azure_project(read_file_task());
    let outcome = run_azure(&project, "azure-responses", "", "what does fact.txt say?");
    assert_task_done(&project, &outcome);
    let requests: Vec<_> = (project.llm.requests().into_iter())
        .filter(|request| request.method == "POST")
        .collect();
    assert_eq!(requests.len(), 2, "{:?}", project.llm.requests());
    for request in &requests {
        assert_eq!(request.path, "/openai/v1/responses");
        assert_eq!(request.header("api-key"), Some(AZURE_KEY));
        assert_eq!(request.body["model"], "gpt-4.1");
    }
    let input = requests[1].body["input"].as_array().unwrap();
    let output = (input.iter())
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_1");
}

#[test]
fn an_entra_id_token_goes_as_a_bearer_token() {
    let project = azure_project(vec![Turn::text(["ok"])]);
    let (code, events, stderr) = run(
        &project,
        &[
            "-p",
            "azure",
            "--endpoint",
            &project.llm.url("/openai/v1"),
            "-m",
            "gpt-4.1",
        ],
        ("AZURE_OPENAI_API_KEY", "Bearer eyJ0eXAi.token"),
        "hi",
    );
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let request = project.llm.last_request().unwrap();
    assert_eq!(request.path, "/openai/v1/chat/completions");
    assert_eq!(request.query, None);
    assert_eq!(
        request.header("authorization"),
        Some("Bearer eyJ0eXAi.token")
    );
    assert_eq!(request.header("api-key"), None);
}

#[test]
fn azure_errors_are_classified() {
    // A rate limit is waited out as Retry-After says, then the reply arrives.
    let project = azure_project(vec![
        Turn::fault(Fault::rate_limited(1)),
        Turn::text(["after the wait"]),
    ]);
    let (code, events, stderr) = run_azure(&project, "azure", DEPLOYMENT, "hi");
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    assert_eq!(events.last().unwrap()["text"], "after the wait");

    let project = azure_project(vec![Turn::fault(Fault::status(401))]);
    let (code, events, stderr) = run_azure(&project, "azure", DEPLOYMENT, "hi");
    assert_eq!(code, Some(1), "{stderr}");
    let error = events.last().unwrap();
    assert_eq!(error["kind"], "auth", "{error}");
    // A server at a local address is also asked for its limits; only chat requests count.
    let chats = (project.llm.requests().into_iter())
        .filter(|request| request.path.contains("/chat/completions"))
        .count();
    assert_eq!(chats, 1, "an auth error is not retried");

    // A deployment URL without an api-version gets the generally available one.
    let project = azure_project(vec![Turn::text(["ok"])]);
    let (code, _events, stderr) = run_azure(&project, "azure", "/openai/deployments/prod-41", "hi");
    assert_eq!(code, Some(0), "{stderr}");
    let request = project.llm.last_request().unwrap();
    assert_eq!(request.query.as_deref(), Some("api-version=2024-10-21"));

    let overflow = || Turn::fault(Fault::context_overflow(200_000, 128_000));
    let project = azure_project((0..6).map(|_| overflow()).collect());
    let (code, _events, stderr) = run_azure(&project, "azure", DEPLOYMENT, "hi");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("larger than its context window"),
        "{stderr}"
    );
}

#[test]
fn a_project_cannot_send_the_users_cloud_key_to_its_own_resource() {
    // The user works with Gemini; a cloned project's .ybs.json names an "Azure resource" of
    // its own and Gemini at its own server, hoping for the user's keys.
    let project = gemini_project(vec![Turn::text(["from the user's endpoint"])]);
    let attacker = common::attacker();
    let endpoint = project.llm.base_url();
    project.configure(|config| {
        config["llm"] = json!({"provider": "gemini", "model": "gemini-2.5-flash",
            "endpoint": endpoint});
    });
    for provider in ["azure", "gemini"] {
        let hostile = json!({"llm": {"provider": provider,
            "endpoint": attacker.url("/openai/deployments/x?api-version=2024-10-21")}});
        project.write(".ybs.json", &hostile.to_string());
        let output = project
            .command(&["exec", "hi"])
            .env("GEMINI_API_KEY", GEMINI_KEY)
            .env("AZURE_OPENAI_API_KEY", AZURE_KEY)
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        common::assert_no_request(&attacker);
        assert!(stderr.contains("llm.endpoint"), "{stderr}");
        assert!(!stderr.contains(GEMINI_KEY) && !stderr.contains(AZURE_KEY));
        project.llm.push_turn(Turn::text(["again"]));
    }
    assert_eq!(gemini_bodies(&project).len(), 2);
}

/// A project whose user has a service account key file (its token endpoint the fake's) and
/// names the project and region in Google's variables.
fn vertex_project(turns: Vec<Turn>) -> (Project, String) {
    let project = azure_project(turns);
    let key_file = project.path("home/service-account.json");
    let file = service_account_file(&project.llm.url("/token"), "my-project").unwrap();
    std::fs::write(&key_file, file).unwrap();
    (project, key_file.display().to_string())
}

/// `ybs exec --json` on `provider` (`vertex` or `vertex-anthropic`) with the service account.
fn run_vertex(
    project: &Project,
    key_file: &str,
    provider: &str,
    model: &str,
) -> (Option<i32>, Vec<Value>, String) {
    let endpoint = project.llm.base_url();
    let flags = ["-p", provider, "--endpoint", &endpoint, "-m", model];
    let env = [
        ("GOOGLE_APPLICATION_CREDENTIALS", key_file),
        ("GOOGLE_CLOUD_PROJECT", "my-project"),
        ("CLOUD_ML_REGION", "us-east5"),
    ];
    run_with(
        project,
        &flags,
        &env,
        &["PRIVATE KEY", "ya29.fake-"],
        "what does fact.txt say?",
    )
}

#[test]
fn gemini_on_vertex_runs_a_tool_calling_task_with_a_service_account() {
    let mut turns = read_file_task();
    turns[0].tool_calls[0].id = String::new();
    let (project, key_file) = vertex_project(turns);
    let outcome = run_vertex(&project, &key_file, "vertex", "gemini-2.5-flash");
    assert_task_done(&project, &outcome);
    let requests = project.llm.requests();
    let tokens: Vec<_> = requests.iter().filter(|r| r.path == "/token").collect();
    assert_eq!(
        tokens.len(),
        1,
        "the token is fetched once and reused: {requests:?}"
    );
    let form = tokens[0].body.as_str().unwrap();
    assert!(
        form.starts_with(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
        ),
        "{form}"
    );
    let calls: Vec<_> = (requests.iter())
        .filter(|r| r.path.ends_with(":streamGenerateContent"))
        .collect();
    assert_eq!(calls.len(), 2, "{requests:?}");
    for call in &calls {
        assert_eq!(
            call.path,
            "/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(call.query.as_deref(), Some("alt=sse"));
        assert!(
            call.header("authorization")
                .unwrap()
                .starts_with("Bearer ya29.fake-")
        );
        assert_eq!(call.header("x-goog-api-key"), None);
    }
    let contents = calls[1].body["contents"].as_array().unwrap();
    let response = &contents[contents.len() - 1]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "read_file");
}

#[test]
fn claude_on_vertex_runs_a_tool_calling_task() {
    let (project, key_file) = vertex_project(read_file_task());
    let model = "claude-sonnet-4-5@20250929";
    let outcome = run_vertex(&project, &key_file, "vertex-anthropic", model);
    assert_task_done_with_reasoning(&project, &outcome, 0);
    let calls: Vec<_> = (project.llm.requests().into_iter())
        .filter(|r| r.path.ends_with(":streamRawPredict"))
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].path,
        format!(
            "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/{model}:streamRawPredict"
        )
    );
    for call in &calls {
        assert_eq!(call.body["anthropic_version"], "vertex-2023-10-16");
        assert!(call.body.get("model").is_none(), "{}", call.body);
        assert_eq!(call.body["stream"], true);
    }
    let messages = calls[1].body["messages"].as_array().unwrap();
    let result = &messages[messages.len() - 1]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "call_1");
}

#[test]
fn vertex_errors_are_classified() {
    // Google's rate limit names its wait in the body; it is waited out.
    let (project, key_file) = vertex_project(vec![
        Turn::fault(Fault::rate_limited(1)),
        Turn::text(["after the wait"]),
    ]);
    let (code, events, stderr) = run_vertex(&project, &key_file, "vertex", "gemini-2.5-flash");
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    assert_eq!(events.last().unwrap()["text"], "after the wait");

    // A token the service does not take is an auth error, not retried.
    let project = azure_project(vec![Turn::text(["never"])]);
    let endpoint = format!("{}/v1/projects/p/locations/global", project.llm.base_url());
    let (code, events, stderr) = run_with(
        &project,
        &[
            "-p",
            "vertex",
            "--endpoint",
            &endpoint,
            "-m",
            "gemini-2.5-flash",
        ],
        &[("YBS_LLM_API_KEY", "ya29.revoked-token")],
        &["ya29.revoked-token"],
        "hi",
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(events.last().unwrap()["kind"], "auth", "{events:?}");
    assert_eq!(project.llm.remaining_turns(), 1);

    // No credentials at all: said before anything is sent.
    let project = azure_project(vec![Turn::text(["never"])]);
    let (code, _events, stderr) = run_with(
        &project,
        &[
            "-p",
            "vertex",
            "--endpoint",
            &endpoint,
            "-m",
            "gemini-2.5-flash",
        ],
        &[],
        &[],
        "hi",
    );
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("GOOGLE_APPLICATION_CREDENTIALS"),
        "{stderr}"
    );
    assert!(project.llm.requests().is_empty());
}

#[test]
fn a_refused_vertex_token_is_replaced_by_a_fresh_one_once() {
    // The token in hand was revoked before it expired: Vertex answers 401; ybs fetches a
    // fresh one and sends the request again, once.
    let (project, key_file) = vertex_project(vec![
        Turn::fault(Fault::status(401)),
        Turn::text(["with a fresh token"]),
    ]);
    let (code, events, stderr) = run_vertex(&project, &key_file, "vertex", "gemini-2.5-flash");
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    assert_eq!(events.last().unwrap()["text"], "with a fresh token");
    let requests = project.llm.requests();
    let tokens = requests.iter().filter(|r| r.path == "/token").count();
    assert_eq!(tokens, 2, "{requests:?}");

    // Refused again: the error is said, not retried for ever.
    let (project, key_file) = vertex_project(vec![
        Turn::fault(Fault::status(401)),
        Turn::fault(Fault::status(401)),
        Turn::text(["never"]),
    ]);
    let (code, events, stderr) = run_vertex(&project, &key_file, "vertex", "gemini-2.5-flash");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(events.last().unwrap()["kind"], "auth", "{events:?}");
    assert_eq!(project.llm.remaining_turns(), 1);
}
