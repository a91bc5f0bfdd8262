//! `ybs exec --json`: the turn as one JSON object per line on stdout, for scripts. The event
//! names and fields are stable and described by `schema/exec-events.schema.json`; the exit
//! code is 0 when the turn finished, 1 when it failed, 2 for a usage error and 130 when it was
//! cancelled.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use ybs_context_budget::SendError;
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use super::{ExecArgs, LastMessage, read_task};
use crate::cli::Cli;
use crate::render::{RenderOptions, Renderer};
use crate::startup::exit::{Failed, USAGE_ERROR, exit_code};
use crate::startup::{images, load, turn};
use ybs_agent::Notice;
use ybs_agent::confirm::{Answer, ConfirmMode};
use ybs_agent::host::Host;
use ybs_agent::{AgentError, Stop, TurnReport, Ui};

/// One event as its JSON line (without the newline), `type` first so a reader sees it first.
pub fn event(kind: &str, fields: Value) -> String {
    let head = format!("{{\"type\":{}", Value::String(kind.into()));
    match fields {
        Value::Object(fields) if !fields.is_empty() => {
            let rest = Value::Object(fields).to_string();
            format!("{head},{}", &rest[1..])
        }
        _ => format!("{head}}}"),
    }
}

/// A [`Ui`] that writes each event as a JSON line. Confirmations are settled by the agent's
/// mode (`--yes` or deny); one that would still ask is denied, as there is no one to ask.
pub struct JsonUi<'a> {
    out: &'a mut dyn Write,
    /// Summarises tool results as the terminal display does, without colour.
    summary: Renderer,
}

impl<'a> JsonUi<'a> {
    /// Writes to `out`; results are summarized as their tools in `tools` declare.
    pub fn new(out: &'a mut dyn Write, tools: ybs_tools::ToolRegistry) -> Self {
        let summary = Renderer::new(RenderOptions {
            color: false,
            show_reasoning: true,
            show_tool_calls: true,
            show_token_usage: true,
        })
        .with_tools(tools);
        JsonUi { out, summary }
    }

    /// Writes one event line; a closed stdout must not stop the agent.
    pub fn emit(&mut self, kind: &str, fields: Value) {
        let _ = writeln!(self.out, "{}", event(kind, fields));
        let _ = self.out.flush();
    }

    fn summarize(&mut self, tool: &str, result: &ToolResult) -> String {
        self.summary.result_summary(tool, result).headline
    }
}

impl Ui for JsonUi<'_> {
    fn stream_event(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } if !text.is_empty() => {
                self.emit("text_delta", json!({ "text": text }));
            }
            StreamEvent::ThinkingDelta { text, .. } if !text.is_empty() => {
                self.emit("thinking_delta", json!({ "text": text }));
            }
            _ => {}
        }
    }

    fn reply_done(&mut self) {}

    fn preview(&mut self, preview: &crate::render::diff_view::Preview) {
        self.summary.preview(preview);
    }

    fn tool_call(&mut self, call: &ToolCall) {
        let _ = self.summary.tool_call(call);
        self.emit(
            "tool_call",
            json!({ "id": call.id, "name": call.name, "arguments": call.arguments }),
        );
    }

    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        let summary = self.summarize(tool, result);
        // The full result as JSON when it is JSON (built-in tools answer so), else as text.
        let full = serde_json::from_str::<Value>(&result.content)
            .unwrap_or_else(|_| Value::String(result.content.clone()));
        self.emit(
            "tool_result",
            json!({
                "id": result.call_id,
                "name": tool,
                "ok": !result.is_error,
                "summary": summary,
                "result": full,
            }),
        );
    }

    fn notice(&mut self, kind: Notice, message: &str) {
        let level = match kind {
            Notice::Warning => "warning",
            Notice::Error => "error",
            Notice::Info => "info",
        };
        self.emit("notice", json!({ "level": level, "message": message }));
    }

    fn usage(&mut self, turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {
        self.emit("usage", json!({ "usage": turn }));
    }

    fn confirm(&mut self, _call: &ToolCall, _reason: &str) -> Answer {
        Answer::No
    }
}

/// The `kind` of an `error` event for a failed turn.
fn error_kind(error: &AgentError) -> &'static str {
    match error {
        AgentError::Send(SendError::Provider(llm)) => llm.kind.name(),
        AgentError::Send(SendError::Budget(_)) => "context_budget",
        AgentError::Compaction(_) => "compaction",
        AgentError::WindowTooSmall(_) => "context_budget",
    }
}

fn stop_name(stop: Stop) -> &'static str {
    match stop {
        Stop::Finished => "finished",
        Stop::MaxIterations => "max_iterations",
        Stop::Stuck => "stuck",
        Stop::Cancelled => "cancelled",
    }
}

/// Paths relative to `cwd` where they are inside it.
fn relative(changed: &[PathBuf], cwd: &Path) -> Vec<String> {
    (changed.iter())
        .map(|path| {
            (path.strip_prefix(cwd).unwrap_or(path))
                .display()
                .to_string()
        })
        .collect()
}

/// `ybs exec --json`: runs the turn, writing events to `out`; `err` gets the same failures
/// in words. Returns the exit code.
pub fn run(
    cli: &Cli,
    host: &Host,
    args: &ExecArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let fail = |out: &mut dyn Write, err: &mut dyn Write, kind: &str, message: &str, code: u8| {
        let _ = writeln!(
            out,
            "{}",
            event("error", json!({ "kind": kind, "message": message }))
        );
        let _ = writeln!(err, "ybs: error: {}", crate::render::inert_lines(message));
        code
    };
    let task = match read_task(args.prompt, &mut io::stdin()) {
        Ok(task) => task,
        Err(message) => return fail(out, err, "usage", &message, USAGE_ERROR),
    };
    let last_message = match (args.last_message)
        .map(|path| LastMessage::open(&host.locations.cwd.join(path)))
        .transpose()
    {
        Ok(last_message) => last_message,
        Err(message) => return fail(out, err, "io", &message, 1),
    };
    let mut loaded = match load::load(cli, host, err) {
        Ok(loaded) => loaded,
        Err(Failed(message)) => return fail(out, err, "config", &message, 1),
    };
    match crate::startup::first_run::check(&mut loaded, host, false, err) {
        Ok(Some(note)) => {
            let _ = writeln!(err, "ybs: using {note}");
        }
        Ok(None) => {}
        Err(code) => {
            let message = "no provider configured and Ollama does not answer";
            let _ = writeln!(
                out,
                "{}",
                event(
                    "error",
                    json!({ "kind": "no_provider", "message": message })
                )
            );
            return code;
        }
    }
    let config = &loaded.config;
    let cwd = &host.locations.cwd;
    let images = match (cli.options.images.iter())
        .map(|path| images::image_part(path, cwd))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(images) => images,
        Err(message) => return fail(out, err, "image", &message, 1),
    };
    let had_images = !images.is_empty();
    let mode = if args.yes {
        ConfirmMode::AssumeYes
    } else {
        ConfirmMode::Deny
    };
    let mut agent =
        match load::build_agent((config, &loaded), host, ("exec", mode), &cli.options, err) {
            Ok(agent) => agent,
            Err(Failed(message)) => return fail(out, err, "setup", &message, 1),
        };
    agent.plan_mode = cli.options.plan;
    let resumed = match turn::resume(cli, host, &mut agent) {
        Ok(resumed) => resumed,
        Err(Failed(message)) => return fail(out, err, "session", &message, 1),
    };
    let session_file = host.session_file(resumed.as_deref());
    let baseline = turn::git_baseline(config, &host.locations.cwd, err);
    let runtime = match load::runtime() {
        Ok(runtime) => runtime,
        Err(Failed(message)) => return fail(out, err, "setup", &message, 1),
    };
    let result: Result<TurnReport, AgentError> = {
        let mut ui = JsonUi::new(out, agent.registry.clone());
        ui.emit(
            "session_started",
            json!({
                "provider": config.llm.provider,
                "model": config.llm.model,
                "cwd": cwd.display().to_string(),
                "session_file": session_file.as_ref().map(|path| path.display().to_string()),
            }),
        );
        let message = images::message(&task, images);
        runtime.block_on(load::cancellable(async |token| {
            agent.turn_message(message, &mut ui, &token).await
        }))
    };
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            let message = images::explain(
                load::describe(&error, config),
                had_images,
                &config.llm.model,
            );
            return fail(out, err, error_kind(&error), &message, 1);
        }
    };
    turn::after_turn(
        &mut agent,
        &report,
        &task,
        config,
        session_file.as_deref(),
        baseline.as_ref(),
        err,
    );
    let _ = writeln!(
        out,
        "{}",
        event(
            "turn_completed",
            json!({
                "stop": stop_name(report.stop),
                "text": report.reply,
                "files_changed": relative(&report.changed, cwd),
            }),
        )
    );
    if let Some(last_message) = last_message {
        if let Err(message) = last_message.write(&report.reply) {
            return fail(out, err, "io", &message, 1);
        }
    }
    exit_code(report.stop)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn events_carry_their_type_first() {
        let line = event("text_delta", json!({"text": "a"}));
        assert_eq!(line, r#"{"type":"text_delta","text":"a"}"#);
        assert_eq!(event("x", json!({})), r#"{"type":"x"}"#);
    }

    #[test]
    fn tool_results_are_summarised_and_kept_whole() {
        let mut out = Vec::new();
        {
            let mut ui = JsonUi::new(&mut out, ybs_tools::ToolRegistry::new());
            let result = ToolResult {
                call_id: "c1".into(),
                name: None,
                content: r#"{"content":"a\nb\n"}"#.into(),
                is_error: false,
            };
            ui.tool_result("read_file", &result);
        }
        let value: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["type"], "tool_result");
        assert_eq!(value["id"], "c1");
        assert_eq!(value["ok"], true);
        assert_eq!(value["result"]["content"], "a\nb\n");
        let summary = value["summary"].as_str().unwrap();
        assert!(!summary.contains('✓') && !summary.is_empty(), "{summary}");
    }
}
