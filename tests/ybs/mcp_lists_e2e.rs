//! End-to-end tests of what MCP servers offer besides tools, through the `ybs` binary against
//! the fake LLM and `fake-mcp --extras`: resources the model lists and reads, `@server:uri`
//! attachments, prompts as `/server:prompt` commands, a tool list that changes during a turn,
//! and `ybs mcp list`. A resource's text is the server's: its escape sequences stay inert.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;
use ybs_testkit::mcp::{ESCAPE_URI, README_TEXT, README_URI};

fn fake_mcp() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| ybs_e2e::binary("fake-mcp"))
}

/// A stdio server `name` with the extras, in the user's configuration.
fn docs_server(project: &Project, name: &str, trust: bool) {
    project.configure(|config| {
        config["mcp"]["servers"][name] = json!({
            "command": fake_mcp(), "args": ["--name", name, "--extras"], "trust": trust
        });
    });
}

fn offered(body: &Value) -> Vec<String> {
    (body["tools"].as_array().into_iter().flatten())
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of the last user message of a request.
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let user = (messages.iter().rev())
        .find(|message| message["role"] == "user")
        .unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => (parts.iter())
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

#[test]
fn the_model_lists_and_reads_a_servers_resources_without_being_asked_to_confirm() {
    let project = Project::new(vec![
        call("c1", "mcp_resource", json!({})),
        call(
            "c2",
            "mcp_resource",
            json!({"server": "docs", "uri": README_URI}),
        ),
        Turn::text(["The answer is 42."]),
    ]);
    // Not trusted: its tools ask first, but reading a resource changes nothing.
    docs_server(&project, "docs", false);
    let output = project.ybs(&["exec", "what does the readme say?"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    assert!(offered(&bodies[0]).contains(&"mcp_resource".to_owned()));
    let listed: Value = serde_json::from_str(&tool_messages(&bodies[1])[0].1).unwrap();
    let uris: Vec<&str> = (listed["resources"].as_array().unwrap().iter())
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, [README_URI, ESCAPE_URI]);
    assert_eq!(listed["resources"][0]["server"], "docs");
    let read: Value = serde_json::from_str(&tool_messages(&bodies[2])[1].1).unwrap();
    assert_eq!(read["text"], README_TEXT);
    assert!(text(&output.stdout).contains("The answer is 42."));
}

#[test]
fn attack_a_resource_with_escape_sequences_reaches_the_terminal_inert() {
    let project = Project::new(vec![
        call(
            "c1",
            "mcp_resource",
            json!({"server": "docs", "uri": ESCAPE_URI}),
        ),
        Turn::text(["read it"]),
    ]);
    docs_server(&project, "docs", true);
    let output = project.ybs(&["exec", "read the escape resource"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The model reads the text as the server sent it...
    let result = &tool_messages(&project.bodies()[1])[0].1;
    assert!(result.contains("RED after"), "{result}");
    // ...and nothing the server wrote reaches the terminal as an escape sequence.
    for stream in [&output.stdout, &output.stderr] {
        assert!(!stream.contains(&0x1b), "{:?}", text(stream));
        assert!(!stream.contains(&0x07), "{:?}", text(stream));
    }
}

#[test]
fn a_mention_of_server_and_uri_attaches_the_resource() {
    let project = Project::new(vec![Turn::text(["Got it."])]);
    docs_server(&project, "docs", false);
    let output = project.ybs_with_input(&[], &format!("summarize @docs:{README_URI} please\n"));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let sent = last_user_text(&project.bodies()[0]);
    assert!(
        sent.starts_with(&format!("summarize @docs:{README_URI} please")),
        "{sent}"
    );
    assert!(
        sent.contains(&format!(
            "<resource server=\"docs\" uri=\"{README_URI}\">\n{README_TEXT}\n</resource>"
        )),
        "{sent}"
    );
    let output = project.ybs_with_input(&[], "look at @docs:fake://nothing\n");
    assert!(
        text(&output.stdout).contains("cannot attach @docs:fake://nothing"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn a_servers_prompt_is_a_command_whose_messages_are_the_users_turn() {
    let project = Project::new(vec![Turn::text(["Reviewed."])]);
    docs_server(&project, "docs", false);
    let input = "/help\n/docs:review\n/docs:review src/a.rs focus=naming\n";
    let output = project.ybs_with_input(&[], input);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("/docs:review FILE [FOCUS]"), "{stdout}");
    assert!(
        stdout.contains("`file` is required; usage: /docs:review FILE [FOCUS]"),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(
        bodies.len(),
        1,
        "the prompt without its argument sent nothing"
    );
    assert_eq!(
        last_user_text(&bodies[0]),
        "Please review src/a.rs, focusing on naming."
    );
}

#[test]
fn a_tool_list_that_changed_is_read_again_before_the_next_request() {
    let project = Project::new(vec![
        call("c1", "docs__grow", json!({})),
        call("c2", "docs__shout", json!({"text": "hi"})),
        Turn::text(["done"]),
    ]);
    docs_server(&project, "docs", true);
    let output = project.ybs(&["exec", "grow and shout"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    assert!(!offered(&bodies[0]).contains(&"docs__shout".to_owned()));
    assert!(
        offered(&bodies[1]).contains(&"docs__shout".to_owned()),
        "{:?}",
        offered(&bodies[1])
    );
    let results = tool_messages(&bodies[2]);
    let shouted: Value = serde_json::from_str(&results[1].1).unwrap();
    assert_eq!(shouted["content"], "HI");
}

#[test]
fn mcp_list_says_each_servers_state_and_where_it_was_configured() {
    let project = Project::new(Vec::new());
    docs_server(&project, "docs", false);
    project.configure(|config| {
        config["mcp"]["servers"]["broken"] = json!({
            "command": fake_mcp(), "args": ["--name", "broken", "--fail-start"]
        });
        config["mcp"]["servers"]["off"] = json!({"command": "nothing", "enabled": false});
    });
    project.write(
        ".ybs.json",
        &json!({"mcp": {"servers": {"theirs": {"command": "evil"}}}}).to_string(),
    );
    let output = project.ybs(&["mcp", "list"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let line = |name: &str| {
        (stdout.lines())
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{stdout}"))
            .to_owned()
    };
    let docs = line("docs");
    assert!(
        docs.contains("stdio  connected: 5 tools, 2 resources, 1 prompt"),
        "{docs}"
    );
    assert!(docs.contains("(user, --config: "), "{docs}");
    let broken = line("broken");
    assert!(broken.contains("failed: "), "{broken}");
    assert!(broken.contains("failing to start as asked"), "{broken}");
    assert!(line("off").contains("disabled"), "{stdout}");
    let theirs = line("theirs");
    assert!(
        theirs.contains("not started: the project is not trusted (run `ybs trust`)"),
        "{theirs}"
    );
    assert!(theirs.contains("(project: "), "{theirs}");
}
