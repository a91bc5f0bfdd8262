//! The six built-in tools of spec section 3, with the spec's schemas and result fields.

mod edit_file;
mod list_files;
mod read_file;
mod run_shell;
mod search_files;
mod write_file;

use std::sync::Arc;

use serde_json::Value;
use ybs_core::ToolSpec;

use crate::schema::parameters_to_schema;
use crate::tool::Tool;

pub use edit_file::EditFile;
pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use run_shell::RunShell;
pub use search_files::SearchFiles;
pub use write_file::WriteFile;

/// The names of the built-in tools, in the order they are offered to the model.
pub const BUILTIN_NAMES: [&str; 6] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_files",
    "search_files",
    "run_shell",
];

/// All six built-ins.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(WriteFile::new()),
        Arc::new(EditFile::new()),
        Arc::new(ListFiles::new()),
        Arc::new(SearchFiles::new()),
        Arc::new(RunShell::new()),
    ]
}

/// A spec from the spec document's parameter map (which is written out in each tool and is
/// known to be well formed).
fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    let schema = parameters_to_schema(&parameters).unwrap_or(parameters);
    ToolSpec::new(name, description, schema)
}

/// Text of a file, or an error for binary content (a NUL byte in the first 8 KiB).
fn text_of(bytes: Vec<u8>, shown: &str) -> Result<String, crate::ToolError> {
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
fn positive(args: &crate::Args, name: &str) -> Result<Option<usize>, crate::ToolError> {
    match args.int(name)? {
        None => Ok(None),
        Some(n) if n >= 1 => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        Some(n) => Err(args.invalid(format!("argument `{name}` must be at least 1, got {n}"))),
    }
}
