//! `write_file`: create or overwrite a file atomically, creating parent directories.

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{spec, write_text};
use crate::declaration::{ActionKind, Declaration};
use crate::summary::{Change, Summary, change_note, counted, number, path_of};
use crate::{Args, Tool, ToolContext, ToolError};

/// The `write_file` tool.
pub struct WriteFile {
    spec: ToolSpec,
}

impl WriteFile {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        WriteFile {
            spec: spec(
                "write_file",
                "Write content to a file. Creates parent directories if needed. REQUIRES CONFIRMATION.",
                json!({
                    "path": {"type": "string", "description": "Path to file (relative to working directory)", "required": true},
                    "content": {"type": "string", "description": "Complete file contents to write", "required": true}
                }),
            ),
        }
    }
}

impl Default for WriteFile {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for WriteFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration::file_changing(ActionKind::Edit)
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(format!("Write {}", arguments.get("path")?.as_str()?))
    }

    /// `Created src/new.rs (+12 -0)` or `Wrote src/main.rs (+3 -1)`.
    fn summarize(
        &self,
        arguments: &Value,
        result: &Value,
        change: Option<Change>,
    ) -> Option<Summary> {
        let bytes = number(result, "bytes_written")?;
        let verb = if change.is_some_and(|change| change.created) {
            "Created"
        } else {
            "Wrote"
        };
        let note = match change {
            Some(change) => change_note(change),
            None => format!(" ({})", counted(bytes, "byte", "bytes")),
        };
        Some(Summary::ok(format!("{verb} {}{note}", path_of(arguments))))
    }

    fn text_after(&self, _before: Option<&str>, arguments: &Value) -> Option<String> {
        Some(arguments.get("content")?.as_str()?.to_owned())
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = args.str("path")?;
        let content = args.str("content")?;
        let resolved = ctx.resolve(path)?;
        write_text(ctx, &resolved, content)?;
        ctx.session.record_read(&resolved);
        Ok(json!({"success": true, "bytes_written": content.len()}))
    }
}
