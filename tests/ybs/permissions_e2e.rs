//! End to end against the fake LLM: permission rules and approval modes. Allow rules run
//! a command without asking only when they cover every command of its chain; a deny rule
//! refuses; "always" saves the rule the user picks (one saved in the project keeps the trust
//! the file had, a later edit of the file does not); `--approval full-auto` asks nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text, tool_messages};
use serde_json::json;
use ybs_testkit::Turn;

fn shell(id: &str, command: &str) -> Turn {
    call(id, "run_shell", json!({ "command": command }))
}

#[test]
fn allow_rules_cover_whole_chains_and_deny_rules_refuse() {
    let project = Project::new(vec![
        shell("c1", "echo one && echo two | cat"),
        shell("c2", "echo three; touch made.txt"),
        shell("c3", "echo $(touch sneaky.txt)"),
        shell("c4", "git push origin main"),
        Turn::text(["Done."]),
    ]);
    project.configure(|config| {
        config["safety"]["permissions"] = json!({
            "allow": ["run_shell(echo*)", "run_shell(cat)", "run_shell(git*)"],
            "deny": ["run_shell(git push*)"]
        });
    });
    // exec without --yes: whatever would ask is denied, so only the rules let calls run.
    let output = project.ybs(&["exec", "go"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let results = tool_messages(project.bodies().last().unwrap());
    assert!(
        results[0].1.contains("one") && results[0].1.contains("two"),
        "{results:?}"
    );
    assert!(results[1].1.contains("denied"), "{results:?}");
    assert!(!project.file("made.txt").exists());
    assert!(results[2].1.contains("denied"), "{results:?}");
    assert!(!project.file("sneaky.txt").exists());
    assert!(results[3].1.contains("denied"), "{results:?}");
    assert!(
        stderr.contains("run_shell refused by the user rule deny `run_shell(git push*)`"),
        "{stderr}"
    );
}

#[test]
fn full_auto_asks_nothing_and_auto_edit_only_edits() {
    let turns = || {
        vec![
            call(
                "c1",
                "write_file",
                json!({"path": "a.txt", "content": "hi\n"}),
            ),
            shell("c2", "touch b.txt"),
            Turn::text(["Done."]),
        ]
    };
    let project = Project::new(turns());
    let output = project.ybs(&["exec", "--approval", "auto-edit", "go"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.read("a.txt"), "hi\n");
    assert!(
        !project.file("b.txt").exists(),
        "the command still needed a yes"
    );

    let project = Project::new(turns());
    project.configure(|config| config["safety"]["approval"] = json!("full-auto"));
    let output = project.ybs(&["exec", "go"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.read("a.txt"), "hi\n");
    assert!(project.file("b.txt").exists());
}

#[test]
fn always_saves_the_chosen_rule_in_the_project() {
    let project = Project::new(vec![
        shell("c1", "cargo --version"),
        Turn::text(["One."]),
        shell("c2", "cargo --version"),
        Turn::text(["Two."]),
    ]);
    // The REPL: answer "always", pick the exact command for the project; the second call
    // runs without a question; /permissions lists the rule.
    let output = project.ybs_with_input(&[], "first\na\n1p\nsecond\n/permissions\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("[1] run_shell(cargo --version)"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("Allow? [y]es").count(), 1, "{stdout}");
    assert!(
        stdout.contains("1. allow run_shell(cargo --version)  (project)"),
        "{stdout}"
    );
    let saved: serde_json::Value = serde_json::from_str(&project.read(".ybs.json")).unwrap();
    assert_eq!(
        saved["safety"]["permissions"]["allow"],
        json!(["run_shell(cargo --version)"])
    );
}

/// The turns of three runs, each asking to run `command` of its own.
fn three_commands(commands: [&str; 3]) -> Vec<Turn> {
    let mut turns = Vec::new();
    for (number, command) in commands.into_iter().enumerate() {
        turns.push(shell(&format!("c{number}"), command));
        turns.push(Turn::text(["Done."]));
    }
    turns
}

#[test]
fn a_rule_the_user_saves_in_the_project_is_trusted_and_an_edit_after_it_is_not() {
    let project = Project::new(three_commands([
        "touch made.txt",
        "touch made.txt",
        "touch pwned.txt",
    ]));
    let output = project.ybs_with_input(&[], "first\na\n1p\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("saved allow `run_shell(touch made.txt)` in "),
        "{stdout}"
    );
    assert!(!stdout.contains("once you trust"), "{stdout}");
    let trust_record = project.path("data/ybs/trust.json");
    let recorded = std::fs::read(&trust_record).unwrap();
    std::fs::remove_file(project.file("made.txt")).unwrap();
    // The next run applies the user's own rule: no warning, no question, the command runs.
    let output = project.ybs(&["exec", "go"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("ignored"), "{stderr}");
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(project.file("made.txt").exists(), "{stderr}");
    // The repository (a pull, a colleague) adds a rule of its own: the file needs trust again.
    let edited = project.read(".ybs.json").replace(
        "\"run_shell(touch made.txt)\"",
        "\"run_shell(touch made.txt)\", \"run_shell(touch pwned.txt)\"",
    );
    project.write(".ybs.json", &edited);
    let output = project.ybs(&["exec", "go"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("safety.permissions ignored: this project is not trusted"),
        "{stderr}"
    );
    assert!(!project.file("pwned.txt").exists(), "{stderr}");
    let results = tool_messages(project.bodies().last().unwrap());
    assert!(results[0].1.contains("denied"), "{results:?}");
    assert_eq!(project.read(".ybs.json"), edited);
    assert_eq!(std::fs::read(&trust_record).unwrap(), recorded);
}

#[test]
fn a_rule_saved_beside_settings_never_trusted_does_not_trust_them() {
    let project = Project::new(three_commands([
        "touch made.txt",
        "touch made.txt",
        "touch made.txt",
    ]));
    // The repository's own file asks for an environment variable to reach commands.
    project.write(
        ".ybs.json",
        &json!({"safety": {"shell_env": ["SECRET_TOKEN"]}}).to_string(),
    );
    let output = project.ybs_with_input(&[], "first\na\n1p\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("in later runs it applies once you trust the project's settings"),
        "{stdout}"
    );
    assert!(!project.path("data/ybs/trust.json").exists());
    std::fs::remove_file(project.file("made.txt")).unwrap();
    let output = project.ybs(&["exec", "go"]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("safety.shell_env ignored: this project is not trusted"),
        "{stderr}"
    );
    assert!(!project.file("made.txt").exists(), "{stderr}");
    let saved: serde_json::Value = serde_json::from_str(&project.read(".ybs.json")).unwrap();
    assert_eq!(saved["safety"]["shell_env"], json!(["SECRET_TOKEN"]));
}

#[test]
fn ybs_tool_follows_the_allow_and_deny_rules_as_the_agent_does() {
    let project = Project::new(Vec::new());
    project.write("a.txt", "keep me\n");
    project.configure(|config| {
        config["safety"]["permissions"] = json!({
            "allow": ["write_file(b.txt)"],
            "deny": ["run_shell(rm *)"]
        });
    });
    // Allowed by a rule: runs without --yes and without a terminal to ask on.
    let output = project.ybs(&["tool", "write_file", r#"{"path": "b.txt", "content": "x"}"#]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.read("b.txt"), "x");
    // Not covered by the rule: still needs a yes.
    let output = project.ybs(&["tool", "write_file", r#"{"path": "c.txt", "content": "x"}"#]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("write_file needs confirmation and nobody can answer here"),
        "{}",
        text(&output.stderr)
    );
    assert!(!project.file("c.txt").exists());
    // Denied by a rule: --yes does not run it.
    let output = project.ybs(&["tool", "--yes", "run_shell", r#"{"command": "rm a.txt"}"#]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "ybs: error: run_shell refused by the user rule deny `run_shell(rm *)`\n"
    );
    assert_eq!(project.read("a.txt"), "keep me\n");
}
