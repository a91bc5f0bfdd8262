//! End to end against the fake LLM: permission rules and approval modes. Allow rules run
//! a command without asking only when they cover every command of its chain; a deny rule
//! refuses; "always" saves the rule the user picks; `--approval full-auto` asks nothing.
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
