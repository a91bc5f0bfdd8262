//! The shell sandbox for an unprivileged user: Landlock, seccomp and, to hide blocked paths
//! inside the root, a user plus mount namespace. When the tests run as root, this test copies
//! its own binary to a world-readable place and re-runs itself as `nobody` (uid 65534).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use common::{Fixture, PRIVATE, SECRET};
use serde_json::json;

const CHILD_ENV: &str = "YBS_TEST_UNPRIVILEGED_CHILD";
const DONE: &str = "unprivileged checks passed";
const NOBODY: u32 = 65534;

#[test]
fn sandbox_holds_for_an_unprivileged_user() {
    if std::env::var_os(CHILD_ENV).is_some() || !rustix::process::geteuid().is_root() {
        checks();
        println!("{DONE}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = Command::new(&exe)
        .args([
            "--exact",
            "sandbox_holds_for_an_unprivileged_user",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env("HOME", "/nonexistent")
        .env("TMPDIR", "/tmp")
        .current_dir("/")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(DONE), "{stdout}");
}

fn shell(f: &Fixture, command: &str) -> serde_json::Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 20}),
    )
    .unwrap()
}

fn checks() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let out = f.outside.display();
    let result = shell(
        &f,
        &format!(
            "cat private/key.txt {out}/secret.txt; echo x > {out}/new.txt; echo x > private/new.txt; mkdir top && echo made"
        ),
    );
    let text = result.to_string();
    assert!(
        !text.contains(PRIVATE) && !text.contains(SECRET),
        "{result}"
    );
    assert_eq!(result["stdout"], "made\n", "{result}");
    let stderr = result["stderr"].as_str().unwrap();
    assert!(stderr.contains("Read-only file system"), "{result}");
    assert!(stderr.contains("Permission denied"), "{result}");
    // Refused by seccomp, or, in the session's loopback network, by nobody listening there.
    let result = shell(&f, "bash -c 'echo x > /dev/tcp/127.0.0.1/9'");
    let stderr = result["stderr"].as_str().unwrap();
    assert_ne!(result["exit_code"], 0, "{result}");
    assert!(
        stderr.contains("Operation not permitted") || stderr.contains("Connection refused"),
        "{result}"
    );
    assert_eq!(f.snapshot_outside(), before);
    assert_eq!(
        std::fs::read_to_string(f.root.join("private/key.txt")).unwrap(),
        PRIVATE
    );
}
