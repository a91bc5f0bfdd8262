//! What the agent shows and asks, behind a trait so the loop runs without a terminal.

use std::io::{BufRead, Write};

use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use crate::confirm::{Answer, prompt};
use crate::render::{Notice, Renderer};

/// The agent's view of the user.
pub trait Ui {
    /// A piece of the streamed reply.
    fn stream_event(&mut self, event: &StreamEvent);
    /// The reply ended (or was cut): release what is held back.
    fn reply_done(&mut self);
    /// A tool call about to be settled.
    fn tool_call(&mut self, call: &ToolCall);
    /// What a tool returned.
    fn tool_result(&mut self, tool: &str, result: &ToolResult);
    /// A message from ybs itself.
    fn notice(&mut self, kind: Notice, message: &str);
    /// Token usage of the turn and of the session.
    fn usage(&mut self, turn: &Usage, session: &Usage);
    /// Asks whether `call` may run; `reason` is the confirmation policy's.
    fn confirm(&mut self, call: &ToolCall, reason: &str) -> Answer;
}

/// A [`Ui`] that renders the reply to one writer, tool calls, notices and usage to another
/// (both stdout in the REPL; stdout and stderr for `exec`), and reads answers from a reader.
pub struct LineUi<'a> {
    renderer: Renderer,
    out: &'a mut dyn Write,
    log: &'a mut dyn Write,
    input: &'a mut dyn BufRead,
}

impl<'a> LineUi<'a> {
    /// Renders with `renderer`; the reply to `out`, the rest to `log`; answers from `input`.
    pub fn new(
        renderer: Renderer,
        out: &'a mut dyn Write,
        log: &'a mut dyn Write,
        input: &'a mut dyn BufRead,
    ) -> Self {
        LineUi {
            renderer,
            out,
            log,
            input,
        }
    }

    fn print(&mut self, lines: Vec<String>) {
        for line in lines {
            // A closed output (a pipe) must not stop the agent.
            let _ = writeln!(self.out, "{line}");
        }
        let _ = self.out.flush();
    }

    fn log(&mut self, lines: Vec<String>) {
        let _ = self.out.flush();
        for line in lines {
            let _ = writeln!(self.log, "{line}");
        }
        let _ = self.log.flush();
    }
}

impl Ui for LineUi<'_> {
    fn stream_event(&mut self, event: &StreamEvent) {
        let lines = self.renderer.event(event);
        self.print(lines);
    }

    fn reply_done(&mut self) {
        let lines = self.renderer.finish();
        self.print(lines);
    }

    fn tool_call(&mut self, call: &ToolCall) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.tool_call(call);
        self.log(lines);
    }

    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.tool_result(tool, result);
        self.log(lines);
    }

    fn notice(&mut self, kind: Notice, message: &str) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.notice(kind, message);
        self.log(lines);
    }

    fn usage(&mut self, turn: &Usage, session: &Usage) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.usage(turn, session);
        self.log(lines);
    }

    fn confirm(&mut self, _call: &ToolCall, reason: &str) -> Answer {
        let _ = write!(self.log, "{}", prompt(reason));
        let _ = self.log.flush();
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => Answer::No,
            Ok(_) => Answer::parse(&line),
        }
    }
}
