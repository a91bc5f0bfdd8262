//! The registry (specs, enable/disable, unknown tools, validation, output limits), external
//! tools and sidecars, reload, and the confirmation policy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Fixture;
use serde_json::json;
use ybs_core::ToolCall;
use ybs_tools::{Confirmation, ConfirmationPolicy, Decision, ExternalToolConfig, ToolRegistry};

#[test]
fn specs_match_the_spec_schemas() {
    let registry = ToolRegistry::new();
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!("builtin_specs", registry.specs());
    });
}

#[test]
fn unknown_and_disabled_tools_are_error_results() {
    let mut f = Fixture::new();
    assert_eq!(
        f.err("delete_file", json!({})),
        "unknown tool `delete_file`; available tools: read_file, write_file, edit_file, list_files, search_files, run_shell, read_job_output, stop_job, todo_write, web_fetch, task"
    );
    f.registry.set_enabled("run_shell", false);
    assert!(!f.registry.is_enabled("run_shell"));
    assert_eq!(
        f.registry.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "search_files",
            "read_job_output",
            "stop_job",
            "todo_write",
            "web_fetch",
            "task"
        ]
    );
    assert_eq!(
        f.err("run_shell", json!({"command": "true"})),
        "tool `run_shell` is disabled in the configuration; use another tool"
    );
    f.registry.set_enabled("run_shell", true);
    assert!(f.call("run_shell", json!({"command": "true"})).is_ok());
}

#[test]
fn invoke_call_turns_errors_into_readable_results() {
    let f = Fixture::new();
    let call = ToolCall::new("c1", "read_file", json!({"path": 5}));
    let result = f.registry.invoke_call(&call, &f.ctx);
    assert!(result.is_error);
    assert_eq!(result.call_id, "c1");
    assert_eq!(result.name.as_deref(), Some("read_file"));
    assert_eq!(
        result.content,
        r#"{"error":"invalid arguments for `read_file`: argument `path` must be a string, got number 5","success":false}"#
    );
    let mut bad = ToolCall::new("c2", "read_file", json!("{\"path\": "));
    bad.arguments_error = Some("EOF while parsing".into());
    let result = f.registry.invoke_call(&bad, &f.ctx);
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("the arguments are not valid JSON (EOF while parsing); send a JSON object")
    );
}

#[test]
fn long_results_are_cut_with_a_marker() {
    let mut f = Fixture::new();
    f.registry.set_max_output_chars(200);
    let text: String = (0..100).map(|i| format!("line number {i}\n")).collect();
    std::fs::write(f.root.join("big.txt"), text).unwrap();
    let result = f.registry.invoke_call(
        &ToolCall::new("c", "read_file", json!({"path": "big.txt"})),
        &f.ctx,
    );
    assert!(!result.is_error);
    // Cut inside the file's content, with a marker: the result is still JSON.
    let value: serde_json::Value = serde_json::from_str(&result.content).unwrap();
    let content = value["content"].as_str().unwrap();
    assert!(content.starts_with("     1\tline number 0\n"), "{content}");
    assert!(content.ends_with("line number 99\n"), "{content}");
    assert!(content.contains("[... output truncated: "), "{content}");
    assert_eq!(value["total_lines"], 100);
    assert!(result.content.chars().count() <= 300, "{}", result.content);
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn external(name: &str, path: &Path, timeout: Option<u64>) -> ExternalToolConfig {
    serde_json::from_value(json!({
        "name": name,
        "type": "executable",
        "path": path,
        "description": format!("{name} tool"),
        "parameters": {"query": {"type": "string", "required": true, "description": "q"}},
        "timeout_seconds": timeout,
        "enabled": true
    }))
    .unwrap()
}

#[test]
fn external_tools_get_json_and_return_json() {
    let mut f = Fixture::new();
    let bin = f.base.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let echo = script(
        &bin,
        "echo-tool",
        r#"printf '{"success":true,"got":%s}' "$1""#,
    );
    let fail = script(&bin, "fail-tool", "echo 'no network' >&2; exit 4");
    let text = script(&bin, "text-tool", "echo not json");
    let slow = script(&bin, "slow-tool", "(sleep 4; touch \"$0.late\") & sleep 60");
    let big = script(&bin, "big-tool", "head -c 2000000 /dev/zero | tr '\\0' a");
    let report = f.registry.set_external_sources(
        vec![
            external("echo", &echo, None),
            external("fail", &fail, None),
            external("text", &text, None),
            external("slow", &slow, Some(1)),
            external("big", &big, None),
        ],
        None,
    );
    assert_eq!(report.loaded, ["echo", "fail", "text", "slow", "big"]);
    assert!(report.errors.is_empty());
    assert_eq!(
        f.call("echo", json!({"query": "it's \"quoted\""})).unwrap(),
        json!({"success": true, "got": {"query": "it's \"quoted\""}})
    );
    assert_eq!(
        f.err("echo", json!({})),
        "invalid arguments for `echo`: missing required argument `query`"
    );
    assert_eq!(
        f.err("fail", json!({"query": "x"})),
        "external tool `fail` failed with exit code 4: no network"
    );
    assert_eq!(
        f.err("text", json!({"query": "x"})),
        "external tool `text` did not print valid JSON (expected ident at line 1 column 2)"
    );
    let started = Instant::now();
    assert_eq!(
        f.err("slow", json!({"query": "x"})),
        "external tool `slow` timed out after 1 s and was killed"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        f.err("big", json!({"query": "x"})),
        "external tool `big` printed more than 1048576 bytes; its output was discarded"
    );
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        !bin.join("slow-tool.late").exists(),
        "the timed-out tool's children survived"
    );
    let spec = f
        .registry
        .specs()
        .into_iter()
        .find(|s| s.name == "echo")
        .unwrap();
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "properties": {"query": {"type": "string", "description": "q"}}, "required": ["query"]})
    );
}

#[test]
fn sidecars_are_discovered_and_bad_ones_reported_and_skipped() {
    let mut f = Fixture::new();
    let tools = f.base.join("tools");
    std::fs::create_dir(&tools).unwrap();
    script(
        &tools,
        "web-search",
        r#"echo '{"success":true,"results":[]}'"#,
    );
    std::fs::write(
        tools.join("web-search.tool.json"),
        r#"{"name": "web_search", "description": "Search the web using SearXNG", "parameters": {"query": {"type": "string", "required": true}}}"#,
    )
    .unwrap();
    std::fs::write(tools.join("broken.tool.json"), "{not json").unwrap();
    std::fs::write(
        tools.join("clash.tool.json"),
        r#"{"name": "read_file", "path": "/bin/true"}"#,
    )
    .unwrap();
    std::fs::write(tools.join("readme.txt"), "ignored").unwrap();
    std::fs::write(tools.join("gone.tool.json"), r#"{"name": "gone"}"#).unwrap();
    let report = f
        .registry
        .set_external_sources(Vec::new(), Some(tools.clone()));
    assert_eq!(report.loaded, ["web_search"]);
    let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            format!(
                "cannot load external tool from {}: key must be a string at line 1 column 2",
                tools.join("broken.tool.json").display()
            ),
            format!(
                "cannot load external tool from {}: tool `gone`: executable `{}` does not exist",
                tools.join("gone.tool.json").display(),
                tools.join("gone").display()
            ),
            format!(
                "cannot load external tool from {}: a tool named `read_file` already exists; rename this one",
                tools.join("clash.tool.json").display()
            ),
        ]
    );
    assert_eq!(
        f.call("web_search", json!({"query": "rust"})).unwrap(),
        json!({"success": true, "results": []})
    );

    // Reload picks up a new sidecar and drops a removed one.
    std::fs::remove_file(tools.join("web-search.tool.json")).unwrap();
    script(&tools, "git-status", r#"echo '{"clean":true}'"#);
    std::fs::write(
        tools.join("git-status.tool.json"),
        r#"{"name": "git_status", "parameters": {}}"#,
    )
    .unwrap();
    let report = f.registry.reload();
    assert_eq!(report.loaded, ["git_status"]);
    assert!(!f.registry.is_enabled("web_search"));
    assert_eq!(
        f.call("git_status", json!({})).unwrap(),
        json!({"clean": true})
    );
}

#[test]
fn disabled_external_tools_are_loaded_but_not_offered() {
    let mut f = Fixture::new();
    let mut config = external("off", Path::new("/bin/true"), None);
    config.enabled = false;
    let report = f.registry.set_external_sources(vec![config], None);
    assert_eq!(report.loaded, ["off"]);
    assert!(!f.registry.names().contains(&"off".to_string()));
    assert_eq!(
        f.err("off", json!({"query": "x"})),
        "tool `off` is disabled in the configuration; use another tool"
    );
}

#[test]
fn confirmation_policy_asks_remembers_and_tracks_reads() {
    let f = Fixture::new();
    let mut policy = ConfirmationPolicy::new(["write_file", "run_shell", "delete_file"]);
    let args = json!({"command": "ls"});
    assert_eq!(
        policy.check(
            "run_shell",
            &f.registry.declaration("run_shell"),
            &args,
            &f.ctx
        ),
        Confirmation::Required {
            reason: "`run_shell` requires confirmation (safety.require_confirmation)".into()
        }
    );
    assert!(policy.record("run_shell", Decision::Allow));
    assert!(matches!(
        policy.check(
            "run_shell",
            &f.registry.declaration("run_shell"),
            &args,
            &f.ctx
        ),
        Confirmation::Required { .. }
    ));
    assert!(!policy.record("run_shell", Decision::Deny));
    assert!(policy.record("run_shell", Decision::AllowForSession));
    assert_eq!(
        policy.check(
            "run_shell",
            &f.registry.declaration("run_shell"),
            &args,
            &f.ctx
        ),
        Confirmation::NotNeeded
    );
    assert!(policy.is_allowed_for_session("run_shell"));
    assert_eq!(
        policy.check(
            "read_file",
            &f.registry.declaration("read_file"),
            &json!({"path": "a.txt"}),
            &f.ctx
        ),
        Confirmation::NotNeeded
    );

    // edit_file of a file not read in this session needs confirmation; after a read it does not.
    let edit = json!({"path": "./a.txt", "old_text": "alpha", "new_text": "A"});
    assert_eq!(
        policy.check(
            "edit_file",
            &f.registry.declaration("edit_file"),
            &edit,
            &f.ctx
        ),
        Confirmation::Required {
            reason: "`edit_file` of `./a.txt`, which was not read in this session".into()
        }
    );
    f.call("read_file", json!({"path": "a.txt"})).unwrap();
    assert_eq!(
        policy.check(
            "edit_file",
            &f.registry.declaration("edit_file"),
            &edit,
            &f.ctx
        ),
        Confirmation::NotNeeded
    );
    // A file written in the session counts as read.
    f.call("write_file", json!({"path": "new.txt", "content": "x"}))
        .unwrap();
    assert_eq!(
        policy.check(
            "edit_file",
            &f.registry.declaration("edit_file"),
            &json!({"path": "new.txt", "old_text": "x", "new_text": "y"}),
            &f.ctx
        ),
        Confirmation::NotNeeded
    );
    policy.reset_session();
    assert!(!policy.is_allowed_for_session("run_shell"));
}

/// A tool of the test's own, as ybs registers MCP tools.
struct Probe(ybs_core::ToolSpec);

impl ybs_tools::Tool for Probe {
    fn spec(&self) -> &ybs_core::ToolSpec {
        &self.0
    }

    fn invoke(
        &self,
        args: &ybs_tools::Args,
        _ctx: &ybs_tools::ToolContext,
    ) -> Result<serde_json::Value, ybs_tools::ToolError> {
        Ok(args.to_value())
    }
}

#[test]
fn every_tool_knows_where_it_comes_from() {
    use ybs_tools::ToolSource;
    let mut f = Fixture::new();
    let tools = f.base.join("tools");
    std::fs::create_dir(&tools).unwrap();
    script(&tools, "side", r#"echo '{}'"#);
    std::fs::write(tools.join("side.tool.json"), r#"{"name": "side"}"#).unwrap();
    let configured = external("configured", Path::new("/bin/true"), None);
    let report = f
        .registry
        .set_external_sources(vec![configured], Some(tools));
    assert_eq!(report.loaded, ["configured", "side"]);
    let probe = Probe(ybs_core::ToolSpec::new(
        "srv__probe",
        "d",
        json!({"type": "object", "properties": {}}),
    ));
    f.registry.register(std::sync::Arc::new(probe)).unwrap();
    let sources: Vec<Option<ToolSource>> = [
        "read_file",
        "run_shell",
        "srv__probe",
        "configured",
        "side",
        "nope",
    ]
    .iter()
    .map(|name| f.registry.source(name))
    .collect();
    assert_eq!(
        sources,
        [
            Some(ToolSource::BuiltIn),
            Some(ToolSource::BuiltIn),
            Some(ToolSource::Registered),
            Some(ToolSource::Config),
            Some(ToolSource::Sidecar),
            None
        ]
    );
}

#[test]
fn tools_the_caller_adds_to_the_policy_ask_with_its_reason() {
    let f = Fixture::new();
    let mut policy = ConfirmationPolicy::new(["write_file"]);
    assert_eq!(
        policy.check(
            "git__commit",
            &f.registry.declaration("git__commit"),
            &json!({}),
            &f.ctx
        ),
        Confirmation::NotNeeded
    );
    policy.require("git__commit", "a tool of MCP server `git`");
    assert_eq!(
        policy.check(
            "git__commit",
            &f.registry.declaration("git__commit"),
            &json!({}),
            &f.ctx
        ),
        Confirmation::Required {
            reason: "a tool of MCP server `git`".into()
        }
    );
    assert!(policy.record("git__commit", Decision::AllowForSession));
    assert_eq!(
        policy.check(
            "git__commit",
            &f.registry.declaration("git__commit"),
            &json!({}),
            &f.ctx
        ),
        Confirmation::NotNeeded
    );
}
