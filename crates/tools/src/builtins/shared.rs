//! What the built-in tools share: a spec from the spec document's parameter map, a positive
//! integer argument, and the text of a file that must not be binary.

use serde_json::Value;
use ybs_core::ToolSpec;

use crate::schema::parameters_to_schema;

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
            "`{shown}` is a binary file ({} bytes); only text files can be read or edited",
            bytes.len()
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
