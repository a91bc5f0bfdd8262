//! `todo_write`: the model's short task list for the session. Each call replaces the whole
//! list; the list is kept in the session state, where the front end shows it as it changes.

use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::spec;
use crate::declaration::{Declaration, Effect, NetworkUse};
use crate::summary::{Change, Summary};
pub use crate::todo::{Todo, TodoStatus};
use crate::{Args, Tool, ToolContext, ToolError};

/// The most items a list may have: a plan, not a backlog.
pub const MAX_TODOS: usize = 50;

/// The list of a `todo_write` call's arguments (or of its result, which carries it too).
pub fn todos_of(value: &Value) -> Result<Vec<Todo>, String> {
    let list = value
        .get("todos")
        .ok_or_else(|| "missing required argument `todos`".to_owned())?;
    let todos: Vec<Todo> = serde_json::from_value(list.clone()).map_err(|error| {
        format!(
            "`todos` must be a list of {{content, status}} with status pending, in_progress \
             or completed: {error}"
        )
    })?;
    if todos.len() > MAX_TODOS {
        return Err(format!(
            "`todos` has {} items; keep the list to at most {MAX_TODOS}",
            todos.len()
        ));
    }
    if let Some(empty) = todos.iter().position(|todo| todo.content.trim().is_empty()) {
        return Err(format!("item {} of `todos` has no content", empty + 1));
    }
    Ok(todos)
}

/// The `todo_write` tool.
pub struct TodoWrite {
    spec: ToolSpec,
}

impl TodoWrite {
    /// The tool with its schema.
    pub fn new() -> Self {
        TodoWrite {
            spec: spec(
                "todo_write",
                "Keep a short task list for a task of several steps, shown to the user as it \
                 changes. Send the whole list each time (it replaces the previous one): each \
                 item's content and status (pending, in_progress, completed). Keep one item \
                 in_progress at a time and mark items completed as soon as they are done. Skip \
                 it for a task of one or two steps.",
                json!({
                    "type": "object",
                    "properties": {
                        "todos": {
                            "type": "array",
                            "description": "The whole task list, in order",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "content": {"type": "string", "description": "The step, in a short line"},
                                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                                },
                                "required": ["content", "status"]
                            }
                        }
                    },
                    "required": ["todos"]
                }),
            ),
        }
    }
}

impl Default for TodoWrite {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for TodoWrite {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            effect: Effect::TaskList,
            network: NetworkUse::Never,
            ..Declaration::default()
        }
    }

    /// `Tasks: 1 of 3 done` (the list itself is shown as it changes).
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        Some(Summary::ok(format!(
            "Tasks: {}",
            result.get("summary")?.as_str()?
        )))
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let todos = todos_of(&args.to_value()).map_err(|message| args.invalid(message))?;
        let done = (todos.iter())
            .filter(|todo| todo.status == TodoStatus::Completed)
            .count();
        let summary = format!("{done} of {} done", todos.len());
        ctx.session.set_todos(todos.clone());
        Ok(json!({"success": true, "summary": summary, "todos": todos}))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_list_reads_back_and_bad_items_are_refused() {
        let todos = todos_of(&json!({"todos": [
            {"content": "read", "status": "completed"},
            {"content": "fix", "status": "in_progress"}
        ]}))
        .unwrap();
        assert_eq!(todos[1].status, TodoStatus::InProgress);
        let error = todos_of(&json!({"todos": [{"content": "x", "status": "doing"}]}));
        assert!(error.unwrap_err().contains("pending, in_progress"));
        let error = todos_of(&json!({"todos": [{"content": " ", "status": "pending"}]}));
        assert_eq!(error.unwrap_err(), "item 1 of `todos` has no content");
    }
}
