//! Tools that give a model hands which cannot reach anything they should not: the `Tool`
//! trait, the registry, the path sandbox, the built-in tools, bb7's edit algorithms, external
//! tools and the Linux shell sandbox.
//!
//! The agent builds a [`PathSandbox`] and a [`ToolContext`] from its config, a
//! [`ToolRegistry`] with the built-ins and the external tools, and for each tool call asks the
//! [`ConfirmationPolicy`] whether the user must confirm, then runs
//! [`ToolRegistry::invoke_call`] (on a blocking thread) and sends the [`ToolResult`]
//! (`ybs_core`) back to the model.

pub mod bb7_edit;
pub mod builtins;
pub mod confirm;
pub mod error;
pub mod external;
pub mod path_sandbox;
pub mod process;
pub mod registry;
pub mod safe_fs;
pub mod schema;
pub mod shell;
pub mod tool;
pub mod truncate;

pub use confirm::{Confirmation, ConfirmationPolicy, Decision};
pub use error::ToolError;
pub use external::{
    ExternalLoadError, ExternalTool, ExternalToolConfig, default_tools_dir, discover_sidecars,
};
pub use path_sandbox::{PathSandbox, SandboxError};
pub use registry::{DEFAULT_MAX_TOOL_OUTPUT_CHARS, ReloadReport, ToolRegistry};
pub use schema::{Args, parameters_to_schema, validate};
pub use shell::{ShellError, ShellPolicy, ShellSandboxError};
pub use tool::{SessionState, Tool, ToolContext};
pub use truncate::truncate_output;
