//! Tool calls as display lines: short arguments inline, long ones folded (their results:
//! [`tool_summary`](super::tool_summary)).

use serde_json::Value;
use ybs_core::ToolCall;

use super::inert;
use super::style::{Painter, Role};
use ybs_tools::summary::counted;

/// The longest call shown on one line.
pub const CALL_LINE_CHARS: usize = 120;
/// Argument values longer than this (or spanning lines) are folded.
const VALUE_CHARS: usize = 60;
/// How much of a folded value is shown.
const PREVIEW_CHARS: usize = 40;

/// `→ name {"arg":"value"}` when it fits on a line, else the name followed by one indented
/// line per argument, with long values folded to their start and their size.
pub fn call_lines(call: &ToolCall, painter: Painter) -> Vec<String> {
    let head = format!(
        "{} {}",
        painter.paint(Role::Dim, "→"),
        painter.paint(Role::ToolName, &inert(&call.name))
    );
    if let Some(error) = &call.arguments_error {
        let raw = call.arguments_text();
        return vec![format!(
            "{head} {} {}",
            inert(&preview(&raw, PREVIEW_CHARS)),
            painter.paint(
                Role::Failure,
                &format!("(arguments are not valid JSON: {error})")
            )
        )];
    }
    let compact = call.arguments.to_string();
    let Value::Object(arguments) = &call.arguments else {
        return vec![format!("{head} {}", fold(&call.arguments, painter))];
    };
    if compact.chars().count() + call.name.chars().count() + 3 <= CALL_LINE_CHARS
        && !compact.contains("\\n")
    {
        return vec![format!("{head} {}", inert(&compact))];
    }
    let mut lines = vec![head];
    for (name, value) in arguments {
        lines.push(format!("    {}: {}", inert(name), fold(value, painter)));
    }
    lines
}

/// One value: as JSON when short, else its start and its size.
fn fold(value: &Value, painter: Painter) -> String {
    match value {
        Value::String(text) if text.chars().count() > VALUE_CHARS || text.contains('\n') => {
            let first = text.lines().next().unwrap_or("");
            let shown = Value::String(truncate(first, PREVIEW_CHARS)).to_string();
            let lines = text.lines().count();
            let size = format!(
                "({}, {})",
                counted(lines as u64, "line", "lines"),
                counted(text.chars().count() as u64, "char", "chars")
            );
            format!("{} {}", inert(&shown), painter.paint(Role::Dim, &size))
        }
        other => {
            let json = other.to_string();
            let count = json.chars().count();
            if count > VALUE_CHARS {
                let size = format!("({})", counted(count as u64, "char", "chars"));
                format!(
                    "{} {}",
                    inert(&truncate(&json, PREVIEW_CHARS)),
                    painter.paint(Role::Dim, &size)
                )
            } else {
                inert(&json).into_owned()
            }
        }
    }
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

fn preview(text: &str, max: usize) -> String {
    truncate(text.trim(), max)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PLAIN: Painter = Painter { color: false };

    #[test]
    fn short_calls_fit_on_one_line() {
        let call = ToolCall::new("c1", "read_file", json!({"path": "src/main.rs"}));
        assert_eq!(
            call_lines(&call, PLAIN),
            [r#"→ read_file {"path":"src/main.rs"}"#]
        );
    }

    #[test]
    fn long_arguments_are_folded_with_their_size() {
        let content = "fn main() {\n    println!(\"hello\");\n}\n";
        let call = ToolCall::new(
            "c2",
            "write_file",
            json!({"path": "src/main.rs", "content": content}),
        );
        assert_eq!(
            call_lines(&call, PLAIN),
            // In the order the model wrote them (serde_json keeps it: `preserve_order`).
            [
                "→ write_file",
                "    path: \"src/main.rs\"",
                "    content: \"fn main() {\" (3 lines, 37 chars)",
            ]
        );
        let long = "x".repeat(200);
        let call = ToolCall::new(
            "c3",
            "search_files",
            json!({"pattern": long, "list": [1, 2]}),
        );
        assert_eq!(
            call_lines(&call, PLAIN),
            [
                "→ search_files",
                &format!("    pattern: \"{}…\" (1 line, 200 chars)", "x".repeat(40)),
                "    list: [1,2]",
            ]
        );
    }

    #[test]
    fn invalid_arguments_are_shown_raw_with_the_reason() {
        let call = ToolCall::from_raw_arguments("c4", "read_file", "{\"path\": ");
        let line = call_lines(&call, PLAIN).join("\n");
        assert!(
            line.starts_with("→ read_file {\"path\": (arguments are not valid JSON: "),
            "{line}"
        );
    }
}
