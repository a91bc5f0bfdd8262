//! The model's task list as data (`todo_write` sets it, the session state keeps it).

use serde::{Deserialize, Serialize};

/// Where an item of the list stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of the task list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What is to be done, in a short line.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}
