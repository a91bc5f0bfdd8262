//! The error a tool call ends with: a message the model can read and act on.

use serde_json::{Value, json};

use crate::path_sandbox::SandboxError;

/// Why a tool call failed. Every message names what failed and what to do instead; the
/// registry hands it to the model as `{"success": false, "error": "<message>"}`.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model called a tool that is not registered.
    #[error("unknown tool `{name}`; available tools: {available}")]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The enabled tools, comma separated.
        available: String,
    },
    /// The tool exists but is disabled in the configuration.
    #[error("tool `{0}` is disabled in the configuration; use another tool")]
    Disabled(String),
    /// The arguments do not match the tool's schema.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// What is wrong with the arguments.
        message: String,
    },
    /// A path was refused by the sandbox.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A checked file operation failed.
    #[error(transparent)]
    File(#[from] ybs_fsguard::SafeFsError),
    /// A file system operation failed.
    #[error("{action} `{path}` failed: {source}")]
    Io {
        /// What was being done ("reading", "writing", ...).
        action: &'static str,
        /// The path as the model gave it.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The tool ran and refused or failed with a message for the model.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// A tool failure with a message for the model.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// The JSON the model sees for this error.
    pub fn to_json(&self) -> Value {
        json!({"success": false, "error": self.to_string()})
    }
}
