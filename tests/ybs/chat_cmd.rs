//! `ybs chat parse|print|expand` through the binary, and `ask` applying a chat file's options
//! to the request it sends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use serde_json::{Value, json};
use ybs_testkit::Turn;

#[test]
fn ask_sends_the_options_in_force_and_warns_about_the_rest() {
    let project = Project::new(vec![Turn::text(["one"]), Turn::text(["two"])]);
    let chat = "option: temperature 0.2\nsticky_option: max_tokens 77\noption: stop [\"END\"]\n\
                option: frobnicate 1\noption: top_p 0.5\nsticky_option: seed 7\n\nuser:\nfirst\n";
    project.write("o.chat", chat);
    let output = project.ybs(&["ask", "--chat", "o.chat"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        ["ybs: warning: o.chat:4: unknown option `frobnicate` (ignored)"]
    );
    let body = &project.bodies()[0];
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 100.0).round()),
        Some(20.0)
    );
    assert_eq!(body["max_tokens"], 77);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["seed"], 7);
    // After the assistant's reply the `option:` values are cleared; the sticky one stays.
    let output = project.ybs(&["ask", "--chat", "o.chat", "second"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        !text(&output.stderr).contains("warning"),
        "{}",
        text(&output.stderr)
    );
    let body = &project.bodies()[1];
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 100.0).round()),
        Some(70.0)
    );
    assert_eq!(body["max_tokens"], 77);
    assert!(body.get("stop").is_none(), "{body}");
    assert!(body.get("top_p").is_none(), "{body}");
    assert_eq!(body["seed"], 7);
}

#[test]
fn chat_parse_print_and_expand_work_through_the_binary() {
    let project = Project::new(Vec::new());
    project.write("a.chat", "user:\nhello\n\nassistant:\nhi\n");
    let output = project.ybs(&["chat", "parse", "a.chat"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let parsed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        parsed,
        json!([{"role": "user", "content": "hello", "lines": [1, 2]},
               {"role": "assistant", "content": "hi", "lines": [4, 5]}])
    );
    let printed = project.ybs_with_input(&["chat", "print"], &parsed.to_string());
    assert!(printed.status.success());
    project.write("b.chat", &text(&printed.stdout));
    let again = project.ybs(&["chat", "parse", "b.chat"]);
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    let strip = |value: &Value| -> Vec<(Value, Value)> {
        (value.as_array().unwrap().iter())
            .map(|m| (m["role"].clone(), m["content"].clone()))
            .collect()
    };
    assert_eq!(strip(&again), strip(&parsed));
    let expanded = project.ybs(&["chat", "expand", "a.chat"]);
    assert!(expanded.status.success());
    let value: Value = serde_json::from_slice(&expanded.stdout).unwrap();
    assert_eq!(value["messages"][1]["content"], "hi");
    let missing = project.ybs(&["chat", "expand", "none.chat"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).starts_with("ybs: error: "));
}

#[test]
fn chat_expand_reads_no_file_the_sandbox_blocks() {
    let project = Project::new(Vec::new());
    let ssh = project.path("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "PRIVATE KEY 26").unwrap();
    for line in ["file", "import"] {
        project.write(
            "key.chat",
            &format!(
                "{line}: {}\n\nuser:\nwhat is this?\n",
                ssh.join("id_rsa").display()
            ),
        );
        let output = project.ybs(&["chat", "expand", "key.chat"]);
        assert_eq!(output.status.code(), Some(1), "{line}");
        assert!(
            text(&output.stderr).contains("may not be read"),
            "{line}: {}",
            text(&output.stderr)
        );
        assert!(!text(&output.stdout).contains("PRIVATE KEY 26"), "{line}");
    }
}
