//! The hook events besides the tool hooks, through the built ybs: each hook reads the event
//! as JSON on stdin and may answer (block with a reason, add context); a project's hooks
//! run only once trusted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;

fn event(project: &Project, file: &str) -> Value {
    serde_json::from_str(&project.read(file)).unwrap()
}

fn messages_text(body: &Value) -> String {
    body["messages"].to_string()
}

#[test]
fn session_and_prompt_hooks_get_the_event_and_add_context() {
    let project = Project::new(vec![Turn::text(["hi"])]);
    project.configure(|config| {
        config["hooks"] = json!({
            "session_start": [{"command": "cat > start.json; echo SESSION-CONTEXT-1"}],
            "user_prompt_submit": [{"command":
                "cat > prompt.json; echo '{\"additionalContext\": \"PROMPT-CONTEXT-2\"}'"}],
            "session_end": [{"command": "cat > end.json"}]
        });
    });
    let output = project.ybs(&["exec", "hello there"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 1, "{stderr}");
    let sent = messages_text(&bodies[0]);
    assert!(sent.contains("SESSION-CONTEXT-1"), "{sent}");
    assert!(sent.contains("PROMPT-CONTEXT-2"), "{sent}");
    let prompt = event(&project, "prompt.json");
    assert_eq!(prompt["hook_event_name"], "UserPromptSubmit");
    assert_eq!(prompt["prompt"], "hello there");
    assert_eq!(event(&project, "start.json")["source"], "startup");
    assert_eq!(event(&project, "end.json")["hook_event_name"], "SessionEnd");
}

#[test]
fn a_prompt_hook_blocks_the_prompt_before_anything_is_sent() {
    let project = Project::new(vec![Turn::text(["never"])]);
    project.configure(|config| {
        config["hooks"] = json!({"user_prompt_submit": [{"command":
            "grep -q password && { echo 'no passwords, please' >&2; exit 2; }; exit 0"}]});
    });
    let output = project.ybs(&["exec", "my password is hunter2"]);
    let stderr = text(&output.stderr);
    assert!(project.bodies().is_empty(), "{stderr}");
    assert!(
        stderr.contains("a user_prompt_submit hook blocked it: no passwords, please"),
        "{stderr}"
    );
}

#[test]
fn a_stop_hook_has_the_agent_go_on_a_bounded_number_of_times() {
    let project = Project::new(vec![
        Turn::text(["first"]),
        Turn::text(["second"]),
        Turn::text(["third"]),
        Turn::text(["fourth"]),
    ]);
    project.configure(|config| {
        config["hooks"] = json!({
            "stop": [{"command":
                "{ cat; echo; } >> stops.jsonl; echo '{\"decision\": \"block\", \"reason\": \"RUN-THE-TESTS\"}'"}],
            "max_rounds": 2
        });
    });
    let output = project.ybs(&["exec", "do it"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 3, "{stderr}");
    assert!(messages_text(&bodies[1]).contains("RUN-THE-TESTS"));
    assert!(
        stderr.contains("(hooks.max_rounds), so the turn ends"),
        "{stderr}"
    );
    let stops: Vec<Value> = (project.read("stops.jsonl").lines())
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(stops.len(), 3);
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[0]["last_reply"], "first");
}

#[test]
fn a_before_tool_hook_refuses_with_a_json_answer_and_sub_agents_report_their_stop() {
    let project = Project::new(vec![
        call("c1", "run_shell", json!({"command": "touch ran"})),
        call(
            "c2",
            "task",
            json!({"description": "look", "prompt": "look around"}),
        ),
        Turn::text(["SUB-REPORT-3"]),
        Turn::text(["done"]),
    ]);
    project.configure(|config| {
        config["agent"]["max_iterations"] = json!(10);
        config["hooks"] = json!({
            "before_tool": [{"tools": ["run_shell"], "command":
                "cat > pre.json; echo '{\"decision\": \"block\", \"reason\": \"JSON-REFUSAL-4\"}'"}],
            "subagent_stop": [{"command": "cat > sub.json"}]
        });
    });
    let output = project.ybs(&["exec", "--yes", "go"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!project.file("ran").exists(), "{stderr}");
    let bodies = project.bodies();
    let results = tool_messages(&bodies[1]);
    assert!(results[0].1.contains("JSON-REFUSAL-4"), "{results:?}");
    let pre = event(&project, "pre.json");
    assert_eq!(pre["hook_event_name"], "PreToolUse");
    assert_eq!(pre["tool_name"], "run_shell");
    assert_eq!(pre["tool_input"]["command"], "touch ran");
    let sub = event(&project, "sub.json");
    assert_eq!(sub["hook_event_name"], "SubagentStop");
    assert!(
        sub["report"].as_str().unwrap().contains("SUB-REPORT-3"),
        "{sub}"
    );
}

#[test]
fn a_notification_hook_hears_when_ybs_waits_for_the_user() {
    let project = Project::new(vec![
        call("c1", "run_shell", json!({"command": "touch asked"})),
        Turn::text(["ok"]),
    ]);
    project.configure(|config| {
        config["hooks"] = json!({"notification": [{"command": "cat > notified.json"}]});
    });
    let output = project.ybs_with_input(&[], "make a file\nn\n");
    let stderr = text(&output.stderr);
    assert!(!project.file("asked").exists(), "{stderr}");
    let notified = event(&project, "notified.json");
    assert_eq!(notified["hook_event_name"], "Notification");
    assert!(
        notified["message"].as_str().unwrap().contains("run_shell"),
        "{notified}"
    );
}

#[test]
fn a_cloned_repositorys_event_hooks_do_not_run_until_trusted() {
    let project = Project::new(vec![Turn::text(["a"]), Turn::text(["b"])]);
    project.write(
        ".ybs.json",
        r#"{"hooks": {"session_start": [{"command": "touch started-by-project"}],
            "user_prompt_submit": [{"command": "touch prompted-by-project"}]}}"#,
    );
    let output = project.ybs(&["exec", "hi"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!project.file("started-by-project").exists(), "{stderr}");
    assert!(!project.file("prompted-by-project").exists(), "{stderr}");
    assert!(stderr.contains("hooks ignored"), "{stderr}");
    let output = project.ybs(&["exec", "--trust-project", "hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(project.file("started-by-project").exists());
    assert!(project.file("prompted-by-project").exists());
}
