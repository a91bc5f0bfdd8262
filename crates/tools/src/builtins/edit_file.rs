//! `edit_file`: replace exact text, uniquely unless `replace_all`.

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{spec, text_of};
use crate::{Args, Tool, ToolContext, ToolError, safe_fs};

/// The `edit_file` tool (spec 3.3).
pub struct EditFile {
    spec: ToolSpec,
}

impl EditFile {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        EditFile {
            spec: spec(
                "edit_file",
                "Edit a file by replacing exact text matches. Use read_file first to see current content.",
                json!({
                    "path": {"type": "string", "description": "Path to file", "required": true},
                    "old_text": {"type": "string", "description": "Exact text to find and replace (must be unique in file)", "required": true},
                    "new_text": {"type": "string", "description": "Text to replace with", "required": true},
                    "replace_all": {"type": "boolean", "description": "Replace all occurrences (default: false, fails if not unique)", "required": false, "default": false}
                }),
            ),
        }
    }
}

impl Default for EditFile {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for EditFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = args.str("path")?;
        let mut old_text = args.str("old_text")?.to_string();
        let mut new_text = args.str("new_text")?.to_string();
        let replace_all = args.bool("replace_all")?;
        if old_text.is_empty() {
            return Err(ToolError::failed(
                "old_text is empty; give the exact text to replace (use write_file to write a whole file)",
            ));
        }
        let resolved = ctx.resolve(path)?;
        let text = text_of(safe_fs::read(&ctx.sandbox, &resolved)?, path)?;
        // A CRLF file edited with LF text: match and write in the file's line endings.
        if text.contains("\r\n") && !old_text.contains('\r') {
            old_text = old_text.replace('\n', "\r\n");
            new_text = new_text.replace('\n', "\r\n");
        }
        let starts: Vec<usize> = text.match_indices(&old_text).map(|(i, _)| i).collect();
        if starts.is_empty() {
            return Err(ToolError::failed(not_found_message(path, &text, &old_text)));
        }
        if starts.len() > 1 && !replace_all {
            let lines: Vec<String> = starts
                .iter()
                .map(|&i| line_of(&text, i).to_string())
                .collect();
            return Err(ToolError::failed(format!(
                "old_text is not unique in `{path}`: it matches {} times (lines {}); include more surrounding lines to make it unique, or set replace_all to true",
                starts.len(),
                lines.join(", ")
            )));
        }
        let updated = text.replace(&old_text, &new_text);
        safe_fs::write_atomic(&ctx.sandbox, &resolved, updated.as_bytes())?;
        ctx.session.record_read(&resolved);
        Ok(json!({"success": true, "replacements": starts.len(), "error": null}))
    }
}

/// The 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Says the text was not found and, when the first line of `old_text` appears with other
/// indentation, where.
fn not_found_message(path: &str, text: &str, old_text: &str) -> String {
    let first = old_text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let near: Vec<String> = if first.is_empty() {
        Vec::new()
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, line)| line.trim() == first)
            .map(|(i, _)| (i + 1).to_string())
            .take(10)
            .collect()
    };
    if near.is_empty() {
        format!(
            "old_text was not found in `{path}`; read the file again and copy the exact text to replace"
        )
    } else {
        format!(
            "old_text was not found in `{path}`; its first line appears (ignoring indentation) at line {}: check whitespace and the following lines",
            near.join(", ")
        )
    }
}
