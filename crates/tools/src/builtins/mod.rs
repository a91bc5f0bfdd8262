//! The built-in tools: the spec's six, with the spec's schemas and result fields,
//! the background jobs' `read_job_output` and `stop_job`, the model's task list (`todo_write`), a web page as text (`web_fetch`) and the spec of
//! the sub-agent tool (`task`, which the agent runs).

mod edit_file;
mod jobs;
mod list_files;
mod origin;
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
pub use jobs::{ReadJobOutput, StopJob};
pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use run_shell::{NETWORK_OFF, RunShell, SHELL_TAIL_LINES};
pub use search_files::SearchFiles;
pub use task::Task;
pub use todo_write::{MAX_TODOS, Todo, TodoStatus, TodoWrite, todos_of};
pub use web_fetch::{WebFetch, WebPolicy, url_host};
pub use write_file::WriteFile;

/// The built-in tool `name`, as it declares itself, for callers without a registry at hand
/// (a front end summarizing a result it was handed).
pub fn find(name: &str) -> Option<Arc<dyn Tool>> {
    static ALL: std::sync::OnceLock<Vec<Arc<dyn Tool>>> = std::sync::OnceLock::new();
    let all = ALL.get_or_init(all);
    all.iter().find(|tool| tool.spec().name == name).cloned()
}

/// What the built-in tool `name` declares, or the conservative default for another name.
pub fn declaration_of(name: &str) -> crate::Declaration {
    find(name).map_or_else(crate::Declaration::default, |tool| tool.declaration())
}

/// All the built-ins, in the order they are offered to the model.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(WriteFile::new()),
        Arc::new(EditFile::new()),
        Arc::new(ListFiles::new()),
        Arc::new(SearchFiles::new()),
        Arc::new(RunShell::new()),
        Arc::new(ReadJobOutput::new()),
        Arc::new(StopJob::new()),
        Arc::new(TodoWrite::new()),
        Arc::new(WebFetch::new()),
        Arc::new(Task::new()),
    ]
}
