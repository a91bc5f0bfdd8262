//! The seccomp filter's architecture checks, the commands' terminal and their cgroups.

use serde_json::json;

use crate::common::Fixture;

fn shell(f: &Fixture, command: &str) -> serde_json::Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 20}),
    )
    .unwrap()
}

/// A system call made through the x32 ABI (number with bit 30 set) is refused by the filter
/// (`EPERM`) instead of reaching a kernel that may implement it (`ENOSYS` here otherwise).
#[test]
fn seccomp_refuses_x32_system_calls() {
    if !cfg!(target_arch = "x86_64") || !std::path::Path::new("/usr/bin/python3").exists() {
        println!("skipped: needs x86_64 and /usr/bin/python3");
        return;
    }
    let f = Fixture::new();
    let result = shell(
        &f,
        "/usr/bin/python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); \
         r = l.syscall(0x40000027); print(\"x32\", r, ctypes.get_errno())'",
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("x32 -1 1\n"), "{result}");
}

/// A command has no controlling terminal: `/dev/tty` cannot be opened, so escape sequences
/// and `stty` cannot reach the user's terminal.
#[test]
fn shell_commands_have_no_controlling_terminal() {
    let f = Fixture::new();
    let result = shell(&f, "printf x > /dev/tty; echo \"tty=$?\"");
    let stdout = result["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("tty=1") || stdout.contains("tty=2"),
        "{result}"
    );
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("No such device or address"),
        "{result}"
    );
}

/// As root, a command's memory limit holds for all its processes together: it runs in a
/// memory cgroup of its own.
#[test]
fn as_root_a_command_gets_a_memory_cgroup() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: only root can make cgroups here");
        return;
    }
    if !std::path::Path::new("/sys/fs/cgroup").is_dir() {
        println!("skipped: no cgroup file system");
        return;
    }
    let f = Fixture::new();
    let result = shell(&f, "cat /proc/self/cgroup");
    let stdout = result["stdout"].as_str().unwrap();
    let memory = stdout
        .lines()
        .find(|line| line.contains(":memory:") || line.starts_with("0::"))
        .unwrap_or("");
    assert!(memory.contains("/ybs-"), "{result}");
}
