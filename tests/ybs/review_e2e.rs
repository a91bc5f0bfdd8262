//! End to end against the fake LLM: `/review` and `ybs exec --review` send the diff of the
//! working tree, a commit or a range in a read-only (plan mode) turn and show the findings
//! the model gave as JSON: a numbered list in the REPL, a JSON object with an exit code for
//! scripts. A range that reads as an option is refused before git runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

const REPLY: &str = "One real problem.\n\n```json\n{\"findings\": [\
    {\"file\": \"calc.py\", \"line\": 2, \"severity\": \"high\", \"reason\": \"divides by zero when count is 0\"},\
    {\"file\": \"calc.py\", \"line\": 1, \"severity\": \"low\", \"reason\": \"name says nothing\"}],\
    \"summary\": \"average() breaks on empty input\"}\n```\n";

/// A repository with one commit and an uncommitted change of `calc.py`.
fn repository(turns: Vec<Turn>) -> Project {
    let project = Project::new(turns);
    project.git(&["init", "-q"]);
    project.write("calc.py", "def f(xs):\n    return sum(xs)\n");
    project.git(&["add", "."]);
    project.git(&["commit", "-q", "-m", "first"]);
    project.write("calc.py", "def f(xs):\n    return sum(xs) / len(xs)\n");
    project
}

fn first_user_message(body: &Value) -> String {
    (body["messages"].as_array().unwrap().iter())
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn offered_tools(body: &Value) -> Vec<String> {
    (body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter())
    .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
    .collect()
}

#[test]
fn review_in_the_repl_sends_the_diff_read_only_and_lists_the_findings() {
    let project = repository(vec![Turn::text([REPLY])]);
    let output = project.ybs_with_input(&[], "/review\n/exit\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 1);
    let message = first_user_message(&bodies[0]);
    assert!(
        message.contains("+    return sum(xs) / len(xs)"),
        "{message}"
    );
    assert!(message.contains("uncommitted changes"), "{message}");
    let tools = offered_tools(&bodies[0]);
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    for changing in ["write_file", "edit_file", "run_shell"] {
        assert!(!tools.contains(&changing.to_owned()), "{tools:?}");
    }
    assert!(
        stdout.contains("Review of the uncommitted changes of the working tree: 2 findings"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" 1. calc.py:2  high  divides by zero when count is 0"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" 2. calc.py:1  low  name says nothing"),
        "{stdout}"
    );
}

#[test]
fn exec_review_prints_json_and_exits_3_on_a_high_finding() {
    let project = repository(vec![Turn::text([REPLY])]);
    let output = project.ybs(&["exec", "--review"]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result,
        json!({
            "findings": [
                {"file": "calc.py", "line": 2, "severity": "high", "reason": "divides by zero when count is 0"},
                {"file": "calc.py", "line": 1, "severity": "low", "reason": "name says nothing"}
            ],
            "summary": "average() breaks on empty input"
        })
    );

    // Only low and medium findings: below the default threshold.
    let low = "```json\n{\"findings\": [{\"file\": \"calc.py\", \"line\": 1, \"severity\": \"low\", \"reason\": \"nit\"}], \"summary\": \"fine\"}\n```";
    let project = repository(vec![Turn::text([low]), Turn::text([low])]);
    let output = project.ybs(&["exec", "--review"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = project.ybs(&["exec", "--review", "--fail-on", "low"]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
}

#[test]
fn exec_review_of_a_commit_and_a_range_sends_their_diff() {
    let project = repository(vec![Turn::text(["No problems."]), Turn::text(["None."])]);
    project.git(&["commit", "-q", "-am", "divide"]);
    let output = project.ybs(&["exec", "--review", "HEAD"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    // No JSON block in the reply: its text is the summary.
    assert_eq!(result, json!({"findings": [], "summary": "No problems."}));
    let output = project.ybs(&["exec", "--review", "HEAD~1.."]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let bodies = project.bodies();
    let commit = first_user_message(&bodies[0]);
    assert!(commit.contains("Review commit HEAD"), "{commit}");
    assert!(commit.contains("divide"), "{commit}");
    assert!(commit.contains("+    return sum(xs) / len(xs)"), "{commit}");
    let range = first_user_message(&bodies[1]);
    assert!(range.contains("the range HEAD~1.."), "{range}");
    assert!(range.contains("+    return sum(xs) / len(xs)"), "{range}");
}

#[test]
fn a_range_that_looks_like_an_option_is_refused_and_nothing_is_written() {
    let project = repository(vec![Turn::text([REPLY])]);
    let target = project.path("written-by-git");
    let option = format!("--output={}", target.display());
    let output = project.ybs(&["exec", &format!("--review={option}")]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a revision or a range"), "{stderr}");
    assert!(!target.exists());
    assert!(project.bodies().is_empty());

    // The REPL refuses it the same way and goes on.
    let output = project.ybs_with_input(&[], &format!("/review {option}\n/exit\n"));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("is not a revision or a range"), "{stdout}");
    assert!(!target.exists());
    assert!(project.bodies().is_empty());
    // The working tree is as it was.
    assert_eq!(
        project.read("calc.py"),
        "def f(xs):\n    return sum(xs) / len(xs)\n"
    );
}

#[test]
fn nothing_to_review_asks_no_model() {
    let project = repository(vec![Turn::text([REPLY])]);
    project.git(&["commit", "-q", "-am", "all in"]);
    let output = project.ybs(&["exec", "--review"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["findings"], json!([]));
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .starts_with("nothing to review"),
        "{result}"
    );
    assert!(project.bodies().is_empty());
}
