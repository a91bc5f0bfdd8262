//! Known escapes and weaknesses, each performed against the tools and the shell:
//! the attempt must fail, nothing outside the root may change and no secret may come back.

#![allow(unsafe_code)]

use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use ybs_tools::shell::status::{SandboxStatus, status};
use ybs_tools::{PathSandbox, ShellLimits, ShellPolicy, ToolContext, ToolRegistry};

use crate::common::{Fixture, SECRET};

fn run(f: &Fixture, command: &str) -> Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 30}),
    )
    .unwrap()
}

fn no_secret(result: &Value, secrets: &[&str]) {
    let text = result.to_string();
    for secret in secrets {
        assert!(!text.contains(secret), "`{secret}` came back: {result}");
    }
}

/// A tool context over `root` with `blocked` paths and `home`.
fn context(root: &Path, blocked: &[&str], home: &Path, policy: ShellPolicy) -> ToolContext {
    let sandbox =
        PathSandbox::with_home([root.to_str().unwrap()], blocked, Some(home.to_path_buf()))
            .unwrap();
    ToolContext::new(sandbox, policy).unwrap()
}

fn call(ctx: &ToolContext, tool: &str, args: Value) -> Result<Value, String> {
    ToolRegistry::new()
        .invoke(tool, &args, ctx)
        .map_err(|e| e.to_string())
}

fn init_git(root: &Path) {
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir_all(root.join(".ybs")).unwrap();
    std::fs::write(root.join(".ybs/session.json"), "{}").unwrap();
}

/// Everything under `dir`: path -> (mode, mtime, contents).
fn tree(dir: &Path) -> Vec<(PathBuf, u32, i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(entry.path()).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.push((entry.path(), meta.mode(), meta.mtime(), bytes));
        }
    }
    out.sort();
    out
}

// 1. `.git` and `.ybs` are read-only.

#[test]
fn file_tools_cannot_write_git_hooks_config_or_ybs() {
    let f = Fixture::new();
    init_git(&f.root);
    let before = tree(&f.root.join(".git"));
    let ybs = tree(&f.root.join(".ybs"));
    for (tool, args) in [
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"}),
        ),
        (
            "write_file",
            json!({"path": "./src/../.git/config", "content": "[core]\nfsmonitor = evil\n"}),
        ),
        (
            "edit_file",
            json!({"path": ".git/HEAD", "old_text": "ref: refs", "new_text": "x"}),
        ),
        (
            "write_file",
            json!({"path": ".ybs/session.json", "content": "x"}),
        ),
        ("write_file", json!({"path": ".ybs/new", "content": "x"})),
    ] {
        let message = f.err(tool, args.clone());
        assert!(
            message.contains("read-only for the tools"),
            "{tool}({args}): {message}"
        );
    }
    assert_eq!(tree(&f.root.join(".git")), before);
    assert_eq!(tree(&f.root.join(".ybs")), ybs);
}

#[test]
fn shell_cannot_write_git_hooks_config_or_ybs() {
    let f = Fixture::new();
    init_git(&f.root);
    let before = tree(&f.root.join(".git"));
    let ybs = tree(&f.root.join(".ybs"));
    let result = run(
        &f,
        "echo 'touch pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         git config core.fsmonitor 'touch pwned'; git config core.hooksPath hooks; \
         mv .git g2; rm -rf .git; echo x > .ybs/session.json; mv .ybs y2; \
         git status --short >/dev/null && echo git-reads",
    );
    assert_eq!(result["stdout"], "git-reads\n", "{result}");
    assert_eq!(tree(&f.root.join(".git")), before, "{result}");
    assert_eq!(tree(&f.root.join(".ybs")), ybs, "{result}");
    assert!(!f.root.join("g2").exists() && !f.root.join("y2").exists());
}

/// `.ybs.json` and `.ybs/` that do not exist yet cannot be created: the file tools refuse
/// them by name, and a command finds them taken (a read-only placeholder for its run), so it
/// fails up front; nothing is left behind, nothing needed removing.
#[test]
fn missing_ybs_configuration_cannot_be_created_by_the_tools_or_a_command() {
    let f = Fixture::new();
    for (tool, args) in [
        ("write_file", json!({"path": ".ybs.json", "content": "{}"})),
        (
            "write_file",
            json!({"path": ".ybs/prompts/p.md", "content": "plant"}),
        ),
    ] {
        let message = f.err(tool, args.clone());
        assert!(
            message.contains("read-only for the tools"),
            "{tool}({args}): {message}"
        );
    }
    let result = run(
        &f,
        "echo '{}' > .ybs.json || echo no-file; mkdir -p .ybs/prompts || echo no-dir; \
         echo p > .ybs/p.md || echo no-inside; rmdir .ybs || echo no-rmdir; \
         mv .ybs.json x || echo no-move; ln -s a.txt .ybs.json || echo no-link; \
         mkdir d && mv d .ybs || echo no-rename-over; ls -A",
    );
    let stdout = result["stdout"].as_str().unwrap();
    for refused in [
        "no-file",
        "no-dir",
        "no-inside",
        "no-rmdir",
        "no-move",
        "no-link",
        "no-rename-over",
    ] {
        assert!(stdout.contains(refused), "{refused}: {result}");
    }
    // Refused while it ran, not removed afterwards.
    let stderr = result["stderr"].as_str().unwrap();
    assert!(!stderr.contains("ybs: this command created"), "{result}");
    assert!(!f.root.join(".ybs.json").exists(), "{result}");
    assert!(!f.root.join(".ybs").exists(), "{result}");
    assert!(!f.root.join("x").exists(), "{result}");
    // The names are free again once it ended; the next command finds them taken again.
    let again = run(&f, "touch .ybs.json || echo refused-again");
    assert!(
        again["stdout"].as_str().unwrap().contains("refused-again"),
        "{again}"
    );
    assert!(!f.root.join(".ybs.json").exists());
}

/// A background job holds the placeholders for as long as it runs: a command that ends
/// meanwhile neither removes them (which would free the names for the job) nor says it made
/// them; when the job is stopped they go.
#[test]
fn a_jobs_placeholders_outlive_the_commands_that_end_before_it() {
    let f = Fixture::new();
    let started = f
        .call(
            "run_shell",
            json!({"command": "touch started; exec sleep 7301", "background": true}),
        )
        .unwrap();
    let job = started["job_id"].as_u64().unwrap();
    let result = run(&f, "until [ -e started ]; do sleep 0.05; done; echo ran");
    assert_eq!(result["stdout"], "ran\n", "{result}");
    let stderr = result["stderr"].as_str().unwrap();
    assert!(!stderr.contains("ybs: this command created"), "{result}");
    assert!(f.root.join(".ybs").is_dir(), "the job's placeholder went");
    let probe = run(&f, "touch .ybs.json || echo still-taken");
    assert!(
        probe["stdout"].as_str().unwrap().contains("still-taken"),
        "{probe}"
    );
    f.call("stop_job", json!({"job_id": job})).unwrap();
    assert!(!f.root.join(".ybs").exists() && !f.root.join(".ybs.json").exists());
}

/// The attack: another ybs session in the same project holds a placeholder for
/// `.ybs.json` when this command starts, so the command finds the name taken and read-only;
/// then that session's command ends and removes its placeholder, which lifts this command's
/// mount of it, and this command plants `.ybs.json`. What it planted is removed when it ends.
#[test]
fn a_name_freed_by_another_session_during_a_command_is_not_kept() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let other = f.root.join(".ybs.json");
    std::fs::create_dir(&other).unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o555)).unwrap();
    let ctx = &f.ctx;
    let registry = &f.registry;
    let result = std::thread::scope(|scope| {
        let command = scope.spawn(|| {
            registry.invoke(
                "run_shell",
                &json!({"command": "touch .ybs.json/x 2>/dev/null || echo taken; \
                        while [ -d .ybs.json ]; do sleep 0.05; done; \
                        echo '{\"safety\": {\"sandbox_enabled\": false}}' > .ybs.json && echo planted",
                        "timeout_seconds": 20}),
                ctx,
            )
        });
        std::thread::sleep(std::time::Duration::from_millis(700));
        // The other session's command ends: its placeholder goes.
        std::fs::remove_dir(&other).unwrap();
        command.join().unwrap().unwrap()
    });
    assert_eq!(result["stdout"], "taken\nplanted\n", "{result}");
    assert!(
        (result["stderr"].as_str().unwrap()).contains("removed"),
        "{result}"
    );
    assert!(
        !other.exists(),
        "the planted configuration was kept: {result}"
    );
}

#[test]
fn a_worktree_git_dir_outside_the_root_is_readable_not_writable() {
    let f = Fixture::new();
    let main = f.outside.join("main");
    std::fs::create_dir_all(&main).unwrap();
    init_git(&main);
    let git = |args: &[&str], dir: &Path| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    std::fs::write(main.join("f.txt"), "x").unwrap();
    git(&["add", "f.txt"], &main);
    git(&["commit", "-qm", "one"], &main);
    let wt = f.root.join("wt");
    git(&["worktree", "add", "-q", wt.to_str().unwrap()], &main);
    let ctx = context(&wt, &[], &f.home, ShellPolicy::default());
    let before = tree(&main.join(".git"));
    let result = call(
        &ctx,
        "run_shell",
        json!({"command": "git status --short && echo read; gd=$(git rev-parse --git-common-dir); echo evil > $gd/hooks/pre-commit; git config core.fsmonitor evil"}),
    )
    .unwrap();
    assert!(
        result["stdout"].as_str().unwrap().contains("read"),
        "{result}"
    );
    assert_eq!(tree(&main.join(".git")), before, "{result}");
    let message = call(
        &ctx,
        "write_file",
        json!({"path": ".git", "content": "gitdir: /tmp/evil"}),
    )
    .unwrap_err();
    assert!(message.contains("read-only for the tools"), "{message}");
}

// 2. Renaming a parent of a blocked directory.

const NESTED: &str = "TOPSECRET-nested";

fn nested_blocked() -> (Fixture, ToolContext) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.root.join("a/b")).unwrap();
    std::fs::write(f.root.join("a/b/key"), NESTED).unwrap();
    std::fs::write(f.root.join("a/open.txt"), "open").unwrap();
    let blocked = f.root.join("a/b");
    let ctx = context(
        &f.root,
        &["~/.ssh", blocked.to_str().unwrap()],
        &f.home,
        ShellPolicy::default(),
    );
    (f, ctx)
}

#[test]
fn shell_cannot_rename_a_parent_of_a_blocked_directory() {
    let (f, ctx) = nested_blocked();
    let shell = |command: &str| {
        call(
            &ctx,
            "run_shell",
            json!({"command": command, "timeout_seconds": 20}),
        )
        .unwrap()
    };
    let result = shell("mv a a2; mv a/b a/c; mv a/b ../b; ln a/b/key k; cp -r a a3; echo done");
    no_secret(&result, &[NESTED]);
    let result = shell("cat a2/b/key a/c/key a/b/key k a3/b/key 2>&1; ls -A a/b");
    no_secret(&result, &[NESTED]);
    assert_eq!(
        std::fs::read_to_string(f.root.join("a/b/key")).unwrap(),
        NESTED
    );
    assert!(!f.root.join("a2").exists());
}

#[test]
fn a_blocked_directory_moved_outside_the_sandbox_is_still_recognised() {
    let (f, ctx) = nested_blocked();
    // Something outside the sandbox (the user) renames the parent after ybs started.
    std::fs::rename(f.root.join("a"), f.root.join("a2")).unwrap();
    let message = call(&ctx, "read_file", json!({"path": "a2/b/key"})).unwrap_err();
    assert!(message.contains("recognised by identity"), "{message}");
    let message = call(
        &ctx,
        "write_file",
        json!({"path": "a2/b/new", "content": "x"}),
    )
    .unwrap_err();
    assert!(message.contains("recognised by identity"), "{message}");
    let listed = call(&ctx, "list_files", json!({"pattern": "**/*"})).unwrap();
    no_secret(&listed, &["a2/b/key"]);
    let found = call(&ctx, "search_files", json!({"pattern": "TOPSECRET"})).unwrap();
    no_secret(&found, &[NESTED]);
    let message = call(&ctx, "run_shell", json!({"command": "cat a2/b/key"})).unwrap_err();
    assert!(
        message.contains("was moved or replaced since ybs started")
            && message.contains("the command was NOT run"),
        "{message}"
    );
    assert!(!f.root.join("a2/b/new").exists());
}

// 3. The rename exchange race against a guarded read is `ybs-fsguard`'s (`tests/race.rs`).

// 4. Metadata outside the root.

#[test]
fn shell_cannot_change_metadata_outside_the_root() {
    let f = Fixture::new();
    let target = f.outside.join("secret.txt");
    let meta = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        let xattr = std::process::Command::new("/usr/bin/python3")
            .args(["-c", "import os,sys; print(os.listxattr(sys.argv[1]))"])
            .arg(p)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        (m.mode(), m.uid(), m.gid(), m.mtime(), m.ctime(), xattr)
    };
    let before_meta = meta(&target);
    let before = f.snapshot_outside();
    let t = target.display();
    let result = run(
        &f,
        &format!(
            "chmod 0606 {t}; chmod g+w {t}; chown $(id -u):$(id -g) {t}; chgrp 0 {t}; \
             touch -d 2000-01-01 {t}; touch -a {t}; \
             /usr/bin/python3 -c \"import os; os.setxattr('{t}', 'user.x', b'1')\"; \
             /usr/bin/python3 -c \"import os; f=os.open('{t}', os.O_RDONLY); os.fchmod(f, 0o777)\"; \
             echo ran"
        ),
    );
    assert_eq!(result["stdout"], "ran\n", "{result}");
    assert_eq!(meta(&target), before_meta, "{result}");
    assert_eq!(f.snapshot_outside(), before);
    // Inside the root, chmod still works.
    let result = run(&f, "touch s.sh && chmod +x s.sh && test -x s.sh && echo ok");
    assert_eq!(result["stdout"], "ok\n", "{result}");
}

// 5. /dev and /proc.

#[test]
fn shell_sees_no_other_process_and_no_foreign_shared_memory() {
    let f = Fixture::new();
    let shm = PathBuf::from(format!("/dev/shm/ybs-test-{}", std::process::id()));
    std::fs::write(&shm, "TOPSECRET-shm").unwrap();
    let mut victim = std::process::Command::new("/bin/sh")
        .args(["-c", "sleep 30", "TOPSECRET-cmdline"])
        .env("VICTIM_ENV", "TOPSECRET-environ")
        .spawn()
        .unwrap();
    let result = run(
        &f,
        &format!(
            "cat {} /dev/shm/* 2>&1; cat /proc/*/cmdline /proc/*/environ 2>&1 | tr '\\0' ' '; \
             cat /proc/{}/cmdline /proc/{}/environ 2>&1; \
             echo procs=$(ls /proc | grep -c '^[0-9]'); echo x > /dev/shm/mine && cat /dev/shm/mine",
            shm.display(),
            victim.id(),
            std::process::id()
        ),
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    let _ = std::fs::remove_file(&shm);
    no_secret(
        &result,
        &["TOPSECRET-shm", "TOPSECRET-cmdline", "TOPSECRET-environ"],
    );
    let stdout = result["stdout"].as_str().unwrap();
    let procs: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("procs="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(procs < 10, "{procs} processes visible: {result}");
    assert!(stdout.ends_with("x\n"), "private /dev/shm: {result}");
}

#[test]
fn shell_gets_only_the_harmless_devices() {
    let f = Fixture::new();
    let result = run(
        &f,
        "for d in /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/vda /dev/sda /dev/nvme0n1 /dev/loop0 /dev/console; do \
           [ -e $d ] && { head -c 1 $d >/dev/null 2>&1 && echo read:$d; echo x 2>/dev/null > $d && echo wrote:$d; }; done; \
         head -c 4 /dev/urandom | wc -c; head -c 4 /dev/zero | wc -c; echo ok > /dev/null && echo null-ok",
    );
    assert_eq!(result["stdout"], "4\n4\nnull-ok\n", "{result}");
}

// 6. Root's capabilities.

#[test]
fn shell_has_no_capabilities_and_no_new_privileges() {
    let f = Fixture::new();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let result = run(
        &f,
        "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; \
         mknod blk b 8 0 && echo mknod-block; mknod chr c 1 1 && echo mknod-char; \
         cat /etc/shadow /etc/gshadow 2>/dev/null | wc -l; hostname evil-host && echo hostname; \
         ls -A /etc/ssh 2>&1 | grep -c key; cat /etc/passwd | grep -c '^root:'",
    );
    let stdout = result["stdout"].as_str().unwrap();
    for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            stdout.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {result}"
        );
    }
    assert!(stdout.contains("NoNewPrivs:\t1"), "{result}");
    assert!(
        !stdout.contains("mknod") && !stdout.contains("hostname"),
        "{result}"
    );
    assert!(
        stdout.ends_with("0\n0\n1\n"),
        "shadow and ssh keys hidden, passwd readable: {result}"
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        hostname
    );
    assert!(!f.root.join("blk").exists() && !f.root.join("chr").exists());
}

// 7. Inherited descriptors.

#[test]
fn shell_does_not_inherit_descriptors_above_stderr() {
    let f = Fixture::new();
    let secret_file = std::fs::File::open(f.outside.join("secret.txt")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let socket = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut accepted, _) = listener.accept().unwrap();
    for fd in [secret_file.as_raw_fd(), socket.as_raw_fd()] {
        // SAFETY: clearing FD_CLOEXEC on a descriptor we own.
        unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    }
    let result = run(
        &f,
        &format!(
            "/bin/bash -c 'cat <&{} 2>&1; echo hello >&{} 2>&1; ls /proc/self/fd | tr \"\\n\" \" \"'",
            secret_file.as_raw_fd(),
            socket.as_raw_fd()
        ),
    );
    for fd in [secret_file.as_raw_fd(), socket.as_raw_fd()] {
        // SAFETY: restoring FD_CLOEXEC on a descriptor we own.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    no_secret(&result, &[SECRET]);
    accepted
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 8];
    assert!(
        std::io::Read::read(&mut accepted, &mut buf).is_err(),
        "the command wrote to an inherited socket"
    );
    // `ls` sees 0-2 and the directory it reads.
    let stdout = result["stdout"].as_str().unwrap();
    assert_eq!(
        stdout.lines().last().map(str::trim),
        Some("0 1 2 3"),
        "{result}"
    );
}

// 8. The environment (the variables are set in a child copy of this test binary).

const ENV_CHILD: &str = "YBS_TEST_ENV_CHILD";
const ENV_SECRETS: [(&str, &str); 10] = [
    ("MYSQL_PWD", "TOPSECRET-1"),
    ("DATABASE_URL", "TOPSECRET-2"),
    ("GH_PAT", "TOPSECRET-3"),
    ("PGPASSWORD", "TOPSECRET-4"),
    ("SMTP_PASS", "TOPSECRET-5"),
    ("LEGACY_PWD", "TOPSECRET-6"),
    ("SENTRY_DSN", "TOPSECRET-7"),
    ("REDIS_URL", "redis://admin:TOPSECRET-8@db/0"),
    ("OPENROUTER_API_KEY", "TOPSECRET-9"),
    ("UNLISTED_HARMLESS", "TOPSECRET-10"),
];

#[test]
fn shell_environment_is_an_allow_list_without_secrets() {
    if std::env::var_os(ENV_CHILD).is_none() {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "escapes::shell_environment_is_an_allow_list_without_secrets",
                "--nocapture",
            ])
            .env(ENV_CHILD, "1")
            .envs(ENV_SECRETS)
            .env("MY_TOOL_HOME", "/opt/tool")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("env checks passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        return;
    }
    let f = Fixture::with_policy(ShellPolicy {
        env: vec!["MY_TOOL_*".into(), "REDIS_URL".into()],
        ..ShellPolicy::default()
    });
    let result = run(&f, "env");
    let stdout = result["stdout"].as_str().unwrap();
    for (name, value) in ENV_SECRETS {
        if name == "REDIS_URL" {
            // Named exactly in safety.shell_env: the user chose to pass it.
            assert!(stdout.contains(value), "{stdout}");
            continue;
        }
        assert!(!stdout.contains(value), "{name} leaked: {stdout}");
    }
    assert!(stdout.contains("MY_TOOL_HOME=/opt/tool"), "{stdout}");
    assert!(stdout.contains("PATH="), "{stdout}");
    println!("env checks passed");
}

// 9. Limits.

#[test]
fn shell_commands_run_under_resource_limits() {
    let f = Fixture::with_policy(ShellPolicy {
        limits: ShellLimits {
            max_processes: Some(40),
            max_memory_bytes: Some(256 * 1024 * 1024),
            max_file_bytes: Some(1024 * 1024),
            max_core_bytes: Some(0),
        },
        ..ShellPolicy::default()
    });
    let result = run(
        &f,
        "grep -E '^Max (processes|address space|file size|core file size)' /proc/self/limits | sed 's/  */ /g; s/^Max //; s/ size//; s/ file//; s/ space//' | cut -d' ' -f2 | tr '\\n' ' '; echo; \
         dd if=/dev/zero of=/dev/null bs=512M count=1 2>&1 | head -1; \
         head -c 3M /dev/zero > big; ls -l big | awk '{print \"big=\" $5}'; \
         (i=0; while [ $i -lt 300 ]; do sleep 2 & i=$((i+1)); echo $i > $TMPDIR/n; done) 2>/dev/null; \
         read n < $TMPDIR/n; echo started=$n",
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("1048576 0 40 268435456 \n"), "{result}");
    let started: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("started="))
        .unwrap_or_else(|| panic!("{result}"))
        .parse()
        .unwrap();
    let got = status(&f.ctx.shell, &f.ctx.sandbox);
    let SandboxStatus::Layers(layers) = &got else {
        panic!("{got:?}");
    };
    let applied = layers
        .iter()
        .any(|l| l.name == "process limit" && l.applied);
    if !applied {
        // As root without a writable pids cgroup (the kernel exempts uid 0 from
        // RLIMIT_NPROC): the status says so; the battery's unprivileged half checks the limit.
        assert!(rustix::process::geteuid().is_root());
        assert!(
            got.banner().contains("process limit not applied"),
            "{}",
            got.banner()
        );
    } else {
        // At most 40 processes at once: the 300 background starts stopped before 40.
        assert!(started < 40, "{started} started: {result}");
    }
    assert!(stdout.contains("memory exhausted"), "{result}");
    assert!(stdout.contains("big=1048576"), "{result}");
}

// 10. Credentials of the toolchains, with the project root containing the home directory.

#[test]
fn toolchain_credentials_are_blocked_by_default() {
    let f = Fixture::new();
    let home = f.root.join("home");
    let files = [
        ".cargo/config.toml",
        ".cargo/credentials.toml",
        ".npmrc",
        ".pip/pip.conf",
        ".config/pip/pip.conf",
        ".netrc",
        ".docker/config.json",
        ".kube/config",
        ".gnupg/private-keys-v1.d/k.key",
        ".config/gh/hosts.yml",
        ".git-credentials",
        ".pypirc",
    ];
    for (i, name) in files.iter().enumerate() {
        let path = home.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("TOPSECRET-cred-{i}")).unwrap();
    }
    std::fs::write(home.join("notes.txt"), "mine").unwrap();
    let ctx = context(&f.root, &[], &home, ShellPolicy::default());
    let before = tree(&home);
    for name in files {
        let message = call(&ctx, "read_file", json!({"path": format!("home/{name}")})).unwrap_err();
        assert!(message.contains("blocked path"), "{name}: {message}");
    }
    let result = call(
        &ctx,
        "run_shell",
        json!({"command": "cd home && cat .cargo/config.toml .cargo/credentials.toml .npmrc .pip/pip.conf .config/pip/pip.conf .netrc .docker/config.json .kube/config .gnupg/private-keys-v1.d/k.key .config/gh/hosts.yml .git-credentials .pypirc; grep -r TOPSECRET . ; cat notes.txt"}),
    )
    .unwrap();
    assert!(
        result["stdout"].as_str().unwrap().ends_with("mine"),
        "{result}"
    );
    no_secret(&result, &["TOPSECRET-cred"]);
    let found = call(&ctx, "search_files", json!({"pattern": "TOPSECRET-cred"})).unwrap();
    assert_eq!(found["total_matches"], 0, "{found}");
    assert_eq!(tree(&home), before);
}

// 11. Blocked paths look empty, also to stat.

#[test]
fn blocked_paths_look_empty_even_to_stat() {
    let f = Fixture::new();
    let home = f.home.display();
    let result = run(
        &f,
        &format!(
            "stat -c %s private/key.txt {home}/.ssh/id_rsa 2>&1; test -e private/key.txt && echo exists; \
             test -e {home}/.ssh/id_rsa && echo exists; ls -A private {home}/.ssh; echo end"
        ),
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(!stdout.contains("exists"), "{result}");
    assert!(
        stdout
            .lines()
            .all(|l| !l.contains("id_rsa") && !l.contains("key.txt") || l.contains("No such file")),
        "{result}"
    );
    assert!(stdout.ends_with("end\n"), "{result}");
}

// The banner.

#[test]
fn status_says_on_only_when_every_layer_applies() {
    let f = Fixture::new();
    let got = status(&f.ctx.shell, &f.ctx.sandbox);
    let SandboxStatus::Layers(layers) = &got else {
        panic!("{got:?}");
    };
    let banner = got.banner();
    if got.fully_on() {
        assert!(banner.starts_with("sandbox: on ("), "{banner}");
    } else {
        let missing = layers.iter().find(|l| !l.applied).unwrap();
        assert!(banner.starts_with("sandbox: partial; "), "{banner}");
        assert!(banner.contains(missing.name), "{banner}");
    }
    println!("{banner}");
    let off = ShellPolicy {
        sandbox_enabled: false,
        ..ShellPolicy::default()
    };
    assert!(
        status(&off, &f.ctx.sandbox)
            .banner()
            .starts_with("sandbox: off")
    );
    let _ = std::fs::Permissions::from_mode(0o644);
}
