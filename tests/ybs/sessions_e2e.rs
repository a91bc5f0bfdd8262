//! `ybs sessions` lists this project's saved sessions (date in UTC, size, first request),
//! newest first, kept in private directories; `--continue` goes on with the newest; `ybs
//! --help` names them and the REPL's new commands; one of a thing is said in the singular.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use ybs_testkit::Turn;

#[test]
fn sessions_are_listed_and_continue_resumes_the_newest() {
    let project = Project::new(vec![
        Turn::text(["Alpha answered."]),
        Turn::text(["Beta answered."]),
        Turn::text(["Continued."]),
    ]);
    let none = project.ybs(&["sessions"]);
    assert!(none.status.success());
    assert!(
        text(&none.stderr).starts_with("no saved session for "),
        "{}",
        text(&none.stderr)
    );
    assert!(
        project
            .ybs(&["exec", "the alpha task\nwith details"])
            .status
            .success()
    );
    // Two sessions saved within the same second still list in order.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(project.ybs(&["exec", "the beta task"]).status.success());
    let listed = project.ybs(&["sessions"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let stdout = text(&listed.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("  1. 20"), "{stdout}");
    assert!(
        lines[0].contains(" 1 request, ") && lines[0].ends_with(" B  the beta task"),
        "{stdout}"
    );
    assert!(lines[1].trim_start().ends_with(".chat"), "{stdout}");
    assert!(
        lines[2].starts_with("  2. ") && lines[2].ends_with("  the alpha task"),
        "{stdout}"
    );
    assert!(stdout.contains("ybs --continue"), "{stdout}");

    let continued = project.ybs(&["--continue", "exec", "and then?"]);
    assert!(continued.status.success(), "{}", text(&continued.stderr));
    // It says which session it went on with.
    let said = text(&continued.stderr);
    assert!(
        said.contains("ybs: resumed ") && said.contains(".chat (2 messages): the beta task"),
        "{said}"
    );
    let body = project.bodies().pop().unwrap();
    let sent = body["messages"].to_string();
    assert!(
        sent.contains("the beta task") && sent.contains("Beta answered."),
        "{sent}"
    );
    assert!(!sent.contains("the alpha task"), "{sent}");
    // It was saved in the same session: still two.
    let again = text(&project.ybs(&["sessions"]).stdout);
    assert!(
        again.contains("  1. ") && again.contains(" 2 requests, "),
        "{again}"
    );
    assert!(!again.contains("  3. "), "{again}");
}

#[test]
fn the_help_names_the_new_commands() {
    let project = Project::new(Vec::new());
    let help = text(&project.ybs(&["--help"]).stdout);
    assert!(
        help.contains("sessions") && help.contains("saved sessions"),
        "{help}"
    );
    assert!(help.contains("--continue"), "{help}");
    for named in [
        "!COMMAND",
        "/last",
        "/resume",
        "/fork",
        "/init",
        "ui.notify",
        "--image",
    ] {
        assert!(help.contains(named), "{named} in {help}");
    }
}

#[test]
fn session_directories_are_private_and_the_list_says_its_times_are_utc() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new(vec![Turn::text(["Answered."])]);
    assert!(project.ybs(&["exec", "one request"]).status.success());
    let sessions = project.path("data/ybs/sessions");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sessions), 0o700);
    let dirs: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert_eq!(mode(&dirs[0]), 0o700);
    assert_eq!(mode(&project.path("data/ybs")), 0o700);
    let listed = text(&project.ybs(&["sessions"]).stdout);
    let first = listed.lines().next().unwrap_or_default();
    assert!(first.starts_with("  1. 20"), "{listed}");
    assert!(first.contains(" UTC  1 request, "), "{listed}");
}

#[test]
fn one_of_a_thing_is_said_in_the_singular() {
    let project = Project::new(vec![
        common::call(
            "c1",
            "write_file",
            serde_json::json!({"path": "one.txt", "content": "x"}),
        ),
        Turn::text(["Done."]),
    ]);
    let output = project.ybs(&["exec", "--yes", "write one byte"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("  new file one.txt (1 line, 1 byte)\n"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(" 1 bytes") && !stderr.contains(" 1 lines"),
        "{stderr}"
    );
    assert_eq!(project.read("one.txt"), "x");
}
