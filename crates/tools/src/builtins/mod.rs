//! The six built-in tools of spec section 3, with the spec's schemas and result fields.

mod edit_file;
mod list_files;
mod read_file;
mod run_shell;
mod search_files;
mod shared;
mod write_file;

use std::sync::Arc;

use crate::tool::Tool;

pub use edit_file::{Edit, EditFile, apply_edits, edits_of};
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
