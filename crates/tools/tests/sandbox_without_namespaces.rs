//! Where user namespaces are not allowed (some distributions turn them off), the shell
//! sandbox goes on with Landlock and seccomp alone, and its status names the missing layer;
//! where a command cannot join another namespace (`setns`), it gets an empty network of its
//! own instead of the session's loopback network. The kernel here allows both, so each test
//! re-runs itself in a child process whose seccomp filter makes the call fail with `EPERM`,
//! as on such a system, and performs the attacks that the fallback must still stop.

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
    rerun_refusing(
        libc::SYS_unshare,
        "without_namespaces_the_sandbox_degrades_visibly_and_still_holds",
    );
}

/// Where a command cannot join the session's loopback network (`setns` refused), each gets
/// an empty network of its own: a server one starts does not answer the next, listening
/// stays refused, and `/status` says why.
#[test]
fn without_the_loopback_network_each_command_has_an_empty_one() {
    if std::env::var_os(CHILD_ENV).is_some() {
        loopback_checks();
        println!("{DONE}");
        return;
    }
    rerun_refusing(
        libc::SYS_setns,
        "without_the_loopback_network_each_command_has_an_empty_one",
    );
}

/// Runs `test` again in a child process whose seccomp filter refuses `syscall` with
/// `EPERM`, and checks that its checks passed.
fn rerun_refusing(syscall: i64, test: &str) {
    let filter: seccompiler::BpfProgram = seccompiler::SeccompFilter::new(
        BTreeMap::from([(syscall, Vec::new())]),
        seccompiler::SeccompAction::Allow,
        seccompiler::SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap()
    .try_into()
    .unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", test, "--nocapture"])
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

fn loopback_checks() {
    let f = Fixture::new();
    let said = ybs_tools::shell::status::local_servers();
    assert!(
        said.starts_with("each command has a network of its own"),
        "{said}"
    );
    // The full sandbox otherwise: the network namespace is still there.
    assert!(status(&f.ctx.shell, &f.ctx.sandbox).fully_on() || !cfg!(target_os = "linux"));
    let started = f
        .call(
            "run_shell",
            json!({"command": "exec python3 -m http.server 18931 --bind 127.0.0.1", "background": true}),
        )
        .unwrap();
    let job = started["job_id"].as_u64().unwrap();
    let result = shell(
        &f,
        "sleep 1; python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:18931/\")' 2>&1 | tail -1; \
         perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         bind($s, pack_sockaddr_in(0, inet_aton(\"127.0.0.1\"))) or die \"bind: $!\\n\"; print \"bound\\n\"'",
    );
    let text = result.to_string();
    assert!(text.contains("not permitted"), "{result}");
    assert!(!text.contains("bound\\n"), "{result}");
    let read = f.call("read_job_output", json!({"job_id": job})).unwrap();
    assert!(
        read["output"].as_str().unwrap().contains("PermissionError"),
        "{read}"
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
