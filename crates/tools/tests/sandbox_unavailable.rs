//! When the kernel cannot enforce the shell sandbox, `run_shell` refuses to run the command
//! and says why, instead of running it unsandboxed. The kernel here supports Landlock, so the
//! test re-runs itself in a child process whose seccomp filter makes the Landlock system calls
//! fail with `ENOSYS`, as on a kernel built without Landlock.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

use common::Fixture;
use serde_json::json;
use ybs_tools::ShellPolicy;

const CHILD_ENV: &str = "YBS_TEST_WITHOUT_LANDLOCK";
const DONE: &str = "child checks passed";

#[test]
fn run_shell_refuses_to_run_when_landlock_is_unavailable() {
    if std::env::var_os(CHILD_ENV).is_some() {
        checks_without_landlock();
        println!("{DONE}");
        return;
    }
    let filter: seccompiler::BpfProgram = seccompiler::SeccompFilter::new(
        BTreeMap::from([
            (libc::SYS_landlock_create_ruleset, Vec::new()),
            (libc::SYS_landlock_add_rule, Vec::new()),
            (libc::SYS_landlock_restrict_self, Vec::new()),
        ]),
        seccompiler::SeccompAction::Allow,
        seccompiler::SeccompAction::Errno(libc::ENOSYS as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap()
    .try_into()
    .unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "run_shell_refuses_to_run_when_landlock_is_unavailable",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1");
    // SAFETY: runs between fork and exec; installs a prebuilt filter with two system calls
    // (prctl and seccomp) and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        child.pre_exec(move || {
            seccompiler::apply_filter(&filter)
                .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))
        });
    }
    let output = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(DONE), "{stdout}");
}

fn checks_without_landlock() {
    let f = Fixture::new();
    let marker = f.root.join("ran.txt");
    let message = f.err("run_shell", json!({"command": "touch ran.txt"}));
    assert!(
        message.starts_with(
            "the shell sandbox cannot be enforced on this system: Landlock is not available on this kernel ("
        ),
        "{message}"
    );
    assert!(
        message.ends_with(
            "; the command was NOT run. Use a kernel with Landlock (Linux 5.13+) and seccomp, or disable sandboxing explicitly with --no-sandbox (safety.sandbox_enabled: false)"
        ),
        "{message}"
    );
    assert!(!marker.exists(), "the command ran without the sandbox");
    assert!(ybs_tools::shell::probe(&f.ctx.shell, &f.ctx.sandbox).is_err());

    // The explicit opt-out runs it unsandboxed.
    let open = Fixture::with_policy(ShellPolicy {
        sandbox_enabled: false,
        ..ShellPolicy::default()
    });
    let result = open
        .call("run_shell", json!({"command": "touch ran.txt && echo ok"}))
        .unwrap();
    assert_eq!(result["stdout"], "ok\n");
    assert!(ybs_tools::shell::probe(&open.ctx.shell, &open.ctx.sandbox).is_ok());
}

#[test]
fn probe_passes_where_the_sandbox_is_enforced() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let f = Fixture::new();
    ybs_tools::shell::probe(&f.ctx.shell, &f.ctx.sandbox).unwrap();
}
