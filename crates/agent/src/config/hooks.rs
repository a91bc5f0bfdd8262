//! `hooks`: commands ybs runs around the agent's work, in the shell sandbox like `run_shell`
//! (unless `sandbox` is off). Before a tool (a failing one refuses the call, its output the
//! reason the model gets), after a tool (formatters), after a turn that changed files
//! (`lint`, `test`: a failure's output goes back to the model, for at most `max_rounds`
//! rounds), and at the events the other agents have (session start and end, a prompt
//! submitted, before compaction, the agent or a sub-agent stopping, a notification), each
//! given the event as JSON on stdin. They run programs, so a project's `.ybs.json` sets them
//! only when trusted.

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
    /// Whether hooks run in the shell sandbox (off only by the user's own choice: a
    /// project's setting needs trust).
    pub sandbox: bool,
    /// Run when a session starts; what one prints is added to the first message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_start: Vec<EventHook>,
    /// Run when a session ends.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_end: Vec<EventHook>,
    /// Run when the user submits a prompt, before it is sent: can block it or add context.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub user_prompt_submit: Vec<EventHook>,
    /// Run before the conversation is compacted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pre_compact: Vec<EventHook>,
    /// Run when the agent would end its turn: can ask it to go on (at most `max_rounds`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<EventHook>,
    /// Run when a sub-agent has finished.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagent_stop: Vec<EventHook>,
    /// Run when ybs waits for the user (a question before a tool call).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notification: Vec<EventHook>,
}

/// One hook of an event: a shell command that reads the event as JSON on stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventHook {
    /// The shell command.
    pub command: String,
    /// How long it may run, in seconds (`hooks.timeout_seconds` when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
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
            sandbox: true,
            session_start: Vec::new(),
            session_end: Vec::new(),
            user_prompt_submit: Vec::new(),
            pre_compact: Vec::new(),
            stop: Vec::new(),
            subagent_stop: Vec::new(),
            notification: Vec::new(),
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
