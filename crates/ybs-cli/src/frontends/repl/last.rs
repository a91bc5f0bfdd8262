//! `/last`: the whole result of the newest tool call, of which the terminal showed a summary
//! (a file's lines, a command's whole output, every file listed or found).

use ybs_core::{Message, Part, ToolCall, ToolResult};

use crate::render::inert;
use crate::render::style::Painter;
use crate::render::tool_summary::{self, Known};

/// The lines `/last` prints: the summary line, then the whole result; `None` when no tool
/// has run in this conversation.
pub fn lines(
    conversation: &[Message],
    tools: &ybs_tools::ToolRegistry,
    painter: Painter,
) -> Option<Vec<String>> {
    let result = (conversation.iter().rev())
        .flat_map(|message| message.parts.iter().rev())
        .find_map(|part| match part {
            Part::ToolResult(result) => Some(result),
            _ => None,
        })?;
    let call = find_call(conversation, result);
    let name = (call.map(|call| call.name.as_str()))
        .or(result.name.as_deref())
        .unwrap_or("tool");
    let tool = tools.tool(name);
    let known = Known {
        tool,
        arguments: call.map(|call| &call.arguments),
        change: None,
    };
    let summary = tool_summary::summarize(name, result, known);
    let mut lines: Vec<String> = (tool_summary::lines(&summary, painter).into_iter())
        .take(1)
        .collect();
    lines.extend((tool_summary::full(tool, result).iter()).map(|line| inert(line).into_owned()));
    Some(lines)
}

fn find_call<'a>(conversation: &'a [Message], result: &ToolResult) -> Option<&'a ToolCall> {
    (conversation.iter().rev())
        .flat_map(|message| message.tool_calls())
        .find(|call| call.id == result.call_id)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use ybs_core::Role;

    use super::*;

    #[test]
    fn the_newest_result_is_shown_whole() {
        let call = ToolCall::new("c1", "run_shell", json!({"command": "seq 3"}));
        let conversation = vec![
            Message::user("count"),
            Message::new(Role::Assistant, vec![Part::ToolCall(call)]),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    name: Some("run_shell".into()),
                    content: json!({"exit_code": 0, "stdout": "1\n2\n\u{1b}[2J3\n", "stderr": ""})
                        .to_string(),
                    is_error: false,
                })],
            ),
        ];
        let shown = lines(
            &conversation,
            &ybs_tools::ToolRegistry::new(),
            Painter { color: false },
        )
        .unwrap();
        assert_eq!(
            shown,
            [
                "  ✓ Ran seq 3: exit code 0",
                "[stdout]",
                "1",
                "2",
                "^[[2J3",
                "[exit code 0]"
            ]
        );
        assert_eq!(
            lines(
                &conversation[..1],
                &ybs_tools::ToolRegistry::new(),
                Painter { color: false }
            ),
            None
        );
    }
}
