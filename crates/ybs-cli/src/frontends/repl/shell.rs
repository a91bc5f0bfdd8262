//! `!command` at the REPL prompt: the user's own shell command, run by the `run_shell` tool
//! (so in the sandbox, with its limits, and Ctrl-C stops it), its output shown and added to
//! the conversation as a user message, so the model sees it with the next request. The user
//! typed it, so it is not confirmed; with `run_shell` disabled, or in a dry run, it does not
//! run.

use std::io::Write;

use serde_json::{Value, json};
use ybs_core::{Message, ToolCall};

use crate::render::tool_summary::{self, Known};
use crate::render::{inert, style::Painter};
use crate::startup::load;
use ybs_agent::Agent;

/// The most characters of output put in the conversation (the head and the tail are kept).
const CONVERSATION_CHARS: usize = 30_000;

/// The command of a line typed at the prompt that starts with `!`, if any.
pub fn command(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix('!').map(str::trim)
}

/// Runs `command`, shows its output and adds it to the conversation. `Err` is a message for
/// the user (nothing was added).
pub fn run(
    command: &str,
    agent: &mut Agent,
    runtime: &tokio::runtime::Runtime,
    painter: Painter,
    out: &mut dyn Write,
) -> Result<(), String> {
    if command.is_empty() {
        return Err("`!` needs a command: !cargo test".into());
    }
    if agent.settings.dry_run {
        return Err(format!("dry run: `{command}` was not run"));
    }
    if !agent.registry.is_enabled("run_shell") {
        return Err("`!command` runs through the run_shell tool, which is disabled here".into());
    }
    let call = ToolCall::new("user-shell", "run_shell", json!({ "command": command }));
    agent.tool_context.cancel.reset();
    let result = runtime.block_on(load::cancellable(async |token| {
        let flag = agent.tool_context.cancel.clone();
        // The command blocks this thread; the runtime's worker sees Ctrl-C and stops it.
        let watcher = tokio::spawn(async move {
            token.cancelled().await;
            flag.cancel();
        });
        let result = agent.registry.invoke_call(&call, &agent.tool_context);
        watcher.abort();
        result
    }));
    let value: Value = serde_json::from_str(&result.content).unwrap_or(Value::Null);
    if result.is_error {
        let message = value["error"].as_str().unwrap_or(&result.content);
        return Err(format!("!{command}: {message}"));
    }
    // The output as the command wrote it (standard output, then standard error); the line
    // under it gives the exit code. `/last` shows the two apart.
    for key in ["stdout", "stderr"] {
        for line in value[key].as_str().unwrap_or("").lines() {
            let _ = writeln!(out, "{}", inert(line));
        }
    }
    let known = Known {
        tool: agent.registry.tool("run_shell"),
        arguments: Some(&call.arguments),
        change: None,
    };
    let summary = tool_summary::summarize("run_shell", &result, known);
    if let Some(headline) = tool_summary::lines(&summary, painter).first() {
        let _ = writeln!(out, "{headline}");
    }
    agent
        .conversation
        .push(Message::user(conversation_text(command, &value)));
    Ok(())
}

/// What the model is told: the command, its exit code and its output.
fn conversation_text(command: &str, value: &Value) -> String {
    let mut output = String::new();
    for key in ["stdout", "stderr"] {
        let text = value[key].as_str().unwrap_or("");
        if !text.trim().is_empty() {
            output.push_str(text.trim_end());
            output.push('\n');
        }
    }
    let chars = output.chars().count();
    if chars > CONVERSATION_CHARS {
        let head: String = output.chars().take(CONVERSATION_CHARS / 2).collect();
        let tail: String = output
            .chars()
            .skip(chars - CONVERSATION_CHARS / 2)
            .collect();
        output = format!(
            "{head}\n[… {} characters left out …]\n{tail}",
            chars - CONVERSATION_CHARS
        );
    }
    format!(
        "I ran a shell command myself:\n<command>{command}</command>\n<exit_code>{}</exit_code>\n<output>\n{}</output>",
        value["exit_code"], output
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bang_line_is_a_command() {
        assert_eq!(command("!cargo test"), Some("cargo test"));
        assert_eq!(command("  ! ls -la "), Some("ls -la"));
        assert_eq!(command("hello !"), None);
    }

    #[test]
    fn the_model_is_told_the_command_its_code_and_output() {
        let value = json!({"exit_code": 1, "stdout": "a\n", "stderr": "bad\n"});
        assert_eq!(
            conversation_text("make", &value),
            "I ran a shell command myself:\n<command>make</command>\n<exit_code>1</exit_code>\n\
             <output>\na\nbad\n</output>"
        );
    }
}
