//! The plan as the editor shows it (`session/update` of kind `plan`). In plan mode the model
//! replies with a numbered plan; its steps are sent as the plan's entries (pending). When the
//! user leaves plan mode, the next prompt hands the plan back to the agent, as the terminal
//! does after approval, and the entries are shown in progress until that turn finishes,
//! then completed, the steps together. When the model keeps a task list (`todo_write`),
//! each new list is sent as the plan, every item with its own status.

use agent_client_protocol::v1::schema::{
    Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
};
use ybs_core::{Message, Part};

/// The most entries sent; a longer plan's further steps stay in the reply only.
const MAX_ENTRIES: usize = 50;

/// The steps of a plan: the items of its numbered list (`1. …`, `2) …`), one line each.
pub fn entries(reply: &str) -> Vec<String> {
    (reply.lines())
        .filter_map(|line| {
            let line = line.trim_start();
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            if digits == 0 || digits > 3 {
                return None;
            }
            let rest = line[digits..].strip_prefix(['.', ')'])?;
            if !rest.starts_with(char::is_whitespace) {
                return None;
            }
            let step: String = (rest.trim().chars())
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            (!step.is_empty()).then_some(step)
        })
        .take(MAX_ENTRIES)
        .collect()
}

/// The plan update with every entry in `status`.
pub fn update(entries: &[String], status: PlanEntryStatus) -> SessionUpdate {
    let entries = (entries.iter())
        .map(|step| PlanEntry::new(step.clone(), PlanEntryPriority::Medium, status.clone()))
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// The model's task list as the plan.
pub fn of_todos(todos: &[ybs_tools::builtins::Todo]) -> SessionUpdate {
    use ybs_tools::builtins::TodoStatus;
    let entries = (todos.iter())
        .map(|todo| {
            let status = match todo.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// `message` with the approved `plan` handed back before it.
pub fn carry_out(plan: &str, message: Message) -> Message {
    let mut parts = vec![Part::Text {
        content: ybs_agent::plan::approved(plan),
    }];
    parts.extend(message.parts);
    Message::new(message.role, parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_numbered_steps_are_the_entries() {
        let reply = "I looked around.\n\n1. Add `fn parse` to src/a.rs\n2) Call it from \
                     main\n   (keeping the old path)\n10. Run cargo test\n2024 was a year.\n\
                     1.5 is not a step\n- a bullet";
        assert_eq!(
            entries(reply),
            [
                "Add `fn parse` to src/a.rs",
                "Call it from main",
                "Run cargo test"
            ]
        );
        assert!(entries("no plan here").is_empty());
        let SessionUpdate::Plan(plan) = update(&entries(reply), PlanEntryStatus::Pending) else {
            panic!("not a plan update");
        };
        assert_eq!(plan.entries.len(), 3);
        assert_eq!(plan.entries[0].status, PlanEntryStatus::Pending);
    }

    #[test]
    fn a_task_list_is_the_plan_with_each_item_s_status() {
        use ybs_tools::builtins::Todo;
        use ybs_tools::builtins::TodoStatus;
        let todos = [
            Todo {
                content: "read".into(),
                status: TodoStatus::Completed,
            },
            Todo {
                content: "fix".into(),
                status: TodoStatus::InProgress,
            },
        ];
        let SessionUpdate::Plan(plan) = of_todos(&todos) else {
            panic!("not a plan update");
        };
        assert_eq!(plan.entries[0].content, "read");
        assert_eq!(plan.entries[0].status, PlanEntryStatus::Completed);
        assert_eq!(plan.entries[1].status, PlanEntryStatus::InProgress);
    }

    #[test]
    fn carrying_out_puts_the_plan_before_the_prompt() {
        let message = carry_out("1. Do it", Message::user("go"));
        let text = message.text_content();
        assert!(text.starts_with("Plan mode is off."), "{text}");
        assert!(text.contains("1. Do it") && text.ends_with("go"), "{text}");
    }
}
