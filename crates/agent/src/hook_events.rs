//! The hook events besides the tool hooks: a session starting and ending, a prompt submitted,
//! compaction about to run, the agent or a sub-agent stopping, and a notification. Each hook
//! of an event gets the event as JSON on stdin (`hook_event_name`, `cwd` and the event's
//! fields, named as Claude Code names them) and may answer: exit code 2 blocks (its output is
//! the reason), and on exit code 0 a JSON object on stdout may say `"decision": "block"` with a
//! `reason`, or give `additionalContext` (also inside `hookSpecificOutput`); plain text
//! printed by a `SessionStart` or `UserPromptSubmit` hook is context too. Another exit code
//! is shown as a warning and changes nothing.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Agent, Ui};
use crate::Notice;
use crate::config::EventHook;
use crate::hooks::HookRunner;

/// The most bytes of an event's JSON given to a hook (a command line holds it).
const MAX_EVENT_BYTES: usize = 64 * 1024;

/// The events, by the name the hook's JSON gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// A session started.
    SessionStart,
    /// A session ended.
    SessionEnd,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The conversation is about to be compacted.
    PreCompact,
    /// The agent is about to end its turn.
    Stop,
    /// A sub-agent finished.
    SubagentStop,
    /// ybs waits for the user.
    Notification,
}

impl HookEvent {
    /// The name in the event's JSON (`hook_event_name`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::Notification => "Notification",
        }
    }

    /// The configuration's key of its hooks (`hooks.user_prompt_submit`).
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session_start",
            HookEvent::SessionEnd => "session_end",
            HookEvent::UserPromptSubmit => "user_prompt_submit",
            HookEvent::PreCompact => "pre_compact",
            HookEvent::Stop => "stop",
            HookEvent::SubagentStop => "subagent_stop",
            HookEvent::Notification => "notification",
        }
    }

    /// Whether plain text a hook prints is context for the model.
    fn prints_context(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }
}

/// What the hooks of one event answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookAnswer {
    /// A hook blocked: the reason it gave.
    pub block: Option<String>,
    /// Context the hooks added, in order.
    pub context: Vec<String>,
}

impl Agent {
    /// Runs the hooks of `event` with `fields` (an object) as the event; the first hook that
    /// blocks ends the run.
    pub fn hook_event(
        &self,
        event: HookEvent,
        fields: Value,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> HookAnswer {
        self.hook_runner().event(event, fields, ui, cancel)
    }
}

impl HookRunner<'_> {
    /// Runs the hooks of `event` (see [`Agent::hook_event`]).
    pub(crate) fn event(
        &self,
        event: HookEvent,
        fields: Value,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> HookAnswer {
        let hooks = self.event_hooks(event);
        let mut answer = HookAnswer::default();
        if hooks.is_empty() {
            return answer;
        }
        let input = event_json(event, fields, &self.tool_context.working_dir);
        for hook in hooks {
            let seconds = hook.timeout_seconds.unwrap_or(self.hooks.timeout_seconds);
            let timeout = Duration::from_secs(seconds.max(1));
            let ran = self.run_line(&hook.command, Some(&input), timeout, cancel);
            let named = format!("the {} hook `{}`", event.key(), hook.command);
            if ran.cancelled {
                ui.notice(Notice::Warning, &format!("{named} was stopped"));
                return answer;
            }
            if ran.code == 2 {
                answer.block = Some(reason_or_code(&ran.output, ran.code));
                return answer;
            }
            if !ran.passed {
                ui.notice(
                    Notice::Warning,
                    &format!("{named} failed (exit code {}): {}", ran.code, ran.output),
                );
                continue;
            }
            let reply = ran.stdout.trim();
            match serde_json::from_str::<Value>(reply) {
                Ok(Value::Object(object)) => {
                    let text = |key: &str| object.get(key).and_then(Value::as_str);
                    let specific = object.get("hookSpecificOutput");
                    let context = text("additionalContext")
                        .or_else(|| specific.and_then(|s| s.get("additionalContext")?.as_str()));
                    if let Some(context) = context.filter(|c| !c.trim().is_empty()) {
                        answer.context.push(context.to_owned());
                    }
                    let stops = object.get("continue") == Some(&Value::Bool(false));
                    if text("decision") == Some("block") || stops {
                        let why = text("reason").or_else(|| text("stopReason"));
                        answer.block = Some(why.unwrap_or("the hook gave no reason").to_owned());
                        return answer;
                    }
                }
                _ if event.prints_context() && !reply.is_empty() => {
                    answer.context.push(reply.to_owned());
                }
                _ => {}
            }
        }
        answer
    }

    fn event_hooks(&self, event: HookEvent) -> Vec<EventHook> {
        let hooks = &self.hooks;
        match event {
            HookEvent::SessionStart => hooks.session_start.clone(),
            HookEvent::SessionEnd => hooks.session_end.clone(),
            HookEvent::UserPromptSubmit => hooks.user_prompt_submit.clone(),
            HookEvent::PreCompact => hooks.pre_compact.clone(),
            HookEvent::Stop => hooks.stop.clone(),
            HookEvent::SubagentStop => hooks.subagent_stop.clone(),
            HookEvent::Notification => hooks.notification.clone(),
        }
    }
}

impl Agent {
    /// Starts the session: runs the `session_start` hooks (`source`: `startup`, `resume`);
    /// the context they give goes with the first message.
    pub fn start_session(&mut self, source: &str, ui: &mut dyn Ui) {
        let answer = self.hook_event(
            HookEvent::SessionStart,
            json!({"source": source}),
            ui,
            &CancellationToken::new(),
        );
        self.pending_context.extend(answer.context);
    }

    /// Ends the session: runs the `session_end` hooks (`reason`: `exit`, `done`).
    pub fn end_session(&mut self, reason: &str, ui: &mut dyn Ui) {
        let _ = self.hook_event(
            HookEvent::SessionEnd,
            json!({"reason": reason}),
            ui,
            &CancellationToken::new(),
        );
    }
}

/// The event's JSON: its name, the working directory and `fields`, cut to
/// [`MAX_EVENT_BYTES`] by shortening its longest texts.
fn event_json(event: HookEvent, fields: Value, cwd: &std::path::Path) -> String {
    let mut object = match fields {
        Value::Object(object) => object,
        _ => serde_json::Map::new(),
    };
    object.insert("hook_event_name".into(), json!(event.name()));
    object.insert("cwd".into(), json!(cwd.display().to_string()));
    let mut text = Value::Object(object.clone()).to_string();
    if text.len() > MAX_EVENT_BYTES {
        for value in object.values_mut() {
            let long = value.to_string().len() > MAX_EVENT_BYTES / 8;
            if long {
                let shown: String = value
                    .to_string()
                    .chars()
                    .take(MAX_EVENT_BYTES / 8)
                    .collect();
                *value = json!(format!("{shown}… [cut: the event was too large]"));
            }
        }
        text = Value::Object(object).to_string();
    }
    text
}

fn reason_or_code(output: &str, code: i32) -> String {
    if output.trim().is_empty() {
        format!("exit code {code}")
    } else {
        output.trim().to_owned()
    }
}
