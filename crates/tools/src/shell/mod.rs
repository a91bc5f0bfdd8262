//! Running shell commands for `run_shell`: blocked commands refused first, then `/bin/sh -c`
//! in its own process group with a timeout, sandboxed unless the user opted out.
//!
//! On Linux the sandbox is layered (`linux`): user, mount and PID namespaces
//! (`namespaces`), resource limits, no inherited descriptors, no capabilities, Landlock and
//! seccomp (`seccomp`), all applied by the child to itself (`child`). On macOS it is
//! `sandbox-exec` (`macos`, untested). When the sandbox is enabled but Landlock or seccomp
//! cannot be enforced, the command is not run and the error says so; it never silently runs
//! unsandboxed. A layer that is only a hardening (the namespaces) degrades to Landlock and
//! seccomp alone, and [`status`] says so, for the banner. `crates/tools/SECURITY.md` has the
//! threat model.
//!
//! Every command gets a private temp dir (`TMPDIR`, removed afterwards) and an environment
//! from an allow-list without anything that looks like a secret ([`env`]). Sandboxed, its
//! `HOME` is that temp dir. Unsandboxed (`--no-sandbox`), a command can still leave its
//! process group with `setsid` and outlive the timeout; sandboxed it cannot.

pub mod blocked;
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod child;
pub mod env;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod status;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::path_sandbox::PathSandbox;
use crate::process::{self, ProcessOutput};
use crate::tool::CancelFlag;

pub use blocked::find_blocked;

/// How `run_shell` runs commands (from the `safety` and `tools.builtin.run_shell` config).
#[derive(Debug, Clone, PartialEq)]
pub struct ShellPolicy {
    /// Whether commands run sandboxed (`safety.sandbox_enabled`; `--no-sandbox` turns it off).
    pub sandbox_enabled: bool,
    /// Commands refused before running (`safety.blocked_commands`).
    pub blocked_commands: Vec<String>,
    /// The timeout when the call gives none (`tools.builtin.run_shell.timeout_seconds`).
    pub default_timeout: Duration,
    /// The longest timeout a call may ask for.
    pub max_timeout: Duration,
    /// The most bytes kept of each of stdout and stderr.
    pub output_cap_bytes: usize,
    /// The shell that runs the command with `-c`.
    pub shell: PathBuf,
    /// Environment variables passed besides [`env::DEFAULT_ALLOWED`] (`safety.shell_env`;
    /// a trailing `*` matches a prefix).
    pub env: Vec<String>,
    /// Resource limits of sandboxed commands (`tools.builtin.run_shell.limits`).
    pub limits: ShellLimits,
}

/// Resource limits of a sandboxed command (`setrlimit`); `None` leaves one as inherited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLimits {
    /// `RLIMIT_NPROC`: processes (threads count too) of the command's user.
    pub max_processes: Option<u64>,
    /// `RLIMIT_AS`: bytes of address space of each process.
    pub max_memory_bytes: Option<u64>,
    /// `RLIMIT_FSIZE`: the largest file a command may write, in bytes.
    pub max_file_bytes: Option<u64>,
    /// `RLIMIT_CORE`: core dump size (0: none, so a crash does not dump memory to disk).
    pub max_core_bytes: Option<u64>,
}

impl Default for ShellLimits {
    fn default() -> Self {
        ShellLimits {
            max_processes: Some(1024),
            max_memory_bytes: Some(16 * 1024 * 1024 * 1024),
            max_file_bytes: Some(8 * 1024 * 1024 * 1024),
            max_core_bytes: Some(0),
        }
    }
}

#[cfg(target_os = "linux")]
impl ShellLimits {
    /// The limits as `setrlimit` pairs, each capped at the current hard limit (which an
    /// unprivileged process cannot raise).
    fn rlimits(&self) -> Vec<(rustix::process::Resource, u64)> {
        use rustix::process::Resource;
        [
            (Resource::Nproc, self.max_processes),
            (Resource::As, self.max_memory_bytes),
            (Resource::Fsize, self.max_file_bytes),
            (Resource::Core, self.max_core_bytes),
        ]
        .into_iter()
        .filter_map(|(resource, value)| {
            let value = value?;
            let hard = rustix::process::getrlimit(resource).maximum;
            Some((resource, hard.map_or(value, |h| h.min(value))))
        })
        .collect()
    }
}

impl Default for ShellPolicy {
    fn default() -> Self {
        ShellPolicy {
            sandbox_enabled: true,
            blocked_commands: ["rm -rf /", "sudo", "chmod 777"].map(String::from).to_vec(),
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(600),
            output_cap_bytes: 1024 * 1024,
            shell: PathBuf::from("/bin/sh"),
            env: Vec::new(),
            limits: ShellLimits::default(),
        }
    }
}

/// Why the shell sandbox could not be set up. The command was not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellSandboxError {
    /// The kernel or platform cannot enforce the sandbox.
    #[error(
        "the shell sandbox cannot be enforced on this system: {0}; the command was NOT run. Use a kernel with Landlock (Linux 5.13+) and seccomp, or disable sandboxing explicitly with --no-sandbox (safety.sandbox_enabled: false)"
    )]
    Unavailable(String),
    /// A Landlock rule could not be added.
    #[error("the shell sandbox could not add a Landlock rule for {0}; the command was NOT run")]
    Rules(String),
    /// A blocked path no longer names what it named at start (it was moved or replaced).
    #[error(
        "the blocked path `{0}` was moved or replaced since ybs started, so it can no longer be hidden by name; the command was NOT run. Put it back (or restart ybs to block what is there now)"
    )]
    BlockedMoved(String),
    /// The seccomp filter could not be built.
    #[error("the shell sandbox could not build its seccomp filter: {0}; the command was NOT run")]
    Seccomp(String),
}

/// Why a shell command did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The command matches an entry of `blocked_commands`.
    #[error(
        "command refused: it matches the blocked command `{0}` (safety.blocked_commands); run something else"
    )]
    Blocked(String),
    /// The sandbox could not be enforced.
    #[error(transparent)]
    Sandbox(#[from] ShellSandboxError),
    /// The private temp dir could not be made.
    #[error("cannot create a private temp directory for the command: {0}")]
    TempDir(std::io::Error),
    /// The shell could not be started.
    #[error("cannot start `{shell}`: {source}")]
    Spawn {
        /// The shell.
        shell: String,
        /// Why.
        source: std::io::Error,
    },
}

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
    if let Some(entry) = find_blocked(command, &policy.blocked_commands) {
        return Err(ShellError::Blocked(entry.to_string()));
    }
    let temp = tempfile::Builder::new()
        .prefix("ybs-shell-")
        .tempdir()
        .map_err(ShellError::TempDir)?;
    let temp_path = std::fs::canonicalize(temp.path()).map_err(ShellError::TempDir)?;

    // What must live until the command ends (its cgroup).
    let mut _guard: Option<Box<dyn std::any::Any>> = None;
    let mut cmd = if policy.sandbox_enabled {
        let (cmd, guard) = sandboxed_command(policy, sandbox, command, &temp_path, working_dir)?;
        _guard = guard;
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
    match process::run_cancellable(cmd, timeout, policy.output_cap_bytes, cancel) {
        Ok(output) => Ok(output),
        Err(source) => {
            #[cfg(target_os = "linux")]
            if let Some(error) = linux::explain_spawn_error(&source) {
                return Err(error.into());
            }
            Err(ShellError::Spawn {
                shell: policy.shell.display().to_string(),
                source,
            })
        }
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

#[cfg(target_os = "linux")]
fn sandboxed_command(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    temp: &Path,
    working_dir: &Path,
) -> Result<(Command, Option<Box<dyn std::any::Any>>), ShellError> {
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
    let access = linux::Grants {
        writable: &writable,
        readable: &readable,
        blocked: &blocked,
        read_only: &inside,
    };
    let mut prepared = linux::prepare(&access, &policy.limits)?;
    // As root RLIMIT_NPROC does not apply: a pids cgroup limits the processes instead.
    let mut guard: Option<Box<dyn std::any::Any>> = None;
    if let Some(max) = policy.limits.max_processes {
        if rustix::process::geteuid().is_root() && cgroup::support().is_ok() {
            if let Ok(group) = cgroup::PidsCgroup::create(max) {
                prepared.cgroup = Some(group.procs());
                guard = Some(Box::new(group));
            }
        }
    }
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
    temp: &Path,
    _working_dir: &Path,
) -> Result<(Command, Option<Box<dyn std::any::Any>>), ShellError> {
    let toolchains = toolchain_dirs(sandbox.home());
    let profile = macos::profile(sandbox.roots(), temp, &toolchains);
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
    _temp: &Path,
    _working_dir: &Path,
) -> Result<(Command, Option<Box<dyn std::any::Any>>), ShellError> {
    Err(ShellSandboxError::Unavailable(format!(
        "no shell sandbox is implemented for {}",
        std::env::consts::OS
    ))
    .into())
}
