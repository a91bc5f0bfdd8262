//! The fake MCP server seen through rmcp's client: in process over streamable HTTP, and the
//! `fake-mcp` binary over stdio and HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use ybs_testkit::mcp::{FakeMcp, McpConfig, McpError, serve_http};

const BIN: &str = env!("CARGO_BIN_EXE_fake-mcp");

type Client = RunningService<RoleClient, ClientConfig>;

async fn http_client(url: &str) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    ClientConfig::default().serve(transport).await.unwrap()
}

async fn call(client: &Client, tool: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0].as_text().expect("text content").text
}

fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn http_tools_are_listed_with_descriptions_and_schemas() {
    let server = serve_http(McpConfig::new("alpha"), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    assert!(server.url().starts_with("http://127.0.0.1:"));
    assert!(server.url().ends_with("/mcp"));
    let client = http_client(&server.url()).await;

    assert_eq!(
        client
            .peer_info()
            .unwrap()
            .server_info
            .clone()
            .unwrap()
            .name,
        "alpha"
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["add", "echo", "fail", "whoami"]);
    let mut listed: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": *t.input_schema}))
        .collect();
    listed.sort_by_key(|t| t["name"].as_str().unwrap_or_default().to_owned());
    // Keys sorted: the schemas' order is serde_json's, which depends on the build's features.
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!(listed);
    });

    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn http_tool_calls_answer_and_are_recorded_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let server = serve_http(
        McpConfig::new("beta").with_record(&record),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    // The record file exists (empty) as soon as the server does.
    assert!(recorded(&record).is_empty());
    let client = http_client(&server.url()).await;

    let sum = call(&client, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(text(&sum), "5");
    assert_eq!(sum.is_error, Some(false));
    let echoed = call(&client, "echo", json!({"text": "hi there"})).await;
    assert_eq!(text(&echoed), "echo: hi there");
    let failed = call(&client, "fail", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "this tool always fails");
    let overflow = call(&client, "add", json!({"a": i64::MAX, "b": 1})).await;
    assert_eq!(overflow.is_error, Some(true));
    assert_eq!(
        text(&overflow),
        "9223372036854775807 + 1 overflows a 64-bit integer"
    );
    assert_eq!(text(&call(&client, "whoami", json!({})).await), "beta");

    // A call with bad arguments still reached the server, so it is recorded too.
    let bad = call(&client, "add", json!({"a": "two"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        text(&bad),
        "failed to deserialize parameters: invalid type: string \"two\", expected i64"
    );

    assert_eq!(
        recorded(&record),
        [
            json!({"tool": "add", "arguments": {"a": 2, "b": 3}}),
            json!({"tool": "echo", "arguments": {"text": "hi there"}}),
            json!({"tool": "fail", "arguments": {}}),
            json!({"tool": "add", "arguments": {"a": i64::MAX, "b": 1}}),
            json!({"tool": "whoami", "arguments": {}}),
            json!({"tool": "add", "arguments": {"a": "two"}}),
        ]
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn two_servers_tell_themselves_apart() {
    let one = serve_http(McpConfig::new("one"), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let two = serve_http(McpConfig::new("two"), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (a, b) = (http_client(&one.url()).await, http_client(&two.url()).await);
    assert_eq!(text(&call(&a, "whoami", json!({})).await), "one");
    assert_eq!(text(&call(&b, "whoami", json!({})).await), "two");
}

#[test]
fn an_unopenable_record_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("calls.jsonl");
    let err = FakeMcp::new(&McpConfig::default().with_record(&path)).unwrap_err();
    assert!(matches!(err, McpError::Record { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open the MCP record file {}: No such file or directory (os error 2) \
             (check that its directory exists)",
            path.display()
        )
    );
}

#[tokio::test]
async fn the_binary_serves_over_stdio_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["--name", "stdio-server", "--record"])
        .arg(&record);
    let client = ClientConfig::default()
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();

    assert_eq!(
        client
            .peer_info()
            .unwrap()
            .server_info
            .clone()
            .unwrap()
            .name,
        "stdio-server"
    );
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
    assert_eq!(
        text(&call(&client, "add", json!({"a": -4, "b": 9})).await),
        "5"
    );
    assert_eq!(
        text(&call(&client, "whoami", json!({})).await),
        "stdio-server"
    );
    client.cancel().await.unwrap();
    assert_eq!(
        recorded(&record),
        [
            json!({"tool": "add", "arguments": {"a": -4, "b": 9}}),
            json!({"tool": "whoami", "arguments": {}}),
        ]
    );
}

/// Kills the child when the test ends, even on a failed assertion.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_binary_prints_its_url_and_serves_over_http() {
    let mut child = Killed(
        Command::new(BIN)
            .args(["--name", "http-server", "--http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .strip_prefix("listening on ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let port: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected url {url:?}"))
        .parse()
        .unwrap();
    assert_ne!(port, 0);

    let client = http_client(url).await;
    assert_eq!(
        text(&call(&client, "whoami", json!({})).await),
        "http-server"
    );
    assert_eq!(
        text(&call(&client, "echo", json!({"text": "over http"})).await),
        "echo: over http"
    );
    client.cancel().await.unwrap();
}

#[test]
fn fail_start_exits_1_with_a_message_before_speaking_mcp() {
    let output = Command::new(BIN)
        .args(["--name", "broken", "--fail-start"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty(), "{:?}", output.stdout);
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "fake-mcp broken: failing to start as asked (--fail-start)\n"
    );
}

#[test]
fn a_bad_record_path_makes_the_binary_exit_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("calls.jsonl");
    let output = Command::new(BIN)
        .arg("--record")
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "fake-mcp: cannot open the MCP record file {}: No such file or directory (os error 2) \
             (check that its directory exists)\n",
            path.display()
        )
    );
}
