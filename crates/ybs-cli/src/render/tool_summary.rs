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
        let message = if message.starts_with(crate::agent::confirm::DENIED) {
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
mod tests {
    use serde_json::json;

    use super::*;

    const PLAIN: Painter = Painter { color: false };

    fn result(content: &str) -> ToolResult {
        ToolResult {
            call_id: "c".into(),
            name: None,
            content: content.into(),
            is_error: false,
        }
    }

    fn shown(name: &str, arguments: Value, content: Value, change: Option<Change>) -> Vec<String> {
        let known = Known {
            arguments: Some(&arguments),
            change,
        };
        lines(
            &summarize(name, &result(&content.to_string()), known),
            PLAIN,
        )
    }

    #[test]
    fn fetches_tasks_and_sub_agents_read_as_sentences() {
        let fetched = json!({"url": "http://127.0.0.1:9/a", "status": 200,
            "content_type": "text/html", "content": "# A\n\nb\n", "truncated": false});
        assert_eq!(
            shown("web_fetch", json!({}), fetched, None),
            ["  ✓ Fetched http://127.0.0.1:9/a (HTTP 200, 3 lines)"]
        );
        let todos = json!({"success": true, "summary": "1 of 2 done", "todos": []});
        assert_eq!(
            shown("todo_write", json!({}), todos, None),
            ["  ✓ Tasks: 1 of 2 done"]
        );
        let report = json!({"success": true, "report": "found it\nin src/a.rs"});
        assert_eq!(
            shown("task", json!({}), report, None),
            ["  ✓ Sub-agent reported (2 lines)"]
        );
    }

    #[test]
    fn the_built_in_tools_are_summarized_for_a_person() {
        let content: String = (1..=120).map(|n| format!("{n:>6}\tline\n")).collect();
        assert_eq!(
            shown(
                "read_file",
                json!({"path": "src/main.rs"}),
                json!({"content": content, "total_lines": 120, "truncated": false}),
                None
            ),
            ["  ✓ Read src/main.rs (120 lines)"]
        );
        assert_eq!(
            shown(
                "read_file",
                json!({"path": "big.rs", "offset": 11, "limit": 2}),
                json!({"content": "    11\ta\n    12\tb\n", "total_lines": 1200, "truncated": true}),
                None
            ),
            ["  ✓ Read big.rs (lines 11-12 of 1,200)"]
        );
        let change = Change {
            added: 3,
            removed: 1,
            created: false,
        };
        assert_eq!(
            shown(
                "edit_file",
                json!({"path": "src/main.rs"}),
                json!({"success": true, "replacements": 2, "error": null}),
                Some(change)
            ),
            ["  ✓ Edited src/main.rs (+3 -1)"]
        );
        assert_eq!(
            shown(
                "edit_file",
                json!({"path": "a.rs"}),
                json!({"success": true, "replacements": 2, "error": null}),
                None
            ),
            ["  ✓ Edited a.rs (2 replacements)"]
        );
        let created = Change {
            added: 4,
            removed: 0,
            created: true,
        };
        assert_eq!(
            shown(
                "write_file",
                json!({"path": "n.rs"}),
                json!({"success": true, "bytes_written": 40}),
                Some(created)
            ),
            ["  ✓ Created n.rs (+4 -0)"]
        );
        let files: Vec<String> = (0..42).map(|n| format!("f{n}")).collect();
        assert_eq!(
            shown(
                "list_files",
                json!({}),
                json!({"files": files, "total_matches": 42, "truncated": false}),
                None
            ),
            ["  ✓ Listed 42 files"]
        );
        let found = |file: &str| json!({"file": file, "line": 1, "content": "x"});
        assert_eq!(
            shown(
                "search_files",
                json!({"pattern": "x"}),
                json!({"matches": [found("a"), found("a"), found("b"), found("c"), found("c"),
                    found("c"), found("a")], "total_matches": 7, "truncated": false}),
                None
            ),
            ["  ✓ Found 7 matches in 3 files"]
        );
    }

    #[test]
    fn a_command_shows_its_exit_code_and_last_lines() {
        let stdout: String = (1..=8).map(|n| format!("line {n}\n")).collect();
        assert_eq!(
            shown(
                "run_shell",
                json!({"command": "cargo test"}),
                json!({"exit_code": 101, "stdout": stdout, "stderr": "error: failed\n",
                    "timed_out": false}),
                None
            ),
            [
                "  ✗ Ran cargo test: exit code 101",
                "    … 4 more lines above (/last shows all)",
                "    line 5",
                "    line 6",
                "    line 7",
                "    line 8",
                "    error: failed",
            ]
        );
        assert_eq!(
            shown(
                "run_shell",
                json!({"command": "sleep 9"}),
                json!({"exit_code": 137, "stdout": "", "stderr": "", "timed_out": false,
                    "cancelled": true}),
                None
            ),
            ["  ✗ Ran sleep 9: exit code 137 (cancelled by the user)"]
        );
        // A very long line is cut to a screenful's share.
        let long = format!("{}\n", "x".repeat(5000));
        let lines = shown(
            "run_shell",
            json!({"command": "cat min.js"}),
            json!({"exit_code": 0, "stdout": long, "stderr": "", "timed_out": false}),
            None,
        );
        assert_eq!(
            lines[1],
            format!("    {}… (4,800 more chars)", "x".repeat(SHELL_LINE_CHARS))
        );
    }

    #[test]
    fn failures_show_their_error_and_other_tools_their_size() {
        let failed = ToolResult {
            is_error: true,
            ..result(r#"{"success":false,"error":"path escapes the sandbox: /etc\nmore"}"#)
        };
        assert_eq!(
            lines(&summarize("read_file", &failed, Known::default()), PLAIN),
            ["  ✗ read_file: path escapes the sandbox: /etc"]
        );
        let denied = ToolResult {
            is_error: true,
            ..result(
                &json!({"success": false,
                    "error": crate::agent::confirm::denied_result("run_shell")})
                .to_string(),
            )
        };
        assert_eq!(
            lines(&summarize("run_shell", &denied, Known::default()), PLAIN),
            ["  ✗ run_shell: denied; it did not run"]
        );
        assert_eq!(
            lines(
                &summarize("mcp__x", &result("short"), Known::default()),
                PLAIN
            ),
            ["  ✓ mcp__x: short"]
        );
        assert_eq!(
            lines(
                &summarize("mcp__x", &result("a\nb\nc"), Known::default()),
                PLAIN
            ),
            ["  ✓ mcp__x: 3 lines, 5 chars"]
        );
    }

    #[test]
    fn escape_sequences_from_the_tool_are_shown_inert() {
        let lines = shown(
            "run_shell",
            json!({"command": "x"}),
            json!({"exit_code": 0, "stdout": "\u{1b}]0;pwned\u{7}\n", "stderr": "",
                "timed_out": false}),
            None,
        );
        assert!(!lines.concat().contains('\u{1b}'), "{lines:?}");
        assert!(lines.concat().contains("^[]0;pwned^G"), "{lines:?}");
    }

    #[test]
    fn the_whole_result_is_lines_of_text() {
        let call = ToolCall::new("c", "run_shell", json!({"command": "make"}));
        let whole = full(
            Some(&call),
            &result(&json!({"exit_code": 2, "stdout": "a\nb\n", "stderr": "bad\n"}).to_string()),
        );
        assert_eq!(
            whole,
            ["[stdout]", "a", "b", "[stderr]", "bad", "[exit code 2]"]
        );
    }
}
