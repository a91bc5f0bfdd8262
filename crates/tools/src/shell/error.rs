//! Why a shell command did not run.

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
