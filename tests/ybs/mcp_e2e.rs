//! End-to-end tests of MCP servers: the `ybs` binary against the fake LLM and the testkit's
//! MCP server (`fake-mcp`, built with rmcp's server side), over stdio and streamable HTTP,
//! from the configuration and from a chat file's `mcp:` line. The server records every call
//! it receives, so the tests see which calls really reached it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;

/// The `fake-mcp` binary, built with the rest of the workspace's binaries.
fn fake_mcp() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| ybs_e2e::binary("fake-mcp"))
}

/// The calls the server recorded, as (tool, arguments).
fn recorded(path: &Path) -> Vec<(String, Value)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    (text.lines())
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            (
                value["tool"].as_str().unwrap().to_owned(),
                value["arguments"].clone(),
            )
        })
        .collect()
}

/// The names of the tools a request offered.
fn offered(body: &Value) -> Vec<String> {
    (body["tools"].as_array().into_iter().flatten())
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A stdio server `name` in the configuration, recording to `record`.
fn stdio_server(project: &Project, name: &str, extra: &[&str], trust: bool) -> PathBuf {
    let record = project.path(&format!("{name}.jsonl"));
    let mut args = vec![
        "--name".to_owned(),
        name.to_owned(),
        "--record".to_owned(),
        record.display().to_string(),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    project.configure(|config| {
        config["mcp"]["servers"][name] = json!({
            "command": fake_mcp(), "args": args, "trust": trust
        });
    });
    record
}

#[test]
fn the_model_calls_a_tool_of_a_stdio_server_from_the_configuration() {
    let project = Project::new(vec![
        call("c1", "calc__add", json!({"a": 2, "b": 3})),
        Turn::text(["2 + 3 = 5"]),
    ]);
    let record = stdio_server(&project, "calc", &[], false);
    let output = project.ybs(&["exec", "--yes", "add 2 and 3"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        recorded(&record),
        [("add".to_owned(), json!({"a": 2, "b": 3}))]
    );
    let bodies = project.bodies();
    let tools = offered(&bodies[0]);
    for name in ["calc__add", "calc__echo", "calc__fail", "calc__whoami"] {
        assert!(tools.contains(&name.to_owned()), "{tools:?}");
    }
    let add = (bodies[0]["tools"].as_array().unwrap().iter())
        .find(|tool| tool["function"]["name"] == "calc__add")
        .unwrap();
    assert_eq!(add["function"]["parameters"]["required"], json!(["a", "b"]));
    let results = tool_messages(&bodies[1]);
    assert_eq!(results.len(), 1);
    let result: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(result, json!({"success": true, "content": "5"}));
    assert!(text(&output.stdout).contains("2 + 3 = 5"));
}

#[test]
fn an_untrusted_servers_tool_asks_first_so_exec_without_yes_denies_it() {
    let project = Project::new(vec![
        call("c1", "calc__echo", json!({"text": "hi"})),
        Turn::text(["it was denied"]),
    ]);
    let record = stdio_server(&project, "calc", &[], false);
    let output = project.ybs(&["exec", "say hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(recorded(&record).is_empty());
    let results = tool_messages(&project.bodies()[1]);
    assert!(results[0].1.contains("denied"), "{results:?}");
}

#[test]
fn a_tool_error_of_the_server_reaches_the_model_as_an_error() {
    let project = Project::new(vec![
        call("c1", "calc__fail", json!({})),
        Turn::text(["it failed"]),
    ]);
    stdio_server(&project, "calc", &[], true);
    let output = project.ybs(&["exec", "fail"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_messages(&project.bodies()[1]);
    let result: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(
        result,
        json!({"success": false, "error": "this tool always fails"})
    );
}

#[test]
fn a_server_over_streamable_http_serves_the_model() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let project = Project::new(vec![
        call("c1", "web__echo", json!({"text": "over http"})),
        Turn::text(["done"]),
    ]);
    let record = project.path("web.jsonl");
    let config = ybs_testkit::mcp::McpConfig::new("web").with_record(&record);
    let server = runtime
        .block_on(ybs_testkit::mcp::serve_http(
            config,
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    project.configure(|config| {
        config["mcp"]["servers"]["web"] = json!({
            "url": server.url(), "trust": true, "headers": {"X-Test": "1"}
        });
    });
    let output = project.ybs(&["exec", "echo over http"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        recorded(&record),
        [("echo".to_owned(), json!({"text": "over http"}))]
    );
    let results = tool_messages(&project.bodies()[1]);
    assert!(results[0].1.contains("echo: over http"), "{results:?}");
}

#[test]
fn a_server_that_fails_to_start_is_reported_by_name_and_ybs_goes_on() {
    let project = Project::new(vec![
        call("c1", "good__whoami", json!({})),
        Turn::text(["still working"]),
    ]);
    stdio_server(&project, "broken", &["--fail-start"], true);
    stdio_server(&project, "good", &[], true);
    project.configure(|config| {
        config["mcp"]["servers"]["absent"] = json!({"command": "/nonexistent/mcp-server"});
    });
    let output = project.ybs(&["exec", "who are you?"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "ybs: warning: MCP server `broken` is not available: the MCP handshake failed"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "its stderr ended with: fake-mcp broken: failing to start as asked (--fail-start); \
             going on without its tools"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "ybs: warning: MCP server `absent` is not available: cannot start \
             `/nonexistent/mcp-server`: No such file or directory (os error 2); going on \
             without its tools"
        ),
        "{stderr}"
    );
    let results = tool_messages(&project.bodies()[1]);
    assert!(results[0].1.contains("good"), "{results:?}");

    let output = project.ybs(&["tools", "--connect"]);
    let stdout = text(&output.stdout);
    assert!(output.status.success());
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("good__add") && line.contains("mcp")),
        "{stdout}"
    );
    assert!(text(&output.stderr).contains("MCP server `broken`"));
}

#[test]
fn ybs_tool_runs_an_mcp_tool_directly() {
    let project = Project::new(Vec::new());
    let record = stdio_server(&project, "calc", &[], false);
    let output = project.ybs(&["tool", "calc__add", "{\"a\": 40, \"b\": 2}"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "ybs: error: calc__add needs confirmation and nobody can answer here; it was denied \
         (run with --yes to allow such calls)\n"
    );
    assert!(recorded(&record).is_empty());
    let output = project.ybs(&["tool", "--yes", "calc__add", "{\"a\": 40, \"b\": 2}"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let value: Value = serde_json::from_str(&text(&output.stdout)).unwrap();
    assert_eq!(value, json!({"success": true, "content": "42"}));
}

#[test]
fn ask_connects_the_server_of_a_chat_files_mcp_line_and_runs_its_tasks() {
    let project = Project::new(vec![
        call("c1", "fake-mcp__add", json!({"a": 1, "b": 1})),
        Turn::text(["two"]),
    ]);
    let record = project.path("chat.jsonl");
    let command = format!("{} --record {}", fake_mcp().display(), record.display());
    project.write(
        "m.chat",
        &format!(
            "mcp: stdio '{command}' add echo\ntask: fake-mcp__echo text=from-a-task\n\nWhat is \
             1 + 1?\n"
        ),
    );
    // The chat's mcp line starts a program: ignored until the chat is trusted.
    let trusted = project.ybs(&["trust", "m.chat"]);
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    assert!(text(&trusted.stdout).contains("mcp: stdio"));
    let output = project.ybs(&["ask", "--chat", "m.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        recorded(&record),
        [
            ("echo".to_owned(), json!({"text": "from-a-task"})),
            ("add".to_owned(), json!({"a": 1, "b": 1})),
        ]
    );
    let bodies = project.bodies();
    assert_eq!(offered(&bodies[0]), ["fake-mcp__add", "fake-mcp__echo"]);
    // The task's call and result come before the question, where the line stood.
    let task_results = tool_messages(&bodies[0]);
    assert_eq!(task_results.len(), 1);
    assert!(task_results[0].1.contains("echo: from-a-task"));
    let chat = project.read("m.chat");
    assert!(chat.contains("\"name\":\"fake-mcp__add\""), "{chat}");
    assert!(chat.trim_end().ends_with("two"), "{chat}");
    // The task's trace is not written back: it runs again on the next ask.
    assert!(!chat.contains("from-a-task\"}"), "{chat}");
}

#[test]
fn a_bad_mcp_line_names_its_line_and_leaves_the_file_alone() {
    let project = Project::new(Vec::new());
    let chat = "user:\nq\n\nmcp: ftp://nowhere\n";
    project.write("bad.chat", chat);
    let output = project.ybs(&["ask", "--chat", "bad.chat", "--trust-project"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "bad.chat:4: `ftp://nowhere` is neither an http:// or https:// URL nor `stdio \
             COMMAND`"
        ),
        "{stderr}"
    );
    assert_eq!(project.read("bad.chat"), chat);
}

#[test]
fn ask_starts_a_configured_server_only_when_the_chat_names_one_of_its_tools() {
    let project = Project::new(vec![Turn::text(["plain"]), Turn::text(["with calc"])]);
    let record = stdio_server(&project, "calc", &[], true);
    project.write("plain.chat", "Just talk.\n");
    let output = project.ybs(&["ask", "--chat", "plain.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The server opens its record file when it starts.
    assert!(!record.exists(), "the unnamed server was started");
    project.write("calc.chat", "tool: calc__add\n\nAdd.\n");
    let output = project.ybs(&["ask", "--chat", "calc.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(record.exists());
    assert_eq!(offered(&project.bodies()[1]), ["calc__add"]);
}

#[test]
fn an_http_server_that_is_down_or_refuses_the_token_is_said_in_words() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let project = Project::new(vec![Turn::text(["ok"])]);
    let config = ybs_testkit::mcp::McpConfig::new("locked").with_token("right");
    let server = runtime
        .block_on(ybs_testkit::mcp::serve_http(
            config,
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    // A port nothing listens on: bound, then let go.
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down_url = format!("http://{}/mcp", down.local_addr().unwrap());
    drop(down);
    project.configure(|config| {
        config["mcp"]["servers"]["locked"] = json!({
            "url": server.url(), "trust": true, "headers": {"Authorization": "Bearer wrong"}
        });
        config["mcp"]["servers"]["down"] = json!({"url": down_url, "trust": true});
    });
    let output = project.ybs(&["exec", "hello"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "ybs: warning: MCP server `down` is not available: {down_url}: connection refused; \
             going on without its tools"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "ybs: warning: MCP server `locked` is not available: {}: 401 Unauthorized (check \
             the token in the server's `headers`); going on without its tools",
            server.url()
        )),
        "{stderr}"
    );
    for rust in ["Transport [", "WorkerTransport", "reqwest"] {
        assert!(!stderr.contains(rust), "{rust}: {stderr}");
    }
    // With the right token the same server serves its tools.
    project.configure(|config| {
        config["mcp"]["servers"]["locked"]["headers"]["Authorization"] = json!("Bearer right");
        config["mcp"]["servers"]
            .as_object_mut()
            .unwrap()
            .remove("down");
    });
    let output = project.ybs(&["tools", "--connect"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("locked__echo"),
        "{}",
        text(&output.stdout)
    );
}
