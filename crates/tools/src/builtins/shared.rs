//! What the built-in tools share: a spec from the spec document's parameter map, a positive
//! integer argument, the text of a file that must not be binary, and reading and writing a
//! file's text (through the session's editor when it has one).

use std::path::Path;

use serde_json::Value;
use ybs_core::ToolSpec;

use crate::schema::parameters_to_schema;
use ybs_fsguard::guarded;

use crate::{ToolContext, ToolError};

/// A spec from the spec document's parameter map (which is written out in each tool and is
/// known to be well formed).
pub(super) fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    let schema = parameters_to_schema(&parameters).unwrap_or(parameters);
    ToolSpec::new(name, description, schema)
}

/// Text of a file, or an error for binary content (a NUL byte in the first 8 KiB).
pub(super) fn text_of(bytes: Vec<u8>, shown: &str) -> Result<String, crate::ToolError> {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(crate::ToolError::failed(format!(
            "`{shown}` is a binary file ({}); only text files can be read or edited",
            crate::summary::counted(bytes.len() as u64, "byte", "bytes")
        )));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// A positive integer argument.
pub(super) fn positive(args: &crate::Args, name: &str) -> Result<Option<usize>, crate::ToolError> {
    match args.int(name)? {
        None => Ok(None),
        Some(n) if n >= 1 => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        Some(n) => Err(args.invalid(format!("argument `{name}` must be at least 1, got {n}"))),
    }
}

/// The text of the file `resolved` (shown to the model as `shown`) for a file tool: read from
/// disk with the sandbox's checks (binary files refused), then as the editor holds it.
pub(super) fn read_text(
    ctx: &ToolContext,
    resolved: &Path,
    shown: &str,
) -> Result<String, ToolError> {
    let disk = text_of(guarded::read(&ctx.sandbox, resolved)?, shown)?;
    Ok(ctx.editor.text_or(resolved, disk))
}

/// Writes `text` to the file `resolved` for a file tool: through the editor when there is one
/// and it can write there in place ([`guarded::editor_may_write`], see [`crate::editor`]), else atomically on disk.
pub(super) fn write_text(ctx: &ToolContext, resolved: &Path, text: &str) -> Result<(), ToolError> {
    if let Some(files) = ctx.editor.files().filter(|files| files.writes())
        && guarded::editor_may_write(&ctx.sandbox, resolved)?
    {
        return files
            .write(resolved, text)
            .map_err(|why| ToolError::failed(format!("the editor could not write it: {why}")));
    }
    guarded::write_atomic(&ctx.sandbox, resolved, text.as_bytes())?;
    Ok(())
}
