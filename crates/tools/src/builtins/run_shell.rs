//! `run_shell`: a shell command in the sandbox, with a timeout that kills its process group,
//! as does the user cancelling the call ([`ToolContext::cancel`]). A call may ask for the
//! network (`network: true` with a `reason`): it then runs with the network and every other
//! layer of the sandbox, if the policy allows such calls at all
//! ([`ShellPolicy::network_allowed`](crate::ShellPolicy::network_allowed)); the caller asks
//! the user first. With `background: true` the command is started as a job of the session
//! ([`Jobs`](crate::Jobs)) under the same rules and the call returns its id at once.

use std::time::Duration;

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::spec;
use crate::declaration::{ActionKind, Declaration, Effect, NetworkUse, RuleSubject};
use crate::shell::{self, ShellError, ShellPolicy};
use crate::summary::{Change, Summary, thousands, truncate_chars};
use crate::{Args, Tool, ToolContext, ToolError};

/// How many of the last lines of a command's output its summary shows.
pub const SHELL_TAIL_LINES: usize = 5;
/// How much of each of those lines is shown: a minified file or a progress bar printed on
/// one line would otherwise fill the screen.
const SHELL_LINE_CHARS: usize = 200;

/// Appended to stderr when the user cancelled the command.
const CANCELLED_NOTE: &str =
    "\n[cancelled by the user; the command and its child processes were killed]";

/// The error of a call that asked for the network where none may be granted.
pub const NETWORK_OFF: &str = "network access is off here (safety.network: off): the command \
     did not run. Run it without `network`, or ask the user to allow the network";

/// The `run_shell` tool.
pub struct RunShell {
    spec: ToolSpec,
}

impl RunShell {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        RunShell {
            spec: spec(
                "run_shell",
                "Execute a shell command. REQUIRES CONFIRMATION. Use for git, build tools, tests, etc.",
                json!({
                    "command": {"type": "string", "description": "Shell command to execute", "required": true},
                    "working_directory": {"type": "string", "description": "Directory to run command in", "required": false, "default": "."},
                    "timeout_seconds": {"type": "integer", "description": "Max execution time", "required": false, "default": 30},
                    "network": {"type": "boolean", "description": "Run with outgoing network access over IP (the sandbox has none otherwise; still no listening and no local unix sockets), e.g. to download dependencies; the user may be asked first", "required": false, "default": false},
                    "reason": {"type": "string", "description": "With network: why the command needs it, shown to the user", "required": false},
                    "background": {"type": "boolean", "description": "Run as a background job (a dev server, a watcher): returns a job_id at once, no timeout; a server it starts on 127.0.0.1 answers the later commands", "required": false, "default": false}
                }),
            ),
        }
    }
}

impl Default for RunShell {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for RunShell {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            effect: Effect::Commands,
            kind: ActionKind::Execute,
            network: NetworkUse::WhenAsked,
            rule_subject: RuleSubject::Command,
            ..Declaration::default()
        }
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(arguments.get("command")?.as_str()?.to_owned())
    }

    /// `Ran cargo test: exit code 0` with the last lines of its output (stdout, then stderr).
    fn summarize(&self, arguments: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        if let Some(id) = result.get("job_id").and_then(Value::as_u64) {
            let command = arguments.get("command").and_then(Value::as_str)?;
            let first = command.lines().next().unwrap_or("");
            return Some(Summary {
                ok: true,
                headline: format!("Started job {id}: {}", truncate_chars(first, 60)),
                detail: Vec::new(),
                hidden: 0,
            });
        }
        let code = result.get("exit_code")?.as_i64()?;
        let flag = |key: &str| result.get(key).and_then(Value::as_bool) == Some(true);
        let why = if flag("cancelled") {
            " (cancelled by the user)"
        } else if flag("timed_out") {
            " (timed out)"
        } else {
            ""
        };
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .map(|command| command.lines().next().unwrap_or(""))
            .map(|first| format!("Ran {}: ", truncate_chars(first, 60)))
            .unwrap_or_default();
        let mut output: Vec<String> = Vec::new();
        for key in ["stdout", "stderr"] {
            let text = result.get(key).and_then(Value::as_str).unwrap_or("");
            output.extend(text.lines().map(str::to_owned));
        }
        while output.last().is_some_and(|line| line.trim().is_empty()) {
            output.pop();
        }
        let hidden = output.len().saturating_sub(SHELL_TAIL_LINES);
        let detail = output
            .split_off(hidden)
            .into_iter()
            .map(|line| match line.chars().count() {
                count if count > SHELL_LINE_CHARS => format!(
                    "{} ({} more chars)",
                    truncate_chars(&line, SHELL_LINE_CHARS),
                    thousands((count - SHELL_LINE_CHARS) as u64)
                ),
                _ => line,
            })
            .collect();
        Some(Summary {
            ok: code == 0 && why.is_empty(),
            headline: format!("{command}exit code {code}{why}"),
            detail,
            hidden,
        })
    }

    /// `[stdout]`, its lines, `[stderr]`, its lines, `[exit code N]`.
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        let code = result.get("exit_code")?;
        let mut lines = Vec::new();
        for key in ["stdout", "stderr"] {
            let output = result.get(key).and_then(Value::as_str).unwrap_or_default();
            if !output.trim().is_empty() {
                lines.push(format!("[{key}]"));
                lines.extend(output.lines().map(str::to_owned));
            }
        }
        lines.push(format!("[exit code {code}]"));
        Some(lines)
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let command = args.str("command")?;
        if command.contains('\0') {
            return Err(args.invalid("argument `command` contains a NUL byte"));
        }
        let working_directory = args.opt_str("working_directory")?.unwrap_or(".");
        let max = ctx.shell.max_timeout.as_secs();
        // The schema's default (30, as the spec writes it) gives way to the configured
        // `tools.builtin.run_shell.timeout_seconds` when the model does not choose one.
        let timeout = if args.is_given("timeout_seconds") {
            match args.int("timeout_seconds")? {
                Some(n) if n >= 1 && n.unsigned_abs() <= max => {
                    Duration::from_secs(n.unsigned_abs())
                }
                Some(n) => {
                    return Err(args.invalid(format!(
                        "argument `timeout_seconds` must be between 1 and {max}, got {n}"
                    )));
                }
                None => ctx.shell.default_timeout,
            }
        } else {
            ctx.shell.default_timeout
        };
        let network = args.bool("network")?;
        if network && !ctx.shell.network_allowed {
            return Err(ToolError::failed(NETWORK_OFF));
        }
        let dir = ctx.resolve(working_directory)?;
        if !dir.is_dir() {
            return Err(ToolError::failed(format!(
                "working_directory `{working_directory}` is not a directory"
            )));
        }
        let granted;
        let policy = if network {
            granted = ShellPolicy {
                network: true,
                ..ctx.shell.clone()
            };
            &granted
        } else {
            &ctx.shell
        };
        if args.bool("background")? {
            let id = (ctx.jobs.start(policy, &ctx.sandbox, command, &dir))
                .map_err(|e: ShellError| ToolError::failed(e.to_string()))?;
            return Ok(json!({
                "job_id": id,
                "running": true,
                "note": "started in the background; read_job_output shows its new output, stop_job ends it",
            }));
        }
        let output =
            shell::run_cancellable(policy, &ctx.sandbox, command, &dir, timeout, &ctx.cancel)
                .map_err(|e: ShellError| ToolError::failed(e.to_string()))?;
        let mut stdout = output.stdout.clone();
        if output.stdout_capped {
            stdout.push_str(&format!(
                "\n[stdout cut at {} bytes]",
                ctx.shell.output_cap_bytes
            ));
        }
        let mut stderr = output.stderr.clone();
        if output.stderr_capped {
            stderr.push_str(&format!(
                "\n[stderr cut at {} bytes]",
                ctx.shell.output_cap_bytes
            ));
        }
        if output.timed_out {
            stderr.push_str(&format!(
                "\n[timed out after {} s; the command and its child processes were killed]",
                timeout.as_secs()
            ));
        }
        if output.cancelled {
            stderr.push_str(CANCELLED_NOTE);
        }
        let mut result = json!({
            "exit_code": output.exit_code(),
            "stdout": stdout,
            "stderr": stderr,
            "timed_out": output.timed_out,
        });
        // Only present when true, so ordinary results keep their four fields.
        if output.cancelled {
            result["cancelled"] = Value::Bool(true);
        }
        Ok(result)
    }
}
