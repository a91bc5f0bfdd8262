//! What a person wants to see of a tool's result, while the model gets all of it: `Read
//! src/main.rs (120 lines)`, `Edited src/main.rs (+3 -1)`, `Listed 42 files`, `Found 7
//! matches in 3 files`, a shell command's exit code and the last lines of its output. Each
//! tool writes its own summary ([`Tool::summarize`](ybs_tools::Tool::summarize)); a tool
//! without one (MCP, external) is shown by its size, or whole when short. [`full`] is the
//! whole result as lines (`/last`). Everything from the tool is made inert.

use serde_json::Value;
use ybs_core::ToolResult;
pub use ybs_tools::summary::{Change, Summary};
use ybs_tools::summary::{counted, truncate_chars};

use super::inert;
use super::numbers::thousands;
use super::style::{Painter, Role};

/// How much of a result without a summary of its tool's is shown in full.
const RESULT_CHARS: usize = 100;

/// What is known about a call besides its result: its tool, its arguments, and the lines it
/// added and removed when its change was previewed (write_file, edit_file).
#[derive(Clone, Copy, Default)]
pub struct Known<'a> {
    /// The tool called, as the agent's registry has it (built-in, external or MCP).
    pub tool: Option<&'a dyn ybs_tools::Tool>,
    /// The call's arguments, when the call was seen.
    pub arguments: Option<&'a Value>,
    /// Lines added and removed by the change, when previewed; `created` for a new file.
    pub change: Option<Change>,
}

/// The summary of `result`, a call of the tool `name`.
pub fn summarize(name: &str, result: &ToolResult, known: Known<'_>) -> Summary {
    let content = result.content.trim();
    let json: Option<Value> = serde_json::from_str(content).ok();
    if result.is_error
        || json
            .as_ref()
            .is_some_and(|v| v.get("success") == Some(&false.into()))
    {
        let message = (json.as_ref())
            .and_then(|value| value.get("error"))
            .and_then(Value::as_str)
            .unwrap_or(content);
        // The model's instructions after a "no" are not for the person who said it.
        let message = if message.starts_with(ybs_agent::confirm::DENIED) {
            "denied; it did not run"
        } else {
            message
        };
        return Summary {
            ok: false,
            headline: format!(
                "{name}: {}",
                truncate_chars(message.trim().lines().next().unwrap_or(""), RESULT_CHARS)
            ),
            detail: Vec::new(),
            hidden: 0,
        };
    }
    let arguments = known.arguments.unwrap_or(&Value::Null);
    if let (Some(tool), Some(json)) = (known.tool, &json)
        && let Some(summary) = tool.summarize(arguments, json, known.change)
    {
        return summary;
    }
    let shown = if content.chars().count() <= RESULT_CHARS && !content.contains('\n') {
        content.to_owned()
    } else {
        let lines = content.lines().count();
        format!(
            "{}, {} chars",
            counted(lines as u64, "line", "lines"),
            thousands(content.chars().count() as u64)
        )
    };
    Summary {
        ok: true,
        headline: format!("{name}: {shown}"),
        detail: Vec::new(),
        hidden: 0,
    }
}

/// The summary as display lines: `  ✓ headline`, then the detail indented and dimmed, then
/// how many lines are not shown.
pub fn lines(summary: &Summary, painter: Painter) -> Vec<String> {
    let (mark, role) = if summary.ok {
        ("✓", Role::Success)
    } else {
        ("✗", Role::Failure)
    };
    let mut lines = vec![
        format!(
            "  {} {}",
            painter.paint(role, mark),
            inert(&summary.headline)
        )
        .trim_end()
        .to_owned(),
    ];
    if summary.hidden > 0 {
        let note = format!(
            "    … {} more lines above (/last shows all)",
            summary.hidden
        );
        lines.push(painter.paint(Role::Dim, &note));
    }
    for line in &summary.detail {
        lines.push(format!("    {}", painter.paint(Role::Dim, &inert(line))));
    }
    lines
}

/// The whole result as lines to print (`/last`): a file's lines, a command's output, the
/// files listed or found; JSON pretty-printed otherwise. Not yet made inert.
pub fn full(tool: Option<&dyn ybs_tools::Tool>, result: &ToolResult) -> Vec<String> {
    let json: Option<Value> = serde_json::from_str(result.content.trim()).ok();
    let Some(value) = json else {
        return result.content.lines().map(str::to_owned).collect();
    };
    if let Some(lines) = tool.and_then(|tool| tool.result_lines(&value)) {
        return lines;
    }
    let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
    pretty.lines().map(str::to_owned).collect()
}

#[cfg(test)]
#[path = "tool_summary_tests.rs"]
mod tests;
