//! The built-in tools: the six of spec section 3, with the spec's schemas and result fields,
//! the model's task list (`todo_write`), a web page as text (`web_fetch`) and the spec of
//! the sub-agent tool (`task`, which the agent runs).

mod edit_file;
mod list_files;
mod read_file;
mod run_shell;
mod search_files;
mod shared;
mod task;
mod todo_write;
mod walk;
mod walk_rules;
pub mod web_fetch;
mod write_file;

use std::sync::Arc;

use crate::tool::Tool;

pub use edit_file::{Edit, EditFile, apply_edits, edits_of};
pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use run_shell::{NETWORK_OFF, RunShell};
pub use search_files::SearchFiles;
pub use task::Task;
pub use todo_write::{MAX_TODOS, Todo, TodoStatus, TodoWrite, todos_of};
pub use web_fetch::{WebFetch, WebPolicy, url_host};
pub use write_file::WriteFile;

/// The names of the built-in tools, in the order they are offered to the model.
pub const BUILTIN_NAMES: [&str; 9] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_files",
    "search_files",
    "run_shell",
    "todo_write",
    "web_fetch",
    "task",
];

/// All the built-ins.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(WriteFile::new()),
        Arc::new(EditFile::new()),
        Arc::new(ListFiles::new()),
        Arc::new(SearchFiles::new()),
        Arc::new(RunShell::new()),
        Arc::new(TodoWrite::new()),
        Arc::new(WebFetch::new()),
        Arc::new(Task::new()),
    ]
}
