//! The security battery: escape attempts against the path sandbox, the file tools and the
//! shell sandbox. Each asserts that the attempt was refused (with the exact reason) and that
//! nothing outside the root changed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "security/escapes.rs"]
mod escapes;
#[path = "security/limits.rs"]
mod limits;
#[path = "security/loopback.rs"]
mod loopback;
#[path = "security/network.rs"]
mod network;
#[path = "security/network_grant.rs"]
mod network_grant;

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::symlink;
use std::time::Duration;

use common::{Fixture, KEY, PRIVATE, SECRET};
use serde_json::{Value, json};
use ybs_fsguard::SafeFsError;
use ybs_fsguard::guarded;

const OUTSIDE: &str = "which is outside the allowed directories";
const BLOCKED: &str = "which is inside the blocked path";
const NUL: &str = "contains a NUL byte";
const TOO_LONG: &str = "path is too long";
const LOOP: &str = "too many levels of symbolic links";
const HARD_LINK: &str = "hard links; files with more than one link are refused";

/// Symlinks and hard links planted in the root before the attempts.
fn plant_links(f: &Fixture) {
    let r = &f.root;
    symlink(f.outside.join("secret.txt"), r.join("link_abs")).unwrap();
    symlink("../outside/secret.txt", r.join("link_rel")).unwrap();
    symlink(&f.outside, r.join("linkdir")).unwrap();
    symlink(f.outside.join("created.txt"), r.join("dangling")).unwrap();
    symlink("chain2", r.join("chain1")).unwrap();
    symlink("linkdir/secret.txt", r.join("chain2")).unwrap();
    symlink("loop2", r.join("loop1")).unwrap();
    symlink("loop1", r.join("loop2")).unwrap();
    symlink("private/key.txt", r.join("plink")).unwrap();
    symlink("/etc", r.join("etc")).unwrap();
    std::fs::create_dir(r.join("sub")).unwrap();
    symlink("..", r.join("sub/up")).unwrap();
    std::fs::write(f.outside.join("hl_source.txt"), SECRET).unwrap();
    std::fs::hard_link(f.outside.join("hl_source.txt"), r.join("hardlink.txt")).unwrap();
}

fn attempts(f: &Fixture) -> Vec<(&'static str, Value, &'static str)> {
    let out = f.outside.display().to_string();
    let home = f.home.display().to_string();
    vec![
        // Traversal.
        (
            "read_file",
            json!({"path": "../outside/secret.txt"}),
            OUTSIDE,
        ),
        (
            "read_file",
            json!({"path": "../../../../../../etc/passwd"}),
            OUTSIDE,
        ),
        (
            "read_file",
            json!({"path": "src/../../outside/secret.txt"}),
            OUTSIDE,
        ),
        (
            "read_file",
            json!({"path": "./././../outside/secret.txt"}),
            OUTSIDE,
        ),
        (
            "read_file",
            json!({"path": "nonexistent/../../outside/secret.txt"}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": "../outside/new.txt", "content": "x"}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": "new/../../outside/new.txt", "content": "x"}),
            OUTSIDE,
        ),
        (
            "edit_file",
            json!({"path": "../outside/secret.txt", "old_text": "TOP", "new_text": "x"}),
            OUTSIDE,
        ),
        (
            "list_files",
            json!({"pattern": "**/*", "path": ".."}),
            OUTSIDE,
        ),
        (
            "search_files",
            json!({"pattern": "TOPSECRET", "path": "../outside"}),
            OUTSIDE,
        ),
        (
            "run_shell",
            json!({"command": "pwd", "working_directory": ".."}),
            OUTSIDE,
        ),
        // Absolute paths.
        ("read_file", json!({"path": "/etc/passwd"}), OUTSIDE),
        (
            "read_file",
            json!({"path": format!("{out}/secret.txt")}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": format!("{out}/abs.txt"), "content": "x"}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": "/tmp/ybs-escape.txt", "content": "x"}),
            OUTSIDE,
        ),
        ("list_files", json!({"pattern": "*", "path": "/"}), OUTSIDE),
        (
            "search_files",
            json!({"pattern": "root", "path": "/etc"}),
            OUTSIDE,
        ),
        (
            "run_shell",
            json!({"command": "pwd", "working_directory": "/"}),
            OUTSIDE,
        ),
        // Symlinks to outside, in the target and in a parent.
        ("read_file", json!({"path": "link_abs"}), OUTSIDE),
        ("read_file", json!({"path": "link_rel"}), OUTSIDE),
        (
            "write_file",
            json!({"path": "link_abs", "content": "x"}),
            OUTSIDE,
        ),
        (
            "edit_file",
            json!({"path": "link_rel", "old_text": "TOP", "new_text": "x"}),
            OUTSIDE,
        ),
        ("read_file", json!({"path": "linkdir/secret.txt"}), OUTSIDE),
        (
            "write_file",
            json!({"path": "linkdir/new.txt", "content": "x"}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": "linkdir/deep/new.txt", "content": "x"}),
            OUTSIDE,
        ),
        (
            "write_file",
            json!({"path": "dangling", "content": "x"}),
            OUTSIDE,
        ),
        ("read_file", json!({"path": "chain1"}), OUTSIDE),
        (
            "read_file",
            json!({"path": "sub/up/../outside/secret.txt"}),
            OUTSIDE,
        ),
        ("read_file", json!({"path": "etc/passwd"}), OUTSIDE),
        (
            "list_files",
            json!({"pattern": "*", "path": "linkdir"}),
            OUTSIDE,
        ),
        (
            "search_files",
            json!({"pattern": "TOPSECRET", "path": "linkdir"}),
            OUTSIDE,
        ),
        (
            "run_shell",
            json!({"command": "pwd", "working_directory": "linkdir"}),
            OUTSIDE,
        ),
        ("read_file", json!({"path": "loop1"}), LOOP),
        // Blocked paths inside the allowed root.
        ("read_file", json!({"path": "private/key.txt"}), BLOCKED),
        (
            "read_file",
            json!({"path": "src/../private/key.txt"}),
            BLOCKED,
        ),
        ("read_file", json!({"path": "plink"}), BLOCKED),
        (
            "write_file",
            json!({"path": "private/new.txt", "content": "x"}),
            BLOCKED,
        ),
        (
            "edit_file",
            json!({"path": "private/key.txt", "old_text": "TOP", "new_text": "x"}),
            BLOCKED,
        ),
        (
            "list_files",
            json!({"pattern": "*", "path": "private"}),
            BLOCKED,
        ),
        (
            "search_files",
            json!({"pattern": "TOPSECRET", "path": "private"}),
            BLOCKED,
        ),
        (
            "run_shell",
            json!({"command": "ls", "working_directory": "private"}),
            BLOCKED,
        ),
        // `~` tricks.
        ("read_file", json!({"path": "~/.ssh/id_rsa"}), BLOCKED),
        (
            "read_file",
            json!({"path": format!("{home}/.ssh/id_rsa")}),
            BLOCKED,
        ),
        (
            "read_file",
            json!({"path": "~/.ssh/../.ssh/id_rsa"}),
            BLOCKED,
        ),
        ("read_file", json!({"path": "~"}), OUTSIDE),
        (
            "write_file",
            json!({"path": "~/evil.txt", "content": "x"}),
            OUTSIDE,
        ),
        (
            "read_file",
            json!({"path": "~/../outside/secret.txt"}),
            OUTSIDE,
        ),
        // NUL bytes.
        (
            "read_file",
            json!({"path": "a.txt\u{0}../../outside/secret.txt"}),
            NUL,
        ),
        (
            "write_file",
            json!({"path": "x\u{0}y", "content": "x"}),
            NUL,
        ),
        (
            "list_files",
            json!({"pattern": "*", "path": "src\u{0}"}),
            NUL,
        ),
        ("run_shell", json!({"command": "cat a.txt\u{0}"}), NUL),
        // Very long paths.
        ("read_file", json!({"path": "a/".repeat(3000)}), TOO_LONG),
        (
            "write_file",
            json!({"path": format!("{}x", "../".repeat(2000)), "content": "x"}),
            TOO_LONG,
        ),
        (
            "write_file",
            json!({"path": "n".repeat(300), "content": "x"}),
            "File name too long",
        ),
        // Hard links to a file outside the root.
        ("read_file", json!({"path": "hardlink.txt"}), HARD_LINK),
        (
            "edit_file",
            json!({"path": "hardlink.txt", "old_text": "TOP", "new_text": "x"}),
            HARD_LINK,
        ),
        // Blocked commands.
        (
            "run_shell",
            json!({"command": "sudo cat /etc/shadow"}),
            "matches the blocked command `sudo`",
        ),
        (
            "run_shell",
            json!({"command": "cd / && rm -fr /"}),
            "matches the blocked command `rm -rf /`",
        ),
    ]
}

#[test]
fn every_file_escape_attempt_is_refused_and_nothing_outside_changes() {
    let f = Fixture::new();
    plant_links(&f);
    let before = f.snapshot_outside();
    let attempts = attempts(&f);
    assert!(
        attempts.len() >= 40,
        "the battery has {} attempts",
        attempts.len()
    );
    for (tool, args, expected) in attempts {
        let message = f.err(tool, args.clone());
        assert!(
            message.contains(expected),
            "{tool}({args}): expected `{expected}` in `{message}`"
        );
        assert!(!message.contains(SECRET) && !message.contains(KEY) && !message.contains(PRIVATE));
        assert_eq!(
            f.snapshot_outside(),
            before,
            "{tool}({args}) changed something outside the root"
        );
    }
    assert!(!f.outside.join("created.txt").exists());
}

#[test]
fn walking_tools_do_not_follow_symlinks_or_enter_blocked_paths() {
    let f = Fixture::new();
    plant_links(&f);
    let before = f.snapshot_outside();
    let listed = f
        .call(
            "list_files",
            json!({"pattern": "**/*", "max_results": 1000}),
        )
        .unwrap();
    let files: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.txt", "hardlink.txt", "src/lib.rs"]);
    let found = f
        .call("search_files", json!({"pattern": "TOPSECRET"}))
        .unwrap();
    assert_eq!(found["total_matches"], 0, "{found}");
    assert_eq!(f.snapshot_outside(), before);
}

#[test]
fn writing_over_a_hard_link_replaces_the_link_not_the_outside_file() {
    let f = Fixture::new();
    plant_links(&f);
    let before = f.snapshot_outside();
    let result = f
        .call(
            "write_file",
            json!({"path": "hardlink.txt", "content": "new"}),
        )
        .unwrap();
    assert_eq!(result, json!({"success": true, "bytes_written": 3}));
    assert_eq!(
        std::fs::read_to_string(f.root.join("hardlink.txt")).unwrap(),
        "new"
    );
    assert_eq!(f.snapshot_outside(), before);
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_check_is_not_followed_on_write() {
    let f = Fixture::new();
    std::fs::create_dir(f.root.join("d")).unwrap();
    let resolved = f.ctx.resolve("d/new.txt").unwrap();
    let before = f.snapshot_outside();
    std::fs::remove_dir(f.root.join("d")).unwrap();
    symlink(&f.outside, f.root.join("d")).unwrap();
    let err = guarded::write_atomic(&f.ctx.sandbox, &resolved, b"x").unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
    assert!(
        err.to_string()
            .contains("changed into a symbolic link after it was checked")
    );
    assert_eq!(f.snapshot_outside(), before);
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_check_is_not_followed_on_read() {
    let f = Fixture::new();
    std::fs::create_dir(f.root.join("d")).unwrap();
    std::fs::write(f.root.join("d/secret.txt"), "mine").unwrap();
    let resolved = f.ctx.resolve("d/secret.txt").unwrap();
    std::fs::remove_dir_all(f.root.join("d")).unwrap();
    symlink(&f.outside, f.root.join("d")).unwrap();
    let err = guarded::read(&f.ctx.sandbox, &resolved).unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
}

#[test]
fn a_file_swapped_for_a_symlink_after_the_check_is_not_followed_on_read_or_write() {
    let f = Fixture::new();
    let resolved = f.ctx.resolve("a.txt").unwrap();
    let before = f.snapshot_outside();
    std::fs::remove_file(f.root.join("a.txt")).unwrap();
    symlink(f.outside.join("secret.txt"), f.root.join("a.txt")).unwrap();
    let err = guarded::read(&f.ctx.sandbox, &resolved).unwrap_err();
    assert!(matches!(err, SafeFsError::SymlinkRace(_)), "{err}");
    // The write replaces the swapped-in link itself; the outside file is untouched.
    guarded::write_atomic(&f.ctx.sandbox, &resolved, b"mine").unwrap();
    assert!(
        !std::fs::symlink_metadata(f.root.join("a.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(f.snapshot_outside(), before);
}

fn shell(f: &Fixture, command: &str) -> Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 20}),
    )
    .unwrap()
}

#[test]
fn shell_cannot_write_outside_the_root() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let out = f.outside.display();
    for command in [
        "echo x > ../outside/shell.txt".to_string(),
        format!("touch {out}/abs.txt"),
        format!("rm -f {out}/secret.txt"),
        format!("mkdir {out}/newdir"),
        format!("ln -s /etc {out}/link"),
        "echo x > /tmp/ybs-shell-escape.txt".to_string(),
    ] {
        let result = shell(&f, &command);
        assert_ne!(result["exit_code"], 0, "{command}: {result}");
        let stderr = result["stderr"].as_str().unwrap();
        assert!(
            stderr.contains("Permission denied") || stderr.contains("Read-only file system"),
            "{command}: {result}"
        );
        assert_eq!(f.snapshot_outside(), before, "{command}");
    }
    assert!(!std::path::Path::new("/tmp/ybs-shell-escape.txt").exists());
}

#[test]
fn shell_cannot_read_outside_the_root_or_blocked_paths() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let out = f.outside.display();
    let home = f.home.display();
    for command in [
        format!("cat {out}/secret.txt"),
        "cat ../outside/secret.txt".to_string(),
        format!("cat {home}/.ssh/id_rsa"),
        "cat private/key.txt".to_string(),
        "ln -s ../outside/secret.txt sl; cat sl".to_string(),
        "ln ../outside/secret.txt hl; cat hl".to_string(),
    ] {
        let result = shell(&f, &command);
        let text = result.to_string();
        assert!(
            !text.contains(SECRET) && !text.contains(KEY) && !text.contains(PRIVATE),
            "{command}: {result}"
        );
        assert!(
            [
                "Permission denied",
                "Invalid cross-device link",
                "No such file or directory"
            ]
            .iter()
            .any(|reason| result["stderr"].as_str().unwrap().contains(reason)),
            "{command}: {result}"
        );
    }
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_cannot_write_into_a_blocked_path_inside_the_root() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    // The blocked directory is hidden behind an empty read-only mount in the command's own
    // mount namespace: it looks empty, cannot be written, and cannot be unmounted.
    let result = shell(&f, "ls -A private; echo x > private/new.txt");
    assert_eq!(result["stdout"], "", "{result}");
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{result}"
    );
    let result = shell(&f, "umount private; umount -l private; cat private/key.txt");
    assert!(!result.to_string().contains(PRIVATE), "{result}");
    assert!(!f.root.join("private/new.txt").exists());
    // Nothing leaked into our mount namespace, and the real directory is intact.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(f.root.to_str().unwrap()), "{mounts}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("private/key.txt")).unwrap(),
        PRIVATE
    );
    // The rest of the root stays writable, including its top level.
    let result = shell(&f, "echo x > src/new.txt && mkdir top && cat src/new.txt");
    assert_eq!(result["stdout"], "x\n", "{result}");
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_cannot_read_a_blocked_file_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join(".env"), PRIVATE).unwrap();
    let sandbox = ybs_tools::PathSandbox::with_home(
        [root.to_str().unwrap()],
        [root.join(".env").to_str().unwrap()],
        None,
    )
    .unwrap();
    let ctx = ybs_tools::ToolContext::new(sandbox, ybs_tools::ShellPolicy::default()).unwrap();
    let registry = ybs_tools::ToolRegistry::new();
    let result = registry
        .invoke(
            "run_shell",
            &json!({"command": "cat .env; echo x > .env; echo ok > other && cat other"}),
            &ctx,
        )
        .unwrap();
    assert!(!result.to_string().contains(PRIVATE), "{result}");
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("cat: .env: Permission denied"),
        "{result}"
    );
    assert_eq!(result["stdout"], "ok\n", "{result}");
    assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), PRIVATE);
}

#[test]
fn shell_cannot_connect_to_a_tcp_listener_on_localhost() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let result = shell(
        &f,
        &format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'"),
    );
    // Refused by seccomp, or, in the session's loopback network, by nobody listening there.
    assert_ne!(result["exit_code"], 0, "{result}");
    let stderr = result["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("Operation not permitted") || stderr.contains("Connection refused"),
        "{result}"
    );
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "the sandboxed shell reached the listener"
    );
    // The same command without the sandbox does connect, so the refusal above is the sandbox.
    let open = Fixture::with_policy(ybs_tools::ShellPolicy {
        sandbox_enabled: false,
        ..Default::default()
    });
    let result = shell(
        &open,
        &format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'"),
    );
    assert_eq!(result["exit_code"], 0, "{result}");
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello\n");
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_cannot_send_udp() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let result = shell(
        &f,
        &format!("bash -c 'echo hello > /dev/udp/127.0.0.1/{port}'"),
    );
    // In the session's loopback network the send itself may succeed: to nobody there.
    assert!(result["exit_code"].is_number(), "{result}");
    socket
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(
        socket.recv(&mut buf).is_err(),
        "the sandboxed shell sent a datagram"
    );
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_children_do_not_outlive_the_timeout() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let result = f
        .call(
            "run_shell",
            json!({"command": "(sleep 4; echo late > late.txt) & (setsid sh -c 'sleep 4; echo late > setsid.txt' &) ; sleep 100", "timeout_seconds": 1}),
        )
        .unwrap();
    assert_eq!(result["timed_out"], true, "{result}");
    assert_eq!(result["exit_code"], 137, "{result}");
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("[timed out after 1 s; the command and its child processes were killed]")
    );
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        !f.root.join("late.txt").exists(),
        "a background child outlived the timeout"
    );
    assert!(
        !f.root.join("setsid.txt").exists(),
        "a setsid child outlived the timeout"
    );
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_background_children_are_killed_when_the_command_exits() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let result = shell(&f, "(sleep 4; echo late > late.txt) & echo started");
    assert_eq!(result["stdout"], "started\n");
    assert_eq!(result["timed_out"], false);
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        !f.root.join("late.txt").exists(),
        "a background child outlived the command"
    );
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
}

#[test]
fn shell_environment_has_no_secrets_and_a_private_home() {
    let f = Fixture::new();
    let result = f
        .call(
            "run_shell",
            json!({"command": "env; echo HOME=$HOME; ls -A $HOME | wc -l"}),
        )
        .unwrap();
    let stdout = result["stdout"].as_str().unwrap();
    for line in stdout.lines() {
        let name = line.split('=').next().unwrap().to_uppercase();
        assert!(
            !name.contains("KEY") && !name.contains("TOKEN") && !name.contains("SECRET"),
            "{line}"
        );
    }
    assert!(
        stdout.contains("HOME=/tmp/ybs-shell-") || stdout.contains("/ybs-shell-"),
        "{stdout}"
    );
}

#[test]
fn shell_cannot_signal_processes_outside_the_sandbox() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let mut victim = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let result = shell(&f, &format!("kill -9 {}", victim.id()));
    assert_ne!(result["exit_code"], 0, "{result}");
    // Landlock's scope refuses the signal; in a PID namespace the process is not even there.
    let stderr = result["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("Operation not permitted") || stderr.contains("No such process"),
        "{result}"
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the sandboxed shell killed a process outside"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert_eq!(f.snapshot_outside(), before);
}

#[test]
fn shell_cannot_truncate_files_outside_the_root() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let out = f.outside.display();
    let result = shell(
        &f,
        &format!("truncate -s 0 {out}/secret.txt; : > {out}/secret.txt"),
    );
    assert_ne!(result["exit_code"], 0, "{result}");
    assert_eq!(f.snapshot_outside(), before);
}

const NOBODY_CHILD: &str = "YBS_TEST_SECURITY_AS_NOBODY";
const NOBODY: u32 = 65534;

/// The whole battery again as an unprivileged user: when the tests run as root, this test
/// copies the test binary to a world-readable place and re-runs every other test as `nobody`.
#[test]
fn the_battery_holds_for_an_unprivileged_user_too() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if std::env::var_os(NOBODY_CHILD).is_some() {
        return;
    }
    if !rustix::process::geteuid().is_root() {
        println!(
            "skipped: the tests already run unprivileged (uid {}), so this run is the unprivileged half; run them as root for the root half",
            rustix::process::geteuid().as_raw()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("security-battery");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = std::process::Command::new(&exe)
        .args([
            "--skip",
            "the_battery_holds_for_an_unprivileged_user_too",
            "--test-threads=4",
        ])
        .env(NOBODY_CHILD, "1")
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
        "as nobody:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("test result: ok"), "{stdout}");
    assert!(!stdout.contains(" 0 passed"), "{stdout}");
    println!(
        "as nobody: {}",
        stdout
            .lines()
            .rev()
            .find(|l| l.contains("test result"))
            .unwrap_or("")
    );
}
