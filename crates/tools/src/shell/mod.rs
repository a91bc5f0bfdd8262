//! Running shell commands for `run_shell`: blocked commands refused first, then `/bin/sh -c`
//! in its own process group with a timeout, sandboxed unless the user opted out.
//!
//! On Linux the sandbox is Landlock plus seccomp, with blocked paths inside the roots hidden
//! by a private mount namespace (`linux`, `mount_ns`); on macOS it is `sandbox-exec`
//! (`macos`, untested). When the sandbox is enabled but cannot be enforced, the command is
//! not run and the error says so; it never silently runs unsandboxed. [`probe`] checks this
//! up front.
//!
//! Every command gets a private temp dir (`TMPDIR`, removed afterwards) and an environment
//! without variables whose names look like secrets (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...).
//! Sandboxed, its `HOME` is that temp dir. Unsandboxed (`--no-sandbox`), a command can still
//! leave its process group with `setsid` and outlive the timeout; sandboxed it cannot.

pub mod blocked;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "linux")]
mod mount_ns;

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

/// Environment variables whose names contain one of these (case-insensitive) are not passed
/// to commands, so API keys of the agent do not reach the model's commands.
const SECRET_MARKERS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];

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

    let mut cmd = if policy.sandbox_enabled {
        sandboxed_command(policy, sandbox, command, &temp_path)?
    } else {
        let mut cmd = Command::new(&policy.shell);
        cmd.arg("-c").arg(command);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    };
    cmd.current_dir(working_dir);
    for (name, _) in std::env::vars_os() {
        let upper = name.to_string_lossy().to_uppercase();
        if SECRET_MARKERS.iter().any(|m| upper.contains(m)) {
            cmd.env_remove(&name);
        }
    }
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
) -> Result<Command, ShellError> {
    let mut writable = sandbox.roots().to_vec();
    writable.push(temp.to_path_buf());
    let toolchains = toolchain_dirs(sandbox.home());
    // The toolchains are readable, but not cargo's registry tokens.
    let mut blocked = sandbox.blocked().to_vec();
    for dir in &toolchains {
        blocked.push(dir.join("credentials.toml"));
        blocked.push(dir.join("credentials"));
    }
    let prepared = linux::prepare(&writable, &toolchains, &blocked)?;
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
    linux::apply(&mut cmd, prepared);
    Ok(cmd)
}

#[cfg(target_os = "macos")]
fn sandboxed_command(
    policy: &ShellPolicy,
    sandbox: &PathSandbox,
    command: &str,
    temp: &Path,
) -> Result<Command, ShellError> {
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
) -> Result<Command, ShellError> {
    Err(ShellSandboxError::Unavailable(format!(
        "no shell sandbox is implemented for {}",
        std::env::consts::OS
    ))
    .into())
}
