//! `task`: the spec of the sub-agent tool. The registry only offers it: the agent runs the
//! call itself (a sub-agent needs the model), so invoking it here is an error.

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::spec;
use crate::declaration::{Declaration, Effect, NetworkUse, Runner};
use crate::summary::{Change, Summary, counted};
use crate::{Args, Tool, ToolContext, ToolError};

/// The `task` tool's spec.
pub struct Task {
    spec: ToolSpec,
}

impl Task {
    /// The tool with its schema.
    pub fn new() -> Self {
        Task {
            spec: spec(
                "task",
                "Hand a self-contained investigation to a sub-agent: it starts with a fresh \
                 conversation and only read-only tools (read_file, list_files, search_files), \
                 works through your prompt, and returns its final report. Use it for a broad \
                 search or reading that would fill this conversation; write a prompt that says \
                 exactly what to find and what to report. It cannot change files or run \
                 commands. Name one of the sub-agents of the system prompt's # Sub-agents \
                 section in `agent` to have it do the task.",
                json!({
                    "description": {"type": "string", "description": "A short title of the task (3-6 words)", "required": true},
                    "prompt": {"type": "string", "description": "The whole task for the sub-agent: what to find out and what to report", "required": true},
                    "agent": {"type": "string", "description": "A sub-agent named under # Sub-agents in the system prompt; leave out for the general one"}
                }),
            ),
        }
    }
}

impl Default for Task {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for Task {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            effect: Effect::Nothing,
            network: NetworkUse::Never,
            runner: Runner::SubAgent,
            ..Declaration::default()
        }
    }

    /// `Sub-agent reported (12 lines)`.
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let lines = result.get("report")?.as_str()?.lines().count();
        Some(Summary::ok(format!(
            "Sub-agent reported ({})",
            counted(lines as u64, "line", "lines")
        )))
    }

    fn invoke(&self, _args: &Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::failed(
            "`task` runs a sub-agent, which only the agent loop can do; it is not available here",
        ))
    }
}
