//! Prompt caching and prices end to end: `ybs` talking to the fake LLM in Anthropic's wire
//! format marks cache breakpoints, decodes cache reads and writes, and prices each turn from
//! the built-in table, showing what caching saved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::{Turn, Usage};

fn anthropic_project(turns: Vec<Turn>) -> Project {
    let project = Project::new(turns);
    let endpoint = project.llm.base_url();
    project.configure(|config| {
        config["llm"] = json!({
            "provider": "anthropic", "model": "claude-sonnet-4-5", "api_key": "sk-test",
            "endpoint": endpoint,
        });
    });
    project
}

fn message_bodies(project: &Project) -> Vec<Value> {
    (project.llm.requests().into_iter())
        .filter(|request| request.path.ends_with("/messages"))
        .map(|request| request.body)
        .collect()
}

/// Three turns over a growing 50k-token prefix: the first writes it to the cache, the later
/// ones read it.
fn session() -> Vec<Turn> {
    vec![
        Turn::text(["First."]).with_usage(Usage::new(50_000, 200).with_cache_write(49_000)),
        Turn::text(["Second."]).with_usage(
            Usage::new(50_400, 200)
                .with_cached(49_000)
                .with_cache_write(1_300),
        ),
        Turn::text(["Third."]).with_usage(
            Usage::new(50_800, 200)
                .with_cached(50_300)
                .with_cache_write(400),
        ),
    ]
}

fn token_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|line| line.starts_with("tokens:"))
        .collect()
}

/// The turn's cost on a usage line: `... · $0.1234[, saved ...] | session: ...`.
fn turn_cost(line: &str) -> f64 {
    let turn = line.split(" | ").next().unwrap();
    let cost = turn.rsplit(" · $").next().unwrap();
    cost.split(',').next().unwrap().parse().unwrap()
}

#[test]
fn later_turns_read_the_cache_and_cost_less() {
    let project = anthropic_project(session());
    let output = project.ybs_with_input(&[], "one\ntwo\nthree\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let lines = token_lines(&stdout);
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("tokens: 50,000 in (49,000 written to cache) · 200 out · $0.1898 |"),
        "{}",
        lines[0]
    );
    assert!(!lines[0].contains("saved"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("tokens: 50,400 in (49,000 cached, 1,300 written) · 200 out · $0.0"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("saved $0.1"), "{}", lines[1]);
    assert!(
        lines[2].contains("(50,300 cached, 400 written)"),
        "{}",
        lines[2]
    );
    let costs: Vec<f64> = lines.iter().map(|line| turn_cost(line)).collect();
    assert!(
        costs[1] < costs[0] / 4.0 && costs[2] < costs[0] / 4.0,
        "{costs:?}"
    );

    // Every request marks the tools, the system prompt and the newest user turns.
    let bodies = message_bodies(&project);
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(
            body["system"][0]["cache_control"]["type"], "ephemeral",
            "{body}"
        );
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
        let last = body["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["content"][0]["cache_control"]["type"], "ephemeral");
    }
    // The second request's first user message is marked as it was in the first request, so
    // the prefix the first request wrote is read back.
    let second = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(
        second[0]["content"][0]["cache_control"]["type"],
        "ephemeral"
    );
    // The system prompt is the same bytes every turn, or the cache would never hit.
    assert_eq!(bodies[0]["system"], bodies[2]["system"]);
}

#[test]
fn prompt_cache_off_marks_nothing_and_unknown_models_show_tokens_only() {
    let project = anthropic_project(session());
    project.configure(|config| {
        config["llm"]["prompt_cache"] = json!("off");
        config["llm"]["model"] = json!("claude-next-unpriced");
    });
    let output = project.ybs_with_input(&[], "one\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &message_bodies(&project)[0];
    assert!(!body.to_string().contains("cache_control"), "{body}");
    let line = token_lines(&stdout)[0];
    assert!(!line.contains('$'), "no price is guessed: {line}");
}

#[test]
fn the_one_hour_cache_is_asked_for_with_1h() {
    let project = anthropic_project(session());
    project.configure(|config| config["llm"]["prompt_cache"] = json!("1h"));
    let output = project.ybs_with_input(&[], "one\n");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = message_bodies(&project)[0].to_string();
    assert_eq!(body.matches(r#""ttl":"1h""#).count(), 3, "{body}");
}

#[test]
fn configured_prices_extend_the_table() {
    let project = anthropic_project(session());
    project.configure(|config| {
        config["llm"]["model"] = json!("claude-next-unpriced");
        config["llm"]["prices"] = json!({"claude-next-unpriced": {
            "input": 10.0, "output": 20.0, "cache_write": 12.5, "cache_read": 1.0}});
    });
    let output = project.ybs_with_input(&[], "one\n");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    // 1,000 * $10 + 49,000 * $12.50 + 200 * $20, per million.
    assert!(token_lines(&stdout)[0].contains("· $0.6265"), "{stdout}");
}

#[test]
fn a_bad_price_table_is_an_error_naming_the_key() {
    let project = anthropic_project(session());
    project.configure(|config| {
        config["llm"]["prices"] = json!({"m": {"input": 1.0}});
    });
    let output = project.ybs(&["exec", "hi"]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("llm.prices") && stderr.contains("output"),
        "{stderr}"
    );
    assert!(message_bodies(&project).is_empty());
}

#[test]
fn exec_json_usage_carries_the_cost_and_the_cache_figures() {
    let project = anthropic_project(session());
    let output = project.ybs(&["exec", "--json", "one"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let usage: Value = stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "usage")
        .expect("a usage event");
    assert_eq!(usage["usage"]["cache_write_tokens"], 49_000, "{usage}");
    let cost = usage["usage"]["cost"].as_f64().expect("priced");
    assert!((cost - 0.18975).abs() < 1e-9, "{usage}");
}
