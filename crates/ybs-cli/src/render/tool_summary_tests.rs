//! Each tool's summary and the whole result, from real results and arguments.
use serde_json::json;

use super::*;

const PLAIN: Painter = Painter { color: false };

fn result(content: &str) -> ToolResult {
    ToolResult {
        call_id: "c".into(),
        name: None,
        content: content.into(),
        is_error: false,
    }
}

fn shown(name: &str, arguments: Value, content: Value, change: Option<Change>) -> Vec<String> {
    let tools = ybs_tools::ToolRegistry::new();
    let known = Known {
        tool: tools.tool(name),
        arguments: Some(&arguments),
        change,
    };
    lines(
        &summarize(name, &result(&content.to_string()), known),
        PLAIN,
    )
}

#[test]
fn fetches_tasks_and_sub_agents_read_as_sentences() {
    let fetched = json!({"url": "http://127.0.0.1:9/a", "status": 200,
        "content_type": "text/html", "content": "# A\n\nb\n", "truncated": false});
    assert_eq!(
        shown("web_fetch", json!({}), fetched, None),
        ["  ✓ Fetched http://127.0.0.1:9/a (HTTP 200, 3 lines)"]
    );
    let todos = json!({"success": true, "summary": "1 of 2 done", "todos": []});
    assert_eq!(
        shown("todo_write", json!({}), todos, None),
        ["  ✓ Tasks: 1 of 2 done"]
    );
    let report = json!({"success": true, "report": "found it\nin src/a.rs"});
    assert_eq!(
        shown("task", json!({}), report, None),
        ["  ✓ Sub-agent reported (2 lines)"]
    );
}

#[test]
fn the_built_in_tools_are_summarized_for_a_person() {
    let content: String = (1..=120).map(|n| format!("{n:>6}\tline\n")).collect();
    assert_eq!(
        shown(
            "read_file",
            json!({"path": "src/main.rs"}),
            json!({"content": content, "total_lines": 120, "truncated": false}),
            None
        ),
        ["  ✓ Read src/main.rs (120 lines)"]
    );
    assert_eq!(
        shown(
            "read_file",
            json!({"path": "big.rs", "offset": 11, "limit": 2}),
            json!({"content": "    11\ta\n    12\tb\n", "total_lines": 1200, "truncated": true}),
            None
        ),
        ["  ✓ Read big.rs (lines 11-12 of 1,200)"]
    );
    let change = Change {
        added: 3,
        removed: 1,
        created: false,
    };
    assert_eq!(
        shown(
            "edit_file",
            json!({"path": "src/main.rs"}),
            json!({"success": true, "replacements": 2, "error": null}),
            Some(change)
        ),
        ["  ✓ Edited src/main.rs (+3 -1)"]
    );
    assert_eq!(
        shown(
            "edit_file",
            json!({"path": "a.rs"}),
            json!({"success": true, "replacements": 2, "error": null}),
            None
        ),
        ["  ✓ Edited a.rs (2 replacements)"]
    );
    let created = Change {
        added: 4,
        removed: 0,
        created: true,
    };
    assert_eq!(
        shown(
            "write_file",
            json!({"path": "n.rs"}),
            json!({"success": true, "bytes_written": 40}),
            Some(created)
        ),
        ["  ✓ Created n.rs (+4 -0)"]
    );
    let files: Vec<String> = (0..42).map(|n| format!("f{n}")).collect();
    assert_eq!(
        shown(
            "list_files",
            json!({}),
            json!({"files": files, "total_matches": 42, "truncated": false}),
            None
        ),
        ["  ✓ Listed 42 files"]
    );
    let found = |file: &str| json!({"file": file, "line": 1, "content": "x"});
    assert_eq!(
        shown(
            "search_files",
            json!({"pattern": "x"}),
            json!({"matches": [found("a"), found("a"), found("b"), found("c"), found("c"),
                found("c"), found("a")], "total_matches": 7, "truncated": false}),
            None
        ),
        ["  ✓ Found 7 matches in 3 files"]
    );
}

#[test]
fn a_command_shows_its_exit_code_and_last_lines() {
    let stdout: String = (1..=8).map(|n| format!("line {n}\n")).collect();
    assert_eq!(
        shown(
            "run_shell",
            json!({"command": "cargo test"}),
            json!({"exit_code": 101, "stdout": stdout, "stderr": "error: failed\n",
                "timed_out": false}),
            None
        ),
        [
            "  ✗ Ran cargo test: exit code 101",
            "    … 4 more lines above (/last shows all)",
            "    line 5",
            "    line 6",
            "    line 7",
            "    line 8",
            "    error: failed",
        ]
    );
    assert_eq!(
        shown(
            "run_shell",
            json!({"command": "sleep 9"}),
            json!({"exit_code": 137, "stdout": "", "stderr": "", "timed_out": false,
                "cancelled": true}),
            None
        ),
        ["  ✗ Ran sleep 9: exit code 137 (cancelled by the user)"]
    );
    // A very long line is cut to a screenful's share.
    let long = format!("{}\n", "x".repeat(5000));
    let lines = shown(
        "run_shell",
        json!({"command": "cat min.js"}),
        json!({"exit_code": 0, "stdout": long, "stderr": "", "timed_out": false}),
        None,
    );
    assert_eq!(
        lines[1],
        format!("    {}… (4,800 more chars)", "x".repeat(200))
    );
}

#[test]
fn failures_show_their_error_and_other_tools_their_size() {
    let failed = ToolResult {
        is_error: true,
        ..result(r#"{"success":false,"error":"path escapes the sandbox: /etc\nmore"}"#)
    };
    assert_eq!(
        lines(&summarize("read_file", &failed, Known::default()), PLAIN),
        ["  ✗ read_file: path escapes the sandbox: /etc"]
    );
    let denied = ToolResult {
        is_error: true,
        ..result(
            &json!({"success": false,
                "error": ybs_agent::confirm::denied_result("run_shell")})
            .to_string(),
        )
    };
    assert_eq!(
        lines(&summarize("run_shell", &denied, Known::default()), PLAIN),
        ["  ✗ run_shell: denied; it did not run"]
    );
    assert_eq!(
        lines(
            &summarize("mcp__x", &result("short"), Known::default()),
            PLAIN
        ),
        ["  ✓ mcp__x: short"]
    );
    assert_eq!(
        lines(
            &summarize("mcp__x", &result("a\nb\nc"), Known::default()),
            PLAIN
        ),
        ["  ✓ mcp__x: 3 lines, 5 chars"]
    );
}

#[test]
fn escape_sequences_from_the_tool_are_shown_inert() {
    let lines = shown(
        "run_shell",
        json!({"command": "x"}),
        json!({"exit_code": 0, "stdout": "\u{1b}]0;pwned\u{7}\n", "stderr": "",
            "timed_out": false}),
        None,
    );
    assert!(!lines.concat().contains('\u{1b}'), "{lines:?}");
    assert!(lines.concat().contains("^[]0;pwned^G"), "{lines:?}");
}

#[test]
fn the_whole_result_is_lines_of_text() {
    let tools = ybs_tools::ToolRegistry::new();
    let whole = full(
        tools.tool("run_shell"),
        &result(&json!({"exit_code": 2, "stdout": "a\nb\n", "stderr": "bad\n"}).to_string()),
    );
    assert_eq!(
        whole,
        ["[stdout]", "a", "b", "[stderr]", "bad", "[exit code 2]"]
    );
}

/// A tool the test adds, with its own summary and whole-result lines.
struct Probe {
    spec: ybs_core::ToolSpec,
}

impl ybs_tools::Tool for Probe {
    fn spec(&self) -> &ybs_core::ToolSpec {
        &self.spec
    }
    fn invoke(
        &self,
        _args: &ybs_tools::Args,
        _ctx: &ybs_tools::ToolContext,
    ) -> Result<Value, ybs_tools::ToolError> {
        Ok(json!({"probed": 3}))
    }
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        Some(Summary {
            ok: true,
            headline: format!("Probed {} things", result["probed"]),
            detail: Vec::new(),
            hidden: 0,
        })
    }
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        Some(vec![format!("probed: {}", result["probed"])])
    }
}

#[test]
fn a_tool_the_agent_has_is_summarized_as_it_declares() {
    let mut tools = ybs_tools::ToolRegistry::new();
    let probe = Probe {
        spec: ybs_core::ToolSpec::new("probe", "a test tool", json!({"type": "object"})),
    };
    tools.register(std::sync::Arc::new(probe)).unwrap();
    let content = result(&json!({"probed": 3}).to_string());
    let mut renderer = crate::render::Renderer::new(crate::render::RenderOptions {
        color: false,
        show_reasoning: false,
        show_tool_calls: true,
        show_token_usage: false,
    })
    .with_tools(tools.clone());
    assert_eq!(
        renderer.tool_result("probe", &content),
        ["  ✓ Probed 3 things"]
    );
    assert_eq!(full(tools.tool("probe"), &content), ["probed: 3"]);
    // Without the agent's tools it is shown as any unknown tool.
    let bare = lines(&summarize("probe", &content, Known::default()), PLAIN);
    assert_ne!(bare, ["  ✓ Probed 3 things"]);
}
