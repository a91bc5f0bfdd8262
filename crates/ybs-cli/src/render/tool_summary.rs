//! What a person wants to see of a tool's result, while the model gets all of it: `Read
//! src/main.rs (120 lines)`, `Edited src/main.rs (+3 -1)`, `Listed 42 files`, `Found 7
//! matches in 3 files`, a shell command's exit code and the last lines of its output. One
//! summarizer per tool in [`SUMMARIZERS`], keyed by the tool's name: a new tool adds a line
//! there; a tool without one (MCP, external) is shown by its size, or whole when short.
//! [`full`] is the whole result as lines (`/last`). Everything from the tool is made inert.

use serde_json::Value;
use ybs_core::{ToolCall, ToolResult};

use super::inert;
use super::numbers::thousands;
use super::style::{Painter, Role};

/// How many of the last lines of a command's output are shown.
pub const SHELL_TAIL_LINES: usize = 5;
/// How much of each of those lines is shown: a minified file or a progress bar printed on
/// one line would otherwise fill the screen.
const SHELL_LINE_CHARS: usize = 200;
/// How much of a result without a summarizer is shown in full.
const RESULT_CHARS: usize = 100;

/// What is known about a call besides its result: its arguments, and the lines it added and
/// removed when its change was previewed (write_file, edit_file).
#[derive(Debug, Clone, Copy, Default)]
pub struct Known<'a> {
    /// The call's arguments, when the call was seen.
    pub arguments: Option<&'a Value>,
    /// Lines added and removed by the change, when previewed; `created` for a new file.
    pub change: Option<Change>,
}

/// Lines a change adds and removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The file did not exist before.
    pub created: bool,
}

/// A result as shown: whether it succeeded, one line, and lines under it (plain text, not
/// yet made inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The call succeeded (a command that exited with another status than 0 did not).
    pub ok: bool,
    /// The line after the mark.
    pub headline: String,
    /// Lines shown under it (a command's last lines of output).
    pub detail: Vec<String>,
    /// How many lines of output are not shown.
    pub hidden: usize,
}

/// A tool's summarizer: from its arguments (`Null` when unknown), its result as JSON and
/// what else is known; `None` falls back to the generic summary.
type Summarizer = fn(&Value, &Value, Option<Change>) -> Option<Summary>;

/// The tools with a summary of their own.
const SUMMARIZERS: &[(&str, Summarizer)] = &[
    ("read_file", read_file),
    ("write_file", write_file),
    ("edit_file", edit_file),
    ("list_files", list_files),
    ("search_files", search_files),
    ("run_shell", run_shell),
    ("web_fetch", web_fetch),
    ("todo_write", todo_write),
    ("task", task),
];

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
                truncate(message.trim().lines().next().unwrap_or(""), RESULT_CHARS)
            ),
            detail: Vec::new(),
            hidden: 0,
        };
    }
    let own = SUMMARIZERS.iter().find(|(tool, _)| *tool == name);
    let arguments = known.arguments.unwrap_or(&Value::Null);
    if let (Some((_, summarizer)), Some(json)) = (own, &json)
        && let Some(summary) = summarizer(arguments, json, known.change)
    {
        return summary;
    }
    let shown = if content.chars().count() <= RESULT_CHARS && !content.contains('\n') {
        content.to_owned()
    } else {
        let lines = content.lines().count();
        format!(
            "{} {}, {} chars",
            thousands(lines as u64),
            plural(lines, "line", "lines"),
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
pub fn full(call: Option<&ToolCall>, result: &ToolResult) -> Vec<String> {
    let json: Option<Value> = serde_json::from_str(result.content.trim()).ok();
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = call.map_or("", |call| call.name.as_str());
    let mut lines: Vec<String> = Vec::new();
    match (&json, name) {
        (Some(value), "read_file") if text(value, "content").is_some() => {
            lines.extend(
                text(value, "content")
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned),
            );
        }
        (Some(value), "run_shell") if value.get("exit_code").is_some() => {
            for key in ["stdout", "stderr"] {
                let output = text(value, key).unwrap_or_default();
                if !output.trim().is_empty() {
                    lines.push(format!("[{key}]"));
                    lines.extend(output.lines().map(str::to_owned));
                }
            }
            lines.push(format!(
                "[exit code {}]",
                value.get("exit_code").unwrap_or(&Value::Null)
            ));
        }
        (Some(value), "list_files") if value.get("files").is_some() => {
            lines.extend(strings(value.get("files")));
        }
        (Some(value), "search_files") if value.get("matches").is_some() => {
            for found in value
                .get("matches")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                lines.push(format!(
                    "{}:{}: {}",
                    found.get("file").and_then(Value::as_str).unwrap_or(""),
                    found.get("line").unwrap_or(&Value::Null),
                    found.get("content").and_then(Value::as_str).unwrap_or("")
                ));
            }
        }
        (Some(value), _) => {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
            lines.extend(pretty.lines().map(str::to_owned));
        }
        (None, _) => lines.extend(result.content.lines().map(str::to_owned)),
    }
    lines
}

fn strings(value: Option<&Value>) -> impl Iterator<Item = String> + '_ {
    (value.and_then(Value::as_array).into_iter().flatten()).map(|item| {
        item.as_str()
            .map_or_else(|| item.to_string(), str::to_owned)
    })
}

fn ok(headline: String) -> Option<Summary> {
    Some(Summary {
        ok: true,
        headline,
        detail: Vec::new(),
        hidden: 0,
    })
}

fn path_of(arguments: &Value) -> String {
    arguments
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("the file")
        .to_owned()
}

fn plural<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

fn count(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// `Read src/main.rs (120 lines)`, or `(lines 1-500 of 1,200)` for a part.
fn read_file(arguments: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    let content = result.get("content")?.as_str()?;
    let total = count(result, "total_lines")?;
    let shown = content.lines().count() as u64;
    let first = count(arguments, "offset").unwrap_or(1).max(1);
    let path = path_of(arguments);
    if shown == total {
        return ok(format!(
            "Read {path} ({} {})",
            thousands(total),
            plural(total as usize, "line", "lines")
        ));
    }
    let last = (first + shown).saturating_sub(1);
    ok(format!(
        "Read {path} (lines {}-{} of {})",
        thousands(first),
        thousands(last),
        thousands(total)
    ))
}

fn change_note(change: Option<Change>) -> String {
    match change {
        Some(change) => format!(" (+{} -{})", change.added, change.removed),
        None => String::new(),
    }
}

/// `Created src/new.rs (+12 -0)` or `Wrote src/main.rs (+3 -1)`.
fn write_file(arguments: &Value, result: &Value, change: Option<Change>) -> Option<Summary> {
    let bytes = count(result, "bytes_written")?;
    let verb = if change.is_some_and(|change| change.created) {
        "Created"
    } else {
        "Wrote"
    };
    let note = match change {
        Some(_) => change_note(change),
        None => format!(" ({} bytes)", thousands(bytes)),
    };
    ok(format!("{verb} {}{note}", path_of(arguments)))
}

/// `Edited src/main.rs (+3 -1)`.
fn edit_file(arguments: &Value, result: &Value, change: Option<Change>) -> Option<Summary> {
    let replacements = count(result, "replacements")?;
    let note = match change {
        Some(_) => change_note(change),
        None => format!(
            " ({} {})",
            thousands(replacements),
            plural(replacements as usize, "replacement", "replacements")
        ),
    };
    ok(format!("Edited {}{note}", path_of(arguments)))
}

/// `Listed 42 files`, or `Listed 100 of 420 files`.
fn list_files(_: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    let listed = result.get("files")?.as_array()?.len() as u64;
    let total = count(result, "total_matches").unwrap_or(listed);
    if total > listed {
        return ok(format!(
            "Listed {} of {} files",
            thousands(listed),
            thousands(total)
        ));
    }
    ok(format!(
        "Listed {} {}",
        thousands(listed),
        plural(listed as usize, "file", "files")
    ))
}

/// `Found 7 matches in 3 files`, or `Found 120 matches (50 shown, in 3 files)`.
fn search_files(_: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    let matches = result.get("matches")?.as_array()?;
    let mut files: Vec<&str> = matches
        .iter()
        .filter_map(|found| found.get("file").and_then(Value::as_str))
        .collect();
    files.sort_unstable();
    files.dedup();
    let shown = matches.len() as u64;
    let total = count(result, "total_matches").unwrap_or(shown);
    let in_files = format!(
        "{} {}",
        thousands(files.len() as u64),
        plural(files.len(), "file", "files")
    );
    if total == 0 {
        return ok("Found no matches".to_owned());
    }
    if total > shown {
        return ok(format!(
            "Found {} matches ({} shown, in {in_files})",
            thousands(total),
            thousands(shown)
        ));
    }
    ok(format!(
        "Found {} {} in {in_files}",
        thousands(total),
        plural(total as usize, "match", "matches")
    ))
}

/// `Ran cargo test: exit code 0` with the last lines of its output (stdout, then stderr).
fn run_shell(arguments: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
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
        .map(|first| format!("Ran {}: ", truncate(first, 60)))
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
                truncate(&line, SHELL_LINE_CHARS),
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

/// `Fetched https://example.org/ (HTTP 200, 120 lines)`.
fn web_fetch(_: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    let url = result.get("url")?.as_str()?;
    let lines = result.get("content")?.as_str()?.lines().count();
    let cut = if result.get("truncated") == Some(&true.into()) {
        ", cut at the size limit"
    } else {
        ""
    };
    ok(format!(
        "Fetched {} (HTTP {}, {} {}{cut})",
        truncate(url, RESULT_CHARS),
        result.get("status").unwrap_or(&Value::Null),
        thousands(lines as u64),
        plural(lines, "line", "lines")
    ))
}

/// `Tasks: 1 of 3 done` (the list itself is shown as it changes).
fn todo_write(_: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    ok(format!("Tasks: {}", result.get("summary")?.as_str()?))
}

/// `Sub-agent reported (12 lines)`.
fn task(_: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
    let lines = result.get("report")?.as_str()?.lines().count();
    ok(format!(
        "Sub-agent reported ({} {})",
        thousands(lines as u64),
        plural(lines, "line", "lines")
    ))
}

/// The first `max` characters, with `…` when cut.
fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[path = "tool_summary_tests.rs"]
mod tests;
