//! `read_file`: numbered lines of a text file, a window of `limit` lines from `offset`.

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{positive, read_text, spec};
use crate::declaration::{ActionKind, Declaration};
use crate::summary::{Change, Summary, counted, number, path_of, thousands};
use crate::{Args, Tool, ToolContext, ToolError};

/// The `read_file` tool.
pub struct ReadFile {
    spec: ToolSpec,
}

impl ReadFile {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        ReadFile {
            spec: spec(
                "read_file",
                "Read the contents of a file. Use this before editing any file.",
                json!({
                    "path": {"type": "string", "description": "Path to file (relative to working directory)", "required": true},
                    "offset": {"type": "integer", "description": "Line number to start reading from (1-indexed)", "required": false, "default": 1},
                    "limit": {"type": "integer", "description": "Maximum number of lines to read", "required": false, "default": 500}
                }),
            ),
        }
    }
}

impl Default for ReadFile {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ReadFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration::looking(ActionKind::Read)
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(format!("Read {}", arguments.get("path")?.as_str()?))
    }

    /// `Read src/main.rs (120 lines)`, or `(lines 1-500 of 1,200)` for a part.
    fn summarize(&self, arguments: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let content = result.get("content")?.as_str()?;
        let total = number(result, "total_lines")?;
        let shown = content.lines().count() as u64;
        let first = number(arguments, "offset").unwrap_or(1).max(1);
        let path = path_of(arguments);
        if shown == total {
            return Some(Summary::ok(format!(
                "Read {path} ({})",
                counted(total, "line", "lines")
            )));
        }
        let last = (first + shown).saturating_sub(1);
        Some(Summary::ok(format!(
            "Read {path} (lines {}-{} of {})",
            thousands(first),
            thousands(last),
            thousands(total)
        )))
    }

    /// The file's numbered lines.
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        let content = result.get("content")?.as_str()?;
        Some(content.lines().map(str::to_owned).collect())
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = args.str("path")?;
        let offset = positive(args, "offset")?.unwrap_or(1);
        let limit = positive(args, "limit")?.unwrap_or(500);
        let resolved = ctx.resolve(path)?;
        let text = read_text(ctx, &resolved, path)?;
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len();
        if offset > 1 && offset > total {
            return Err(ToolError::failed(format!(
                "offset {offset} is past the end of `{path}`, which has {total} lines"
            )));
        }
        let end = total.min(offset - 1 + limit);
        let mut content = String::new();
        for (index, line) in lines[offset - 1..end].iter().enumerate() {
            content.push_str(&format!("{:>6}\t{line}\n", offset + index));
        }
        ctx.session.record_read(&resolved);
        Ok(json!({"content": content, "total_lines": total, "truncated": end < total}))
    }
}
