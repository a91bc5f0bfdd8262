//! The model's task list (`todo_write`): shown when it changes, and read back from the
//! conversation when a saved session is resumed (the calls and their results are part of it).

use ybs_core::{Message, Part};
use ybs_tools::builtins::{Todo, TodoStatus, todos_of};

use super::Agent;
use crate::inert::inert;

impl Agent {
    /// Sets the task list from the newest successful `todo_write` of the conversation (after
    /// `--resume`); none leaves it empty.
    pub fn restore_todos(&mut self) {
        self.tool_context
            .session
            .set_todos(last_todos(&self.conversation));
    }
}

/// The list of the newest `todo_write` call of `conversation` whose result was not an error.
pub fn last_todos(conversation: &[Message]) -> Vec<Todo> {
    let failed = |id: &str| {
        conversation.iter().flat_map(|m| &m.parts).any(|part| {
            matches!(part, Part::ToolResult(result) if result.call_id == id && result.is_error)
        })
    };
    (conversation.iter().rev())
        .flat_map(|message| message.tool_calls().collect::<Vec<_>>().into_iter().rev())
        .filter(|call| {
            ybs_tools::builtins::declaration_of(&call.name).effect == ybs_tools::Effect::TaskList
                && !failed(&call.id)
        })
        .find_map(|call| todos_of(&call.arguments).ok())
        .unwrap_or_default()
}

/// The list as lines for the terminal: a head with the count done, then one line per item.
pub fn lines(todos: &[Todo]) -> Vec<String> {
    let done = (todos.iter())
        .filter(|todo| todo.status == TodoStatus::Completed)
        .count();
    let mut lines = vec![format!("Tasks ({done} of {} done):", todos.len())];
    for todo in todos {
        let mark = match todo.status {
            TodoStatus::Completed => "[x]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Pending => "[ ]",
        };
        let content = todo.content.lines().next().unwrap_or("");
        lines.push(format!("  {mark} {}", inert(content)));
    }
    lines
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use ybs_core::{Role, ToolCall, ToolResult};

    use super::*;

    fn call(id: &str, todos: serde_json::Value) -> Message {
        Message::new(
            Role::Assistant,
            vec![Part::ToolCall(ToolCall::new(
                id,
                "todo_write",
                json!({ "todos": todos }),
            ))],
        )
    }

    fn result(id: &str, is_error: bool) -> Message {
        Message::new(
            Role::Tool,
            vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                name: Some("todo_write".into()),
                content: "{}".into(),
                is_error,
            })],
        )
    }

    #[test]
    fn the_newest_successful_list_is_restored_and_shown() {
        let conversation = vec![
            call(
                "a",
                json!([{"content": "one", "status": "completed"},
                             {"content": "two\u{1b}[2J", "status": "in_progress"}]),
            ),
            result("a", false),
            call("b", json!([{"content": "bad", "status": "pending"}])),
            result("b", true),
        ];
        let todos = last_todos(&conversation);
        assert_eq!(todos.len(), 2);
        let shown = lines(&todos);
        assert_eq!(shown[0], "Tasks (1 of 2 done):");
        assert_eq!(shown[1], "  [x] one");
        assert!(shown[2].starts_with("  [>] two") && !shown[2].contains('\u{1b}'));
    }
}
