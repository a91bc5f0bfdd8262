//! The hooks of the configuration (`hooks`) at work: before a tool call (a failing hook
//! refuses it, and its output is the reason the model gets), after one (formatters), and
//! the checks after a turn that changed files (`lint`, then `test`), whose failure goes back
//! to the model for a bounded number of rounds. Every hook runs with `sh -c` in the shell
//! sandbox of `run_shell`, in the project directory.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use ybs_core::ToolCall;
use ybs_tools::shell;
use ybs_tools::tool::CancelFlag;

use super::tools::CancelWatch;
use super::{Agent, Ui};
use crate::Notice;
use crate::config::{HooksConfig, ToolHook};

/// The most characters of a hook's output passed on.
const OUTPUT_CHARS: usize = 4_000;

/// How a hook ended.
pub(crate) struct Ran {
    /// Exit code 0.
    pub(crate) passed: bool,
    /// Stopped by the user (Ctrl-C): the hook's process group was killed.
    pub(crate) cancelled: bool,
    /// The code, as a shell reports it.
    pub(crate) code: i32,
    /// stdout and stderr, cut to their last [`OUTPUT_CHARS`].
    pub(crate) output: String,
    /// stdout alone, for an answer in JSON (cut likewise).
    pub(crate) stdout: String,
}

impl Agent {
    /// Runs the `before_tool` hooks of `call`: the reason the call is refused, if one fails
    /// or the user stops it.
    pub(super) fn before_tool_hooks(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Option<String> {
        for command in commands_for(&self.hooks.before_tool, &call.name) {
            let ran = self.run_hook(&command, Some((call, "PreToolUse")), cancel);
            if ran.cancelled {
                ui.notice(
                    Notice::Warning,
                    &format!(
                        "the before_tool hook `{command}` was stopped; {} did not run",
                        call.name
                    ),
                );
                return Some(format!(
                    "The user stopped the before_tool hook `{command}`; the call did not run."
                ));
            }
            if !ran.passed {
                ui.notice(
                    Notice::Warning,
                    &format!("{} refused by the before_tool hook `{command}`", call.name),
                );
                let why = if ran.output.is_empty() {
                    format!("exit code {}", ran.code)
                } else {
                    ran.output
                };
                return Some(format!(
                    "Refused by the user's before_tool hook `{command}`; the call did not run. \
                     The hook said: {why}"
                ));
            }
            if let Some(why) = refusal(&ran.stdout) {
                ui.notice(
                    Notice::Warning,
                    &format!("{} refused by the before_tool hook `{command}`", call.name),
                );
                return Some(format!(
                    "Refused by the user's before_tool hook `{command}`; the call did not run. \
                     The hook said: {why}"
                ));
            }
        }
        None
    }

    /// Runs the `after_tool` hooks of a successful `call`; a failure is shown.
    /// Once the user stops one, the rest do not run.
    pub(super) fn after_tool_hooks(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) {
        for command in commands_for(&self.hooks.after_tool, &call.name) {
            let ran = self.run_hook(&command, Some((call, "PostToolUse")), cancel);
            if ran.cancelled {
                ui.notice(
                    Notice::Warning,
                    &format!("the after_tool hook `{command}` was stopped"),
                );
                return;
            }
            if !ran.passed {
                ui.notice(
                    Notice::Warning,
                    &format!(
                        "the after_tool hook `{command}` failed (exit code {}): {}",
                        ran.code, ran.output
                    ),
                );
            }
        }
    }

    /// After a reply that ended a turn which changed files: runs `lint`, then `test`. The
    /// message for the model when one fails and rounds are left (`round` counts from 1).
    /// A check the user stops ends the checks.
    pub(super) fn check_changes(
        &mut self,
        round: u32,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let checks: Vec<(&str, String)> = [("lint", &self.hooks.lint), ("test", &self.hooks.test)]
            .into_iter()
            .filter_map(|(name, command)| Some((name, command.clone()?)))
            .collect();
        for (name, command) in checks {
            ui.notice(
                Notice::Info,
                &format!("running the {name} command `{command}`"),
            );
            let ran = self.run_hook(&command, None, cancel);
            if ran.cancelled {
                ui.notice(
                    Notice::Warning,
                    &format!("the {name} command `{command}` was stopped"),
                );
                return None;
            }
            if ran.passed {
                continue;
            }
            let max = self.hooks.max_rounds;
            if round > max {
                ui.notice(
                    Notice::Warning,
                    &format!(
                        "the {name} command `{command}` still fails (exit code {}) after {max} \
                         rounds; stopping here",
                        ran.code
                    ),
                );
                return None;
            }
            ui.notice(
                Notice::Warning,
                &format!(
                    "the {name} command failed (exit code {}); its output goes back to the \
                     model (round {round} of {max})",
                    ran.code
                ),
            );
            return Some(format!(
                "The {name} command `{command}` failed after your changes (exit code {}). Its \
                 output:\n\n{}\n\nFix the cause, then stop.",
                ran.code, ran.output
            ));
        }
        None
    }

    /// Runs one hook in the sandbox; the call's tool and arguments are in its environment,
    /// and the event (`PreToolUse`, `PostToolUse`) is its stdin as JSON. Cancelling `cancel`
    /// (Ctrl-C) kills it.
    fn run_hook(
        &self,
        command: &str,
        call: Option<(&ToolCall, &str)>,
        cancel: &CancellationToken,
    ) -> Ran {
        let timeout = Duration::from_secs(self.hooks.timeout_seconds.max(1));
        let Some((call, event)) = call else {
            return self.run_hook_line(command, None, timeout, cancel);
        };
        let line = format!(
            "export YBS_TOOL={} YBS_TOOL_ARGS={}; {command}",
            shell_words::quote(&call.name),
            shell_words::quote(&call.arguments.to_string())
        );
        let mut input = serde_json::json!({
            "hook_event_name": event,
            "cwd": self.tool_context.working_dir.display().to_string(),
            "tool_name": call.name,
            "tool_input": call.arguments,
        })
        .to_string();
        // A command line holds the event: huge arguments stay in `$YBS_TOOL_ARGS` only.
        if input.len() > 64 * 1024 {
            input =
                serde_json::json!({"hook_event_name": event, "tool_name": call.name}).to_string();
        }
        self.run_hook_line(&line, Some(&input), timeout, cancel)
    }

    /// Runs the shell line of a hook (see [`HookRunner::run_line`]).
    pub(crate) fn run_hook_line(
        &self,
        line: &str,
        stdin: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Ran {
        self.hook_runner().run_line(line, stdin, timeout, cancel)
    }

    /// What running a hook needs, borrowed from this agent.
    pub(crate) fn hook_runner(&self) -> HookRunner<'_> {
        HookRunner {
            hooks: &self.hooks,
            tool_context: &self.tool_context,
        }
    }
}

/// What running a hook needs, borrowed apart from the rest of the agent: the approval of a
/// call holds the rules mutably while the `notification` hooks run.
#[derive(Clone, Copy)]
pub struct HookRunner<'a> {
    pub(crate) hooks: &'a HooksConfig,
    pub(crate) tool_context: &'a ybs_tools::ToolContext,
}

impl HookRunner<'_> {
    /// Runs the shell line of a hook, with `stdin` as its standard input when given, for at
    /// most `timeout`; in the sandbox unless `hooks.sandbox` is off.
    pub(crate) fn run_line(
        &self,
        line: &str,
        stdin: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Ran {
        if cancel.is_cancelled() {
            return Ran {
                passed: false,
                cancelled: true,
                code: -1,
                output: String::new(),
                stdout: String::new(),
            };
        }
        // The shell runs commands with stdin closed: the event is piped in by the line itself.
        let line = match stdin {
            Some(input) => format!("printf '%s' {} | {{\n{line}\n}}", shell_words::quote(input)),
            None => line.to_owned(),
        };
        let line = line.as_str();
        let context = &self.tool_context;
        // `blocked_commands` guards the model's commands; a hook is the user's own, and the
        // call's arguments in its line are quoted data that must not trip it.
        let mut policy = context.shell.clone();
        policy.blocked_commands.clear();
        if !self.hooks.sandbox {
            policy.sandbox_enabled = false;
        }
        // A flag of its own: the tools' flag is reset and watched by the call that runs.
        let flag = CancelFlag::new();
        let watch = CancelWatch::start(cancel, &flag);
        let result = shell::run_cancellable(
            &policy,
            &context.sandbox,
            line,
            &context.working_dir,
            timeout,
            &flag,
        );
        drop(watch);
        match result {
            Ok(output) => {
                let mut text = format!("{}{}", output.stdout, output.stderr);
                if output.timed_out {
                    text.push_str(&format!("\n[timed out after {} s]", timeout.as_secs()));
                }
                Ran {
                    passed: output.exit_code() == 0 && !output.timed_out && !output.cancelled,
                    cancelled: output.cancelled,
                    code: output.exit_code(),
                    output: tail(text.trim(), OUTPUT_CHARS),
                    stdout: tail(output.stdout.trim(), OUTPUT_CHARS),
                }
            }
            Err(error) => Ran {
                passed: false,
                cancelled: false,
                code: -1,
                output: format!("the hook could not run: {error}"),
                stdout: String::new(),
            },
        }
    }
}

/// The reason a `before_tool` hook that exited 0 refuses its call with, when its stdout is
/// a JSON answer saying so: `"decision": "block"` (or `"deny"`), or Claude Code's
/// `hookSpecificOutput.permissionDecision: "deny"`.
fn refusal(stdout: &str) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).ok()?;
    let specific = answer.get("hookSpecificOutput");
    let decision = (answer.get("decision").and_then(|d| d.as_str()))
        .or_else(|| specific?.get("permissionDecision")?.as_str())?;
    if !matches!(decision, "block" | "deny") {
        return None;
    }
    let reason = (answer.get("reason").and_then(|r| r.as_str()))
        .or_else(|| specific?.get("permissionDecisionReason")?.as_str())
        .unwrap_or("the hook gave no reason");
    Some(reason.to_owned())
}

/// The commands of the `hooks` that apply to the tool `name`, in order.
fn commands_for(hooks: &[ToolHook], name: &str) -> Vec<String> {
    (hooks.iter())
        .filter(|hook| hook.applies_to(name))
        .map(|hook| hook.command.clone())
        .collect()
}

/// The last `max` characters of `text`, marked when cut.
fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - max).collect();
    format!("[first {} characters cut]\n{kept}", count - max)
}

/// Whether `hooks` has a check to run after a turn that changed files.
pub fn has_checks(hooks: &HooksConfig) -> bool {
    hooks.lint.is_some() || hooks.test.is_some()
}
