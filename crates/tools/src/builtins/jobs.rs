//! `read_job_output` and `stop_job`: the model's view of and hold on the background jobs
//! `run_shell` started ([`Jobs`](crate::Jobs)).

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::spec;
use crate::declaration::{ActionKind, Declaration, Effect, NetworkUse};
use crate::jobs::{JobRead, JobView};
use crate::summary::{Change, Summary, truncate_chars};
use crate::{Args, Tool, ToolContext, ToolError};

/// The `read_job_output` tool.
pub struct ReadJobOutput {
    spec: ToolSpec,
}

/// The `stop_job` tool.
pub struct StopJob {
    spec: ToolSpec,
}

fn job_id_parameter() -> Value {
    json!({
        "job_id": {"type": "integer", "description": "From run_shell", "required": true}
    })
}

impl ReadJobOutput {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        ReadJobOutput {
            spec: spec(
                "read_job_output",
                "A background job's output since the last read, and its state.",
                job_id_parameter(),
            ),
        }
    }
}

impl Default for ReadJobOutput {
    fn default() -> Self {
        Self::new()
    }
}

impl StopJob {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        StopJob {
            spec: spec("stop_job", "Stop a background job.", job_id_parameter()),
        }
    }
}

impl Default for StopJob {
    fn default() -> Self {
        Self::new()
    }
}

/// The job named by the call's `job_id`, or the error listing the session's jobs.
fn job_id(args: &Args, ctx: &ToolContext) -> Result<u32, ToolError> {
    let id = args.int("job_id")?.unwrap_or_default();
    let known = ctx.jobs.list();
    match u32::try_from(id) {
        Ok(id) if known.iter().any(|job| job.id == id) => Ok(id),
        _ => {
            let ids: Vec<String> = known.iter().map(|job| job.id.to_string()).collect();
            Err(ToolError::failed(format!(
                "no background job {id} in this session (jobs: {})",
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            )))
        }
    }
}

/// The fields a job's state has in a result.
fn state_of(job: &JobView) -> Value {
    json!({
        "job_id": job.id,
        "command": job.command,
        "running": job.running,
        "exit_code": job.exit_code,
        "stopped": job.stopped,
        "running_seconds": job.running_for.as_secs(),
    })
}

/// `job 2 running` / `job 2 exited with code 1` / `job 2 stopped`.
fn headline(job: &JobView) -> String {
    let command = truncate_chars(job.command.lines().next().unwrap_or(""), 60);
    match job.exit_code {
        None => format!("job {} running: {command}", job.id),
        Some(_) if job.stopped => format!("job {} stopped: {command}", job.id),
        Some(code) => format!("job {} exited with code {code}: {command}", job.id),
    }
}

impl Tool for ReadJobOutput {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        // Offered where run_shell is: a sub-agent and plan mode start no jobs.
        Declaration {
            effect: Effect::Nothing,
            kind: ActionKind::Read,
            network: NetworkUse::Never,
            needs_jobs: true,
            ..Declaration::default()
        }
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(format!("Read job {}", arguments.get("job_id")?))
    }

    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let job = view_of(result)?;
        let output = result.get("output").and_then(Value::as_str).unwrap_or("");
        let mut detail: Vec<String> = output.lines().map(str::to_owned).collect();
        let hidden = detail.len().saturating_sub(super::SHELL_TAIL_LINES);
        let detail = detail.split_off(hidden);
        Some(Summary {
            ok: job.exit_code.is_none_or(|code| code == 0 || job.stopped),
            headline: headline(&job),
            detail,
            hidden,
        })
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let id = job_id(args, ctx)?;
        let Some(JobRead {
            job,
            new_output,
            missed_bytes,
        }) = ctx.jobs.read_new(id)
        else {
            return Err(ToolError::failed(format!("no background job {id}")));
        };
        let mut result = state_of(&job);
        let mut output = String::new();
        if missed_bytes > 0 {
            output.push_str(&format!(
                "[{missed_bytes} earlier bytes of output were dropped unread]\n"
            ));
        }
        output.push_str(&new_output);
        result["output"] = Value::String(output);
        Ok(result)
    }
}

impl Tool for StopJob {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            effect: Effect::Commands,
            kind: ActionKind::Execute,
            network: NetworkUse::Never,
            needs_jobs: true,
            ..Declaration::default()
        }
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(format!("Stop job {}", arguments.get("job_id")?))
    }

    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let job = view_of(result)?;
        Some(Summary {
            ok: true,
            headline: headline(&job),
            detail: Vec::new(),
            hidden: 0,
        })
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let id = job_id(args, ctx)?;
        let job = (ctx.jobs.stop(id)).ok_or_else(|| ToolError::failed(format!("no job {id}")))?;
        Ok(state_of(&job))
    }
}

/// The job's state back from a result (for its summary).
fn view_of(result: &Value) -> Option<JobView> {
    Some(JobView {
        id: u32::try_from(result.get("job_id")?.as_u64()?).ok()?,
        command: result.get("command")?.as_str()?.to_owned(),
        running_for: std::time::Duration::from_secs(
            result.get("running_seconds").and_then(Value::as_u64)?,
        ),
        running: result.get("running")?.as_bool()?,
        exit_code: (result.get("exit_code").and_then(Value::as_i64))
            .and_then(|code| i32::try_from(code).ok()),
        stopped: result.get("stopped")?.as_bool()?,
        last_lines: Vec::new(),
    })
}
