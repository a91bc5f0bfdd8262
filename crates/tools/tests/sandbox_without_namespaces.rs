//! Where user namespaces are not allowed (some distributions turn them off), the shell
//! sandbox goes on with Landlock and seccomp alone, and its status names the missing layer.
//! The kernel here allows them, so the test re-runs itself in a child process whose seccomp
//! filter makes `unshare` fail with `EPERM`, as on such a system, and performs the attacks
//! that the fallback must still stop.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

use common::{Fixture, KEY, PRIVATE, SECRET};
use serde_json::json;
use ybs_tools::shell::status::status;

const CHILD_ENV: &str = "YBS_TEST_WITHOUT_NAMESPACES";
const DONE: &str = "fallback checks passed";

#[test]
fn without_namespaces_the_sandbox_degrades_visibly_and_still_holds() {
    if std::env::var_os(CHILD_ENV).is_some() {
        checks();
        println!("{DONE}");
        return;
    }
    let filter: seccompiler::BpfProgram = seccompiler::SeccompFilter::new(
        BTreeMap::from([(libc::SYS_unshare, Vec::new())]),
        seccompiler::SeccompAction::Allow,
        seccompiler::SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap()
    .try_into()
    .unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "without_namespaces_the_sandbox_degrades_visibly_and_still_holds",
            "--nocapture",
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
        output.status.success() && stdout.contains(DONE),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    let banner = status(&f.ctx.shell, &f.ctx.sandbox).banner();
    assert!(
        banner.starts_with("sandbox: partial; user+mount namespaces not applied: "),
        "{banner}"
    );
    assert!(
        banner.contains("Allow unprivileged user namespaces"),
        "{banner}"
    );
    std::fs::create_dir_all(f.root.join(".git/hooks")).unwrap();
    std::fs::write(f.root.join(".git/config"), "[core]\n").unwrap();
    let before = f.snapshot_outside();
    let out = f.outside.display();
    let home = f.home.display();
    let result = shell(
        &f,
        &format!(
            "cat private/key.txt {out}/secret.txt {home}/.ssh/id_rsa; mv private p2; \
             echo evil > .git/hooks/pre-commit; echo evil >> .git/config; \
             chmod 0606 {out}/secret.txt; touch -d 2000-01-01 {out}/secret.txt; \
             cat /etc/shadow; mknod blk b 8 0; echo x > src/made.txt && echo wrote"
        ),
    );
    let text = result.to_string();
    assert!(
        !text.contains(PRIVATE) && !text.contains(SECRET) && !text.contains(KEY),
        "{result}"
    );
    assert_eq!(result["stdout"], "wrote\n", "{result}");
    assert_eq!(f.snapshot_outside(), before, "{result}");
    assert!(!f.root.join("p2").exists() && !f.root.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(f.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    let meta = std::fs::metadata(f.outside.join("secret.txt")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o644,
        "{result}"
    );
}
