//! Running shell commands for `run_shell`: blocked commands refused first, then `/bin/sh -c`
//! in its own process group with a timeout, sandboxed unless the user opted out.
//!
//! The policy ([`ShellPolicy`]) and the errors ([`ShellError`]) sit below everything here;
//! this module runs a command through the layers.
//!
//! On Linux the sandbox is layered (`linux`): user, mount and PID namespaces
//! (`namespaces`, what the kernel allows of them probed once by `support`), resource limits, no inherited descriptors, no capabilities, Landlock and
//! seccomp (`seccomp`), all applied by the child to itself (`child`). On macOS it is
//! `sandbox-exec` (`macos`, untested). When the sandbox is enabled but Landlock or seccomp
//! cannot be enforced, the command is not run and the error says so; it never silently runs
//! unsandboxed. A layer that is only a hardening (the namespaces) degrades to Landlock and
//! seccomp alone, and [`status`] says so, for the banner. The repository's `SECURITY.md` has
//! the threat model.
//!
//! Every command gets a private temp dir (`TMPDIR`, removed afterwards) and an environment
//! from an allow-list without anything that looks like a secret ([`env`](mod@env)). Sandboxed, its
//! `HOME` is that temp dir. Unsandboxed (`--no-sandbox`), a command can still leave its
//! process group with `setsid` and outlive the timeout; sandboxed it cannot.

pub mod blocked;
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod child;
pub mod env;
mod error;
mod kept;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod loopback;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "linux")]
mod namespaces;
mod policy;
pub mod program;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod status;
#[cfg(target_os = "linux")]
mod support;
#[cfg(target_os = "linux")]
mod user_maps;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::cancel::CancelFlag;
use crate::path_sandbox::PathSandbox;
use crate::process::{self, ProcessOutput};

pub use blocked::find_blocked;
pub use error::{ShellError, ShellSandboxError};
pub use policy::{ShellLimits, ShellPolicy};

/// Runs `command` with `sh -c` in `working_dir` (already checked by the sandbox).
pub fn run(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    working_dir: &Path,
    timeout: Duration,
) -> Result<ProcessOutput, ShellError> {
    run_cancellable(
        policy,
        sandbox,
        command,
        working_dir,
        timeout,
        &CancelFlag::new(),
    )
}

/// [`run`], killing the command's process group as soon as `cancel` is set (the output then
/// has `cancelled` set).
pub fn run_cancellable(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    working_dir: &Path,
    timeout: Duration,
    cancel: &CancelFlag,
) -> Result<ProcessOutput, ShellError> {
    let mut attempt = 1;
    loop {
        let Prepared {
            command: process,
            held,
        } = prepare(policy, sandbox, command, working_dir)?;
        let result = process::run_cancellable(process, timeout, policy.output_cap_bytes, cancel);
        let note = held.finish();
        return match result {
            Ok(mut output) => {
                if let Some(note) = note {
                    output.stderr.push_str(&note);
                }
                Ok(output)
            }
            Err(source) if attempt < SETUP_ATTEMPTS && set_up_again(&source) => {
                attempt += 1;
                continue;
            }
            Err(source) => Err(spawn_error(policy, source)),
        };
    }
}

/// How many times a command is set up before its start counts as failed (see
/// [`set_up_again`]).
pub(crate) const SETUP_ATTEMPTS: u32 = 5;

/// Whether a command that could not start (it never ran) is worth setting up again: a path
/// of its plan vanished before its mounts were made. Another ybs in the same project removes
/// its placeholder for ybs's names when its command ends; a new plan sees that.
pub(crate) fn set_up_again(error: &std::io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        child::vanished_before_mounts(error)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = error;
        false
    }
}

/// A command set up to run in the sandbox, not started yet.
pub(crate) struct Prepared {
    /// The command, in its own process group, its environment filtered.
    pub(crate) command: Command,
    /// What must live until it ends.
    pub(crate) held: Held,
}

/// What a command holds until it ends: its private temp dir, the placeholders of the kept
/// names, its cgroups.
pub(crate) struct Held {
    /// The kept names that did not exist before it ran ([`Held::finish`] removes them if
    /// the command made them).
    absent: Vec<PathBuf>,
    /// The kept names that held another ybs process's placeholder ([`Held::finish`] removes
    /// what replaced it).
    foreign: Vec<PathBuf>,
    placeholders: Option<kept::Placeholders>,
    _temp: tempfile::TempDir,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

impl Held {
    /// Releases what the command held once it has ended; the note for its output when it
    /// created one of the kept names.
    pub(crate) fn finish(mut self) -> Option<String> {
        drop(self.placeholders.take());
        let notes = [
            kept::remove_created(&self.absent),
            kept::remove_replaced(&self.foreign),
        ];
        let notes: Vec<String> = notes.into_iter().flatten().collect();
        (!notes.is_empty()).then(|| notes.concat())
    }
}

/// Refuses a blocked command, then sets up `command` the way [`run`] runs it (sandboxed
/// unless the policy opted out), without starting it. A background job starts its command
/// from here too, so it runs under exactly the same rules.
pub(crate) fn prepare(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    working_dir: &Path,
) -> Result<Prepared, ShellError> {
    prepare_reading(policy, sandbox, command, working_dir, &[], true)
}

/// [`prepare`], with `also_readable` directories readable besides the usual ones (a
/// language server's own installation); `waited` says the thread that starts the command
/// also waits for it, so the sandboxed command can be made to die with that thread (and so
/// with ybs, even killed).
fn prepare_reading(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    working_dir: &Path,
    also_readable: &[PathBuf],
    waited: bool,
) -> Result<Prepared, ShellError> {
    if let Some(entry) = find_blocked(command, &policy.blocked_commands) {
        return Err(ShellError::Blocked(entry.to_string()));
    }
    let temp = tempfile::Builder::new()
        .prefix("ybs-shell-")
        .tempdir()
        .map_err(ShellError::TempDir)?;
    let temp_path = std::fs::canonicalize(temp.path()).map_err(ShellError::TempDir)?;

    // The kept names that do not exist: held by placeholders while the command runs (so the
    // namespace makes them read-only), and removed afterwards if a command made them anyway.
    // Another ybs process's placeholders (found now, or made since `absent` was read) are
    // checked afterwards: that process may remove one while this command runs.
    let mut absent = kept::absent(sandbox);
    let mut foreign = kept::foreign(sandbox);
    let placeholders = (policy.sandbox_enabled && cfg!(target_os = "linux"))
        .then(|| kept::Placeholders::hold(&absent));
    if let Some(placeholders) = &placeholders {
        let (taken, mine): (Vec<PathBuf>, Vec<PathBuf>) = absent
            .into_iter()
            .partition(|path| placeholders.taken(path));
        absent = mine;
        foreign.extend(taken);
    }
    // What must live until the command ends (its cgroup).
    let mut guard: Option<Box<dyn std::any::Any + Send>> = None;
    let mut cmd = if policy.sandbox_enabled {
        let dirs = Dirs {
            temp: &temp_path,
            working: working_dir,
            also_readable,
            waited,
        };
        let (cmd, made) = sandboxed_command(policy, sandbox, command, &dirs)?;
        guard = made;
        cmd
    } else {
        let mut cmd = Command::new(&policy.shell);
        cmd.arg("-c").arg(command);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    };
    cmd.current_dir(working_dir);
    // What the sandbox set (HOME, the toolchains) stays; the rest passes the allow-list.
    let mut given: Vec<(std::ffi::OsString, std::ffi::OsString)> = cmd
        .get_envs()
        .filter_map(|(n, v)| Some((n.to_os_string(), v?.to_os_string())))
        .collect();
    cmd.env_clear();
    let inherited: Vec<_> = std::env::vars_os()
        .filter(|(name, _)| !given.iter().any(|(n, _)| n == name))
        .collect();
    given.extend(env::filtered(inherited, &policy.env));
    cmd.envs(given);
    for name in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(name, &temp_path);
    }
    Ok(Prepared {
        command: cmd,
        held: Held {
            absent,
            foreign,
            placeholders,
            _temp: temp,
            _guard: guard,
        },
    })
}

/// A long-running program (a language server) started under exactly the rules of a
/// command, its stdin and stdout piped to ybs, its stderr dropped. [`Service::stop`] (or
/// dropping it) kills its process group and releases what it held.
pub struct Service {
    /// The running program; take its `stdin` and `stdout`.
    pub child: std::process::Child,
    held: Option<Held>,
}

impl Service {
    /// Kills the program and everything in its group, and waits for it.
    pub fn stop(&mut self) {
        if let Some(group) = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            if self.child.try_wait().ok().flatten().is_none() {
                process::kill_group(group);
            }
        }
        let _ = self.child.wait();
        if let Some(held) = self.held.take() {
            held.finish();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the shell command `line` in `working_dir` as a [`Service`], sandboxed as a
/// command of `policy` is, with `also_readable` readable too (where the program is
/// installed: outside the system's directories a command cannot read it otherwise).
pub fn start_service(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    line: &str,
    working_dir: &Path,
    also_readable: &[PathBuf],
) -> Result<Service, ShellError> {
    let Prepared { mut command, held } =
        prepare_reading(policy, sandbox, line, working_dir, also_readable, false)?;
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let child = command.spawn().map_err(|e| spawn_error(policy, e))?;
    Ok(Service {
        child,
        held: Some(held),
    })
}

/// The error of a command that could not be started: the sandbox's explanation when it has
/// one.
pub(crate) fn spawn_error(policy: &ShellPolicy, source: std::io::Error) -> ShellError {
    #[cfg(target_os = "linux")]
    if let Some(error) = linux::explain_spawn_error(&source) {
        return error.into();
    }
    ShellError::Spawn {
        shell: policy.shell.display().to_string(),
        source,
    }
}

/// Checks that commands can run sandboxed here, by running `true` in the sandbox: `Ok` when
/// the sandbox is enforced (or disabled by the policy), the reason otherwise. ybs calls this
/// at startup to tell the user before the model's first command.
pub fn probe(policy: &ShellPolicy, sandbox: &PathSandbox) -> Result<(), ShellError> {
    let dir = sandbox
        .roots()
        .first()
        .cloned()
        .unwrap_or_else(std::env::temp_dir);
    let quick = ShellPolicy {
        blocked_commands: Vec::new(),
        ..policy.clone()
    };
    let output = run(&quick, sandbox, "true", &dir, Duration::from_secs(10))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(ShellSandboxError::Unavailable(format!(
            "a sandboxed `true` exited with code {}: {}",
            output.exit_code(),
            output.stderr.trim()
        ))
        .into())
    }
}

/// The home directories of toolchains a build command needs to read.
fn toolchain_dirs(home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        match std::env::var_os(var) {
            Some(dir) => dirs.push(PathBuf::from(dir)),
            None => {
                if let Some(home) = home {
                    dirs.push(home.join(default));
                }
            }
        }
    }
    dirs.into_iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect()
}

/// The directories a sandboxed command is set up with.
struct Dirs<'a> {
    /// Its private temp dir (its HOME).
    temp: &'a Path,
    /// Where it runs.
    working: &'a Path,
    /// Readable besides the system's directories and the toolchains.
    also_readable: &'a [PathBuf],
    /// Whether the thread that starts the command waits for it (see [`prepare_reading`]).
    waited: bool,
}

#[cfg(target_os = "linux")]
fn sandboxed_command(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    dirs: &Dirs<'_>,
) -> Result<(Command, Option<Box<dyn std::any::Any + Send>>), ShellError> {
    let (temp, working_dir) = (dirs.temp, dirs.working);
    if let Some(moved) = sandbox.moved_blocked() {
        return Err(ShellSandboxError::BlockedMoved(moved.display().to_string()).into());
    }
    let mut writable = sandbox.roots().to_vec();
    writable.push(temp.to_path_buf());
    let toolchains = toolchain_dirs(sandbox.home());
    // The toolchains are readable, but not their registry tokens (CARGO_HOME may be
    // elsewhere than ~/.cargo).
    let mut blocked = sandbox.blocked().to_vec();
    for dir in &toolchains {
        for name in ["credentials.toml", "credentials", "config.toml", "config"] {
            blocked.push(dir.join(name));
        }
    }
    // A worktree's git directories lie outside the roots: readable, so git works.
    let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) =
        (sandbox.read_only().iter().cloned()).partition(|p| sandbox.root_of(p).is_some());
    let mut readable = toolchains;
    readable.extend(outside);
    readable.extend(dirs.also_readable.iter().cloned());
    let access = linux::Grants {
        writable: &writable,
        readable: &readable,
        blocked: &blocked,
        read_only: &inside,
        network: policy.network,
    };
    let mut prepared = linux::prepare(&access, &policy.limits)?;
    // A command (a background job's too) dies with ybs, also when ybs is killed; a service
    // may be started by a thread that ends before it, and is stopped by its owner.
    prepared.parent = dirs.waited.then(std::process::id);
    // As root RLIMIT_NPROC does not apply: a pids cgroup limits the processes instead. A
    // memory cgroup, where one can be made, holds the memory limit for all the command's
    // processes together (RLIMIT_AS, which stays, is per process).
    let mut groups = Vec::new();
    let mut wanted = vec![(cgroup::Controller::Memory, policy.limits.max_memory_bytes)];
    if rustix::process::geteuid().is_root() {
        wanted.push((cgroup::Controller::Pids, policy.limits.max_processes));
    }
    for (controller, max) in wanted {
        let Some(max) = max else { continue };
        if cgroup::support(controller).is_ok() {
            if let Ok(group) = cgroup::CommandCgroup::create(controller, max) {
                prepared.cgroups.push(group.procs());
                groups.push(group);
            }
        }
    }
    let guard: Option<Box<dyn std::any::Any + Send>> = Some(Box::new(groups));
    let mut cmd = Command::new(&policy.shell);
    cmd.arg("-c").arg(command);
    // The home directory is not readable inside the sandbox: point HOME at the private temp
    // dir so tools that read their dotfiles find nothing instead of failing, and keep the
    // toolchains reachable by their own variables.
    cmd.env("HOME", temp);
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        if std::env::var_os(var).is_none() {
            if let Some(home) = sandbox.home() {
                let dir = home.join(default);
                if dir.exists() {
                    cmd.env(var, dir);
                }
            }
        }
    }
    linux::apply(&mut cmd, prepared, working_dir);
    Ok((cmd, guard))
}

#[cfg(target_os = "macos")]
fn sandboxed_command(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    dirs: &Dirs<'_>,
) -> Result<(Command, Option<Box<dyn std::any::Any + Send>>), ShellError> {
    let temp = dirs.temp;
    let toolchains = toolchain_dirs(sandbox.home());
    let profile = macos::profile(sandbox.roots(), temp, &toolchains, policy.network);
    let mut cmd = Command::new("/usr/bin/sandbox-exec");
    cmd.arg("-p")
        .arg(profile)
        .arg(&policy.shell)
        .arg("-c")
        .arg(command);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    Ok(cmd)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn sandboxed_command(
    _policy: &ShellPolicy,
    _sandbox: &PathSandbox,
    _command: &str,
    _dirs: &Dirs<'_>,
) -> Result<(Command, Option<Box<dyn std::any::Any + Send>>), ShellError> {
    Err(ShellSandboxError::Unavailable(format!(
        "no shell sandbox is implemented for {}",
        std::env::consts::OS
    ))
    .into())
}
