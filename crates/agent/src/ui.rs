//! What the agent shows and asks, behind a trait so the loop runs without a terminal.

use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use crate::confirm::Answer;

/// A message from ybs itself, not the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// Neutral information (`dry run: not executed`).
    Info,
    /// Something the user should know (`the agent repeated a call; stopping`).
    Warning,
    /// Something failed.
    Error,
}

/// The agent's view of the user.
pub trait Ui {
    /// A request was sent and nothing has arrived yet (a spinner's cue).
    fn waiting(&mut self) {}
    /// A piece of the streamed reply.
    fn stream_event(&mut self, event: &StreamEvent);
    /// The reply ended (or was cut): release what is held back.
    fn reply_done(&mut self);
    /// A tool call about to be settled.
    fn tool_call(&mut self, call: &ToolCall);
    /// What the call about to be settled would change (a diff, a command and where it runs).
    fn preview(&mut self, _preview: &crate::preview::Preview) {}
    /// What a tool returned.
    fn tool_result(&mut self, tool: &str, result: &ToolResult);
    /// The model's task list changed (`todo_write`); `todos` is the whole new list.
    fn todos(&mut self, _todos: &[ybs_tools::builtins::Todo]) {}
    /// A message from ybs itself.
    fn notice(&mut self, kind: Notice, message: &str);
    /// Token usage of the turn and of the session, and how full the model's window was at
    /// the newest request (`(tokens, window)`), when known.
    fn usage(&mut self, turn: &Usage, session: &Usage, fill: Option<(u64, u64)>);
    /// Asks whether `call` may run; `reason` is the confirmation policy's.
    fn confirm(&mut self, call: &ToolCall, reason: &str) -> Answer;
    /// After "always": which of `offers` to keep, and where; `None` keeps nothing and the
    /// call does not run (the answer of a front end that cannot ask).
    fn choose_rule(
        &mut self,
        _offers: &[crate::permissions::Offer],
    ) -> Option<(usize, crate::permissions::Layer)> {
        None
    }
}
