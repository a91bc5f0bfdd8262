//! End to end against the fake LLM: plan mode. The model is offered only the tools that
//! change nothing and told plan mode is on; a call of another tool does not run; the plan it
//! proposes is approved at the prompt and ybs acts on it with every tool again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text, tool_messages};
use serde_json::{Value, json};
use ybs_testkit::Turn;

fn tool_names(body: &Value) -> Vec<String> {
    (body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter())
    .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
    .collect()
}

fn system(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

#[test]
fn a_plan_is_made_read_only_approved_and_carried_out() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "too early\n"}),
        ),
        Turn::text(["1. Write a.txt saying hi."]),
        call(
            "c2",
            "write_file",
            json!({"path": "a.txt", "content": "hi\n"}),
        ),
        Turn::text(["Done."]),
    ]);
    // /plan on, the task, approve the plan, then allow the write it leads to.
    let output = project.ybs_with_input(&[], "/plan on\nwrite a.txt\ny\ny\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("plan mode on"), "{stdout}");
    assert!(
        stdout.contains("plan mode off: carrying out the plan"),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 4, "{stdout}");
    for body in &bodies[..2] {
        assert_eq!(
            tool_names(body),
            ["read_file", "list_files", "search_files"],
            "{body}"
        );
        assert!(system(body).contains("# Plan mode"), "{body}");
    }
    let refused = tool_messages(&bodies[1]);
    assert!(refused[0].1.contains("Plan mode is on"), "{refused:?}");
    let approved = bodies[2]["messages"].as_array().unwrap();
    let last = approved.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.starts_with("Plan mode is off. Carry out this plan now")
            && last.contains("1. Write a.txt saying hi."),
        "{last}"
    );
    assert!(tool_names(&bodies[2]).contains(&"write_file".to_owned()));
    assert!(!system(&bodies[2]).contains("# Plan mode"));
    assert_eq!(project.read("a.txt"), "hi\n");
}

#[test]
fn exec_with_plan_offers_only_read_only_tools() {
    let project = Project::new(vec![Turn::text(["1. Do it."])]);
    let output = project.ybs(&["exec", "--plan", "--yes", "plan it"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &project.bodies()[0];
    assert_eq!(
        tool_names(body),
        ["read_file", "list_files", "search_files"]
    );
    assert!(system(body).contains("Plan mode is on"));
}
