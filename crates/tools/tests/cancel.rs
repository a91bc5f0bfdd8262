//! Cancelling a running command through `ToolContext::cancel`: the command's whole process
//! group is killed at once, and the result says the user cancelled it (not a timeout).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use common::Fixture;
use serde_json::json;
use ybs_tools::process;
use ybs_tools::tool::CancelFlag;

/// A command whose background child writes `late.txt` after a second, unless its process
/// group was killed first; the foreground part would run for 30 s.
const LINGERING: &str = "(sleep 1; echo late > late.txt) & sleep 30";

/// Sets `flag` from another thread after 200 ms, as Ctrl-C does while a call blocks.
fn cancel_soon(flag: &CancelFlag) -> thread::JoinHandle<()> {
    let flag = flag.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        flag.cancel();
    })
}

/// Waits past the background child's delay and checks it never wrote its file.
fn assert_group_is_gone(dir: &Path) {
    thread::sleep(Duration::from_secs(2));
    assert!(
        !dir.join("late.txt").exists(),
        "a background child outlived the cancellation"
    );
}

#[test]
fn a_cancelled_process_has_its_group_killed_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(LINGERING)
        .current_dir(dir.path())
        .process_group(0);
    let flag = CancelFlag::new();
    let canceller = cancel_soon(&flag);
    let output = process::run_cancellable(command, Duration::from_secs(60), 1024, &flag).unwrap();
    canceller.join().unwrap();
    assert!(output.cancelled, "{output:?}");
    assert!(!output.timed_out, "{output:?}");
    assert_eq!(output.exit_code(), 137, "{output:?}");
    assert_group_is_gone(dir.path());
}

#[test]
fn a_flag_set_before_the_start_kills_the_process_at_once() {
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg("sleep 30").process_group(0);
    let flag = CancelFlag::new();
    flag.cancel();
    let output = process::run_cancellable(command, Duration::from_secs(60), 1024, &flag).unwrap();
    assert!(output.cancelled, "{output:?}");
    assert_eq!(output.exit_code(), 137, "{output:?}");
}

#[test]
fn an_unset_flag_changes_nothing() {
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg("echo done").process_group(0);
    let output =
        process::run_cancellable(command, Duration::from_secs(60), 1024, &CancelFlag::new())
            .unwrap();
    assert!(!output.cancelled && !output.timed_out, "{output:?}");
    assert_eq!(output.stdout, "done\n");
    assert_eq!(output.exit_code(), 0);
}

#[test]
fn run_shell_cancelled_by_the_user_kills_the_command_and_reports_it() {
    let f = Fixture::new();
    let canceller = cancel_soon(&f.ctx.cancel);
    let result = f
        .call(
            "run_shell",
            json!({"command": LINGERING, "timeout_seconds": 60}),
        )
        .unwrap();
    canceller.join().unwrap();
    assert_eq!(result["cancelled"], true, "{result}");
    assert_eq!(result["timed_out"], false, "{result}");
    assert_eq!(result["exit_code"], 137, "{result}");
    assert_eq!(
        result["stderr"],
        "\n[cancelled by the user; the command and its child processes were killed]",
        "{result}"
    );
    assert_group_is_gone(&f.root);
    // The flag stays set until the caller resets it; after a reset the next call runs.
    f.ctx.cancel.reset();
    let next = f
        .call("run_shell", json!({"command": "echo again"}))
        .unwrap();
    assert_eq!(
        next,
        json!({"exit_code": 0, "stdout": "again\n", "stderr": "", "timed_out": false})
    );
}

#[test]
fn a_cancelled_external_tool_is_killed_and_says_so() {
    let mut f = Fixture::new();
    let script = f.base.join("slow");
    std::fs::write(&script, "#!/bin/sh\nsleep 30\necho '{}'\n").unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    let config: ybs_tools::ExternalToolConfig = serde_json::from_value(json!({
        "name": "slow", "type": "executable", "path": script, "parameters": {}
    }))
    .unwrap();
    let report = f.registry.set_external_sources(vec![config], None);
    assert_eq!(report.loaded, ["slow"]);
    let canceller = cancel_soon(&f.ctx.cancel);
    let error = f.registry.invoke("slow", &json!({}), &f.ctx).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(
        error.to_string(),
        "external tool `slow` was cancelled by the user and killed"
    );
}
