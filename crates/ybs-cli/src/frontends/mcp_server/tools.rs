//! The two tools `ybs mcp-server` offers and their arguments: `run_task` starts a session in a
//! project and runs one task; `continue_session` runs another task in a session it started
//! (or one saved earlier).

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::json;

use ybs_agent::config::Approval;

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
    /// `refuse` (the default), `auto-edit` or `auto`.
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
    /// `refuse` (the default), `auto-edit` or `auto`.
    #[serde(default)]
    pub approval: Option<String>,
}

/// The approval mode a task runs in. Nobody can answer an approval here, so the calls that
/// would need one are refused: with `refuse` (the default) those of the configured approval
/// mode (`safety.approval`, `ask` unless the user set another), with `auto-edit` commands
/// only (edits inside the project run), with `auto` none (everything runs; the sandbox,
/// protected paths and deny rules still apply). `None`: the configured mode.
pub fn approval(value: Option<&str>) -> Result<Option<Approval>, String> {
    match value {
        None | Some("refuse") => Ok(None),
        Some("auto-edit") => Ok(Some(Approval::AutoEdit)),
        Some("auto") => Ok(Some(Approval::FullAuto)),
        Some(other) => Err(format!(
            "approval `{other}` is not `refuse`, `auto-edit` or `auto`"
        )),
    }
}

/// How the caller allows calls that need approval.
const ALLOW_HINT: &str = "to allow such calls, run the task with approval: \"auto\" \
                          (everything; the sandbox still applies) or \"auto-edit\" (edits \
                          inside the project)";

/// What refusing `calls` (`write_file src/a.rs`, comma-separated) tells the caller: why, and
/// the argument that allows such calls.
pub fn refusal(calls: &str) -> String {
    format!("ybs refused {calls}: it needs approval, which nobody can give over MCP; {ALLOW_HINT}.")
}

/// The tools as `tools/list` shows them.
pub fn list() -> Vec<Tool> {
    let approval = json!({
        "type": "string",
        "enum": ["refuse", "auto-edit", "auto"],
        "description": "How calls that need approval (edits, commands) are settled, since nobody can answer here: `refuse` (default: refused, as the configured approval mode requires), `auto-edit` (edits inside the project run, commands are refused) or `auto` (everything runs; the sandbox still applies)"
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
    fn approvals_never_ask_and_default_to_the_configured_mode() {
        assert_eq!(approval(None), Ok(None));
        assert_eq!(approval(Some("refuse")), Ok(None));
        assert_eq!(approval(Some("auto-edit")), Ok(Some(Approval::AutoEdit)));
        assert_eq!(approval(Some("auto")), Ok(Some(Approval::FullAuto)));
        assert!(approval(Some("ask")).is_err());
        assert!(refusal("write_file a.txt").contains("approval: \"auto\""));
        let names: Vec<String> = list().iter().map(|tool| tool.name.to_string()).collect();
        assert_eq!(names, [RUN_TASK, CONTINUE_SESSION]);
    }
}
