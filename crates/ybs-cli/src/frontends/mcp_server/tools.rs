//! The two tools `ybs mcp-server` offers and their arguments: `run_task` starts a session in a
//! project and runs one task; `continue_session` runs another task in a session it started
//! (or one saved earlier).

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::json;

use crate::agent::confirm::ConfirmMode;

/// The tool that starts a session.
pub const RUN_TASK: &str = "run_task";
/// The tool that continues one.
pub const CONTINUE_SESSION: &str = "continue_session";

/// The arguments of `run_task`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunTask {
    /// The task.
    pub prompt: String,
    /// The project directory (absolute); the server's working directory when absent.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `refuse` (the default) or `auto`.
    #[serde(default)]
    pub approval: Option<String>,
}

/// The arguments of `continue_session`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContinueSession {
    /// The session id a `run_task` returned.
    pub session_id: String,
    /// The next task.
    pub prompt: String,
    /// The project directory of a session saved by an earlier run (absolute).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `refuse` (the default) or `auto`.
    #[serde(default)]
    pub approval: Option<String>,
}

/// How calls that need approval are settled: nobody can answer them here, so they are
/// refused, unless the caller asks for `auto` (allowed without asking; the sandbox still
/// applies).
pub fn approval(value: Option<&str>) -> Result<ConfirmMode, String> {
    match value {
        None | Some("refuse") => Ok(ConfirmMode::Deny),
        Some("auto") => Ok(ConfirmMode::AssumeYes),
        Some(other) => Err(format!("approval `{other}` is not `refuse` or `auto`")),
    }
}

/// The tools as `tools/list` shows them.
pub fn list() -> Vec<Tool> {
    let approval = json!({
        "type": "string",
        "enum": ["refuse", "auto"],
        "description": "How calls that need approval (edits, commands) are settled: `refuse` (default; nobody can answer here) or `auto` (allowed; the sandbox still applies)"
    });
    let cwd = json!({
        "type": "string",
        "description": "Absolute path of the project directory (default: where the server runs)"
    });
    let run = schema(json!({
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task for ybs"},
            "cwd": cwd,
            "approval": approval
        },
        "required": ["prompt"],
        "additionalProperties": false
    }));
    let next = schema(json!({
        "type": "object",
        "properties": {
            "session_id": {"type": "string", "description": "The session_id a run_task returned"},
            "prompt": {"type": "string", "description": "The next task in that session"},
            "cwd": cwd,
            "approval": approval
        },
        "required": ["session_id", "prompt"],
        "additionalProperties": false
    }));
    let annotations = ToolAnnotations::new()
        .read_only(false)
        .destructive(true)
        .open_world(true);
    vec![
        Tool::new(
            RUN_TASK,
            "Run a coding task with ybs in a project: it reads, edits and runs commands in its \
             sandbox and returns its final reply, the files it changed and a session_id to \
             continue with continue_session.",
            run,
        )
        .annotate(annotations.clone()),
        Tool::new(
            CONTINUE_SESSION,
            "Continue a ybs session with another task; returns the same as run_task.",
            next,
        )
        .annotate(annotations),
    ]
}

fn schema(value: serde_json::Value) -> Arc<JsonObject> {
    match value {
        serde_json::Value::Object(object) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_never_ask_and_default_to_refuse() {
        assert_eq!(approval(None), Ok(ConfirmMode::Deny));
        assert_eq!(approval(Some("refuse")), Ok(ConfirmMode::Deny));
        assert_eq!(approval(Some("auto")), Ok(ConfirmMode::AssumeYes));
        assert!(approval(Some("ask")).is_err());
        let names: Vec<String> = list().iter().map(|tool| tool.name.to_string()).collect();
        assert_eq!(names, [RUN_TASK, CONTINUE_SESSION]);
    }
}
