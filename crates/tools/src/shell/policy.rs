//! How `run_shell` runs commands: the policy from the config and the resource limits of a
//! sandboxed command.

use std::path::PathBuf;
use std::time::Duration;

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
    /// Environment variables passed besides [`env::DEFAULT_ALLOWED`](super::env::DEFAULT_ALLOWED) (`safety.shell_env`;
    /// a trailing `*` matches a prefix).
    pub env: Vec<String>,
    /// Resource limits of sandboxed commands (`tools.builtin.run_shell.limits`).
    pub limits: ShellLimits,
    /// Whether a `run_shell` call may ask for the network at all (`safety.network` not
    /// `off`). The caller asks the user before such a call; the tool only refuses one when
    /// this is `false`.
    pub network_allowed: bool,
    /// Whether this command runs with the network: set for one call that asked for it and
    /// was allowed. Every other layer of the sandbox stays.
    pub network: bool,
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
    pub(super) fn rlimits(&self) -> Vec<(rustix::process::Resource, u64)> {
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
            network_allowed: false,
            network: false,
        }
    }
}
