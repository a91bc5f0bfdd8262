//! `hooks`: commands ybs runs around the agent's work, in the shell sandbox like `run_shell`.
//! Before a tool (a failing one refuses the call, its output the reason the model gets),
//! after a tool (formatters), and after a turn that changed files (`lint`, `test`: a failure's
//! output goes back to the model, for at most `max_rounds` rounds). They run programs, so a
//! project's `.ybs.json` sets them only when trusted.

use serde::{Deserialize, Serialize};

/// `hooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HooksConfig {
    /// Run before a call of the named tools; a non-zero exit refuses the call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before_tool: Vec<ToolHook>,
    /// Run after a successful call of the named tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_tool: Vec<ToolHook>,
    /// Run after a turn that changed files; a failure goes back to the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lint: Option<String>,
    /// Run after a turn that changed files (after `lint` passed); a failure goes back to
    /// the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// How many times a failing `lint` or `test` goes back to the model in one turn.
    pub max_rounds: u32,
    /// How long one hook may run, in seconds.
    pub timeout_seconds: u64,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            before_tool: Vec::new(),
            after_tool: Vec::new(),
            lint: None,
            test: None,
            max_rounds: 3,
            timeout_seconds: 120,
        }
    }
}

/// One entry of `hooks.before_tool` or `hooks.after_tool`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolHook {
    /// The tools it runs for (empty: every tool).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The shell command. It gets the call in `YBS_TOOL` (the tool's name) and
    /// `YBS_TOOL_ARGS` (its arguments as JSON).
    pub command: String,
}

impl ToolHook {
    /// Whether the hook runs for a call of `tool`.
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|name| name == tool)
    }
}
