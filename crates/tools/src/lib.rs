//! Tools that give a model hands which cannot reach anything they should not: the `Tool`
//! trait, the registry, the path sandbox, the built-in tools, external tools and the Linux
//! shell sandbox.
//!
//! # Layout
//!
//! - Calling a tool: the [`Tool`] trait, what each tool declares about itself
//!   ([`Declaration`] in `declaration`, its result's [`Summary`] in `summary`) and the
//!   [`ToolContext`] a call runs with (`tool`, its
//!   [`CancelFlag`] in `cancel`, `web_fetch`'s bounds in `web_policy`, the session's task list
//!   of `todo`), argument schemas (`schema`), the [`ToolRegistry`]
//!   (`registry`), the [`ConfirmationPolicy`] (`confirm`), `truncate` and `error`.
//! - The tools: `builtins/` (the built-ins; `edit_file` matches with the `ybs_edit` crate's
//!   search/replace), `external` (tools loaded from a directory).
//! - The fences: `path_sandbox` ([`PathSandbox`], which is the [`ybs_fsguard::Guard`] the file
//!   tools open through: no link followed, no walk reading an ignore file that is a device or
//!   a FIFO), `protected` (blocked and read-only paths known by identity), `shell/` (running
//!   `run_shell` commands: the policy, blocked commands, the environment allow-list and the
//!   sandbox's layers) over `process` (a child process with a timeout and cancellation);
//!   `jobs/` (the session's background jobs, started through the same sandbox).
//!
//! The agent builds a [`PathSandbox`] and a [`ToolContext`] from its config, a
//! [`ToolRegistry`] with the built-ins and the external tools, and for each tool call asks the
//! [`ConfirmationPolicy`] whether the user must confirm, then runs
//! [`ToolRegistry::invoke_call`] (on a blocking thread) and sends the [`ToolResult`](ybs_core::ToolResult)
//! (`ybs_core`) back to the model.
//!
//! ```no_run
//! use ybs_core::ToolCall;
//! use ybs_tools::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // safety.sandbox_allowed_paths / sandbox_blocked_paths
//! let sandbox = PathSandbox::new(["./"], ["~/.ssh", "~/.aws", "~/.config"])?;
//! // safety.sandbox_enabled, safety.blocked_commands, tools.builtin.run_shell.timeout_seconds
//! let shell = ShellPolicy { sandbox_enabled: true, ..ShellPolicy::default() };
//! shell::probe(&shell, &sandbox)?; // tell the user now if the sandbox cannot be enforced
//! let ctx = ToolContext::new(sandbox, shell)?;
//!
//! let mut registry = ToolRegistry::new();
//! registry.set_enabled("run_shell", true); // tools.builtin.NAME.enabled
//! registry.set_max_output_chars(10_000); // context.max_tool_output_chars
//! let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
//! let report = registry.set_external_sources(Vec::new(), default_tools_dir(home.as_deref()));
//! for error in &report.errors {
//!     eprintln!("warning: {error}");
//! }
//! let specs = registry.specs(); // for the ChatRequest
//!
//! let mut policy = ConfirmationPolicy::new(["write_file", "run_shell", "delete_file"]);
//! let call = ToolCall::new("call_1", "run_shell", serde_json::json!({"command": "cargo test"}));
//! let run = match policy.check(&call.name, &registry.declaration(&call.name), &call.arguments, &ctx) {
//!     Confirmation::NotNeeded => true,
//!     Confirmation::Required { reason } => {
//!         println!("{reason}: [y]es / [n]o / [a]lways");
//!         policy.record(&call.name, Decision::AllowForSession)
//!     }
//! };
//! if run {
//!     let result = registry.invoke_call(&call, &ctx); // a ybs_core::ToolResult
//!     println!("{}", result.content);
//! }
//! // On SIGHUP:
//! let report = registry.reload();
//! # let _ = (specs, report);
//! # Ok(())
//! # }
//! ```
//!
//! Security model, in layers: every path a tool touches is resolved physically and checked
//! ([`PathSandbox`]), then opened without following symlinks below its root
//! ([`ybs_fsguard::guarded`]);
//! blocked and read-only paths (`.git`, `.ybs`) are also recognised by identity
//! ([`protected`]); `run_shell` commands run in namespaces, under resource limits, without
//! capabilities, under Landlock and seccomp on Linux ([`shell`]), and refuse to run when
//! Landlock or seccomp cannot be enforced unless the user opted out. `blocked_commands` is a
//! guard against accidents, not a boundary. The repository's `SECURITY.md` has the threat model.

pub mod builtins;
mod cancel;
pub mod confirm;
pub mod declaration;
pub mod editor;
pub mod error;
pub mod external;
pub mod jobs;
pub mod path_sandbox;
pub mod process;
pub mod protected;
pub mod registry;
pub mod schema;
pub mod shell;
pub mod summary;
pub mod todo;
pub mod tool;
pub mod truncate;
pub mod web_policy;

pub use cancel::CancelFlag;
pub use confirm::{Confirmation, ConfirmationPolicy, Decision};
pub use declaration::{ActionKind, Asks, Declaration, Effect, NetworkUse, RuleSubject, Runner};
pub use editor::{Editor, EditorFiles};
pub use error::ToolError;
pub use external::{
    ExternalLoadError, ExternalTool, ExternalToolConfig, default_tools_dir, discover_sidecars,
};
pub use jobs::{JobRead, JobView, Jobs};
pub use path_sandbox::{PathSandbox, SandboxError};
pub use registry::{DEFAULT_MAX_TOOL_OUTPUT_CHARS, ReloadReport, ToolRegistry, ToolSource};
pub use schema::{Args, parameters_to_schema, validate};
pub use shell::{ShellError, ShellLimits, ShellPolicy, ShellSandboxError};
pub use summary::{Change, Summary};
pub use tool::{SessionState, Tool, ToolContext};
pub use truncate::{truncate_json, truncate_output};

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
