//! What the agent shows and asks, behind a trait so the loop runs without a terminal.

use std::io::{BufRead, Write};

use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use crate::confirm::{Answer, prompt};
use crate::render::{Notice, Renderer};

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
    /// Show a "waiting" mark until the first token (only on a terminal).
    spinner: bool,
    spinning: bool,
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
            spinner: false,
            spinning: false,
        }
    }

    /// Shows a waiting mark on `out` until the first token of each reply (for terminals).
    pub fn with_spinner(mut self, on: bool) -> Self {
        self.spinner = on;
        self
    }

    fn stop_spinner(&mut self) {
        if self.spinning {
            self.spinning = false;
            // Back to the start of the line, erase it.
            let _ = write!(self.out, "\r\x1b[K");
        }
    }

    fn print(&mut self, lines: Vec<String>) {
        self.stop_spinner();
        for line in lines {
            // A closed output (a pipe) must not stop the agent.
            let _ = writeln!(self.out, "{line}");
        }
        let _ = self.out.flush();
    }

    fn log(&mut self, lines: Vec<String>) {
        self.stop_spinner();
        let _ = self.out.flush();
        for line in lines {
            let _ = writeln!(self.log, "{line}");
        }
        let _ = self.log.flush();
    }
}

impl Ui for LineUi<'_> {
    fn waiting(&mut self) {
        if self.spinner && !self.spinning {
            self.spinning = true;
            let _ = write!(self.out, "\x1b[2m⠿ waiting for the model…\x1b[0m");
            let _ = self.out.flush();
        }
    }

    fn stream_event(&mut self, event: &StreamEvent) {
        self.stop_spinner();
        let lines = self.renderer.event(event);
        self.print(lines);
    }

    fn reply_done(&mut self) {
        self.stop_spinner();
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
        self.stop_spinner();
        let _ = write!(self.log, "{}", prompt(reason));
        let _ = self.log.flush();
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => Answer::No,
            Ok(_) => Answer::parse(&line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::RenderOptions;

    fn renderer() -> Renderer {
        Renderer::new(RenderOptions {
            color: false,
            show_reasoning: true,
            show_tool_calls: true,
            show_token_usage: true,
        })
    }

    #[test]
    fn the_waiting_mark_is_erased_by_the_first_token() {
        let (mut out, mut log, mut input) = (Vec::new(), Vec::new(), &b""[..]);
        {
            let mut ui = LineUi::new(renderer(), &mut out, &mut log, &mut input).with_spinner(true);
            ui.waiting();
            ui.stream_event(&StreamEvent::TextDelta {
                text: "hello\n".into(),
            });
            ui.reply_done();
        }
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "\x1b[2m⠿ waiting for the model…\x1b[0m\r\x1b[Khello\n"
        );
        assert!(log.is_empty());
    }

    #[test]
    fn without_a_terminal_there_is_no_mark_and_answers_default_to_no() {
        let (mut out, mut log, mut input) = (Vec::new(), Vec::new(), &b"maybe\n"[..]);
        let answer = {
            let mut ui = LineUi::new(renderer(), &mut out, &mut log, &mut input);
            ui.waiting();
            ui.confirm(
                &ToolCall::new("c", "run_shell", serde_json::json!({})),
                "`run_shell` requires confirmation",
            )
        };
        assert_eq!(answer, Answer::No);
        assert!(out.is_empty());
        assert_eq!(
            String::from_utf8(log).unwrap_or_default(),
            "`run_shell` requires confirmation. Allow? [y]es / [n]o / [a]lways this session: "
        );
    }
}
