//! The REPL's commands driven through a pipe, against the fake LLM: `/exit` and `/quit` leave
//! as Ctrl-D does; `/image` alone gives its usage; `/help` lists every command of the table;
//! a missing `@file` is said and the message still goes; `--continue` shows the task list it
//! restored; `ybs --help` names every command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text};
use serde_json::json;
use ybs_testkit::Turn;

#[test]
fn exit_and_quit_leave_without_sending_anything() {
    for command in ["/exit", "/quit", "/QUIT"] {
        let project = Project::new(vec![Turn::text(["never asked"])]);
        let output = project.ybs_with_input(&[], &format!("{command}\nthis is not sent\n"));
        let stdout = text(&output.stdout);
        assert!(
            output.status.success(),
            "{command}: {}",
            text(&output.stderr)
        );
        assert!(!stdout.contains("unknown command"), "{stdout}");
        assert!(project.bodies().is_empty(), "{command} sent a message");
    }
}

#[test]
fn image_alone_gives_its_usage_and_help_lists_every_command() {
    let project = Project::new(Vec::new());
    let output = project.ybs_with_input(&[], "/image\n/help\n");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("error: /image needs an argument; usage: /image PATH"),
        "{stdout}"
    );
    assert!(!stdout.contains("unknown command"), "{stdout}");
    for usage in [
        "/edit ",
        "/image PATH ",
        "/exit ",
        "/status ",
        "/model [NAME] ",
        "/resume [N] ",
    ] {
        assert!(
            stdout.contains(usage),
            "{usage} missing from /help:\n{stdout}"
        );
    }
    assert!(stdout.contains("also /quit"), "{stdout}");
    assert!(project.bodies().is_empty());
}

#[test]
fn a_missing_file_mention_is_said_and_the_message_still_goes() {
    let project = Project::new(vec![Turn::text(["Looked."])]);
    project.write("real.txt", "the real content\n");
    let output = project.ybs_with_input(&[], "compare @real.txt with @missing.txt please\n");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("warning: cannot attach @missing.txt: ")
            && stdout.contains("; sent without it"),
        "{stdout}"
    );
    assert!(stdout.contains("Looked."), "{stdout}");
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 1, "the message was sent once");
    let sent = bodies[0].to_string();
    assert!(
        sent.contains("compare @real.txt with @missing.txt please"),
        "{sent}"
    );
    assert!(sent.contains("the real content"), "{sent}");
}

#[test]
fn a_file_mention_outside_the_project_is_not_attached() {
    let project = Project::new(vec![Turn::text(["Fine."])]);
    let secret = project.path("home/secret.txt");
    std::fs::write(&secret, "TOP SECRET VALUE\n").unwrap();
    let line = format!("read @{} now\n", secret.display());
    let output = project.ybs_with_input(&[], &line);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("warning: cannot attach @/"), "{stdout}");
    let sent = project.bodies()[0].to_string();
    assert!(!sent.contains("TOP SECRET VALUE"), "{sent}");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "TOP SECRET VALUE\n"
    );
}

#[test]
fn continue_shows_the_task_list_it_restored() {
    let project = Project::new(vec![
        call(
            "t1",
            "todo_write",
            json!({"todos": [
                {"content": "read the code", "status": "completed"},
                {"content": "fix the bug", "status": "in_progress"}
            ]}),
        ),
        Turn::text(["Working on it."]),
    ]);
    let first = project.ybs_with_input(&[], "fix it\n");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let continued = project.ybs_with_input(&["--continue"], "");
    let stdout = text(&continued.stdout);
    let resumed = stdout.find("resumed ");
    let tasks = stdout.find("Tasks (1 of 2 done):\n  [x] read the code\n  [>] fix the bug");
    assert!(
        resumed.is_some() && tasks.is_some() && resumed < tasks,
        "{stdout}"
    );
}

#[test]
fn help_names_every_command_the_readme_lists() {
    let project = Project::new(Vec::new());
    let help = text(&project.ybs(&["--help"]).stdout);
    for command in [
        "exec",
        "ask",
        "chat",
        "tools",
        "tool",
        "undo",
        "acp",
        "mcp-server",
        "sessions",
        "config",
        "trust",
        "completions",
    ] {
        assert!(
            help.lines()
                .any(|line| line.trim_start().starts_with(&format!("{command} "))),
            "{command} missing from --help:\n{help}"
        );
    }
}
