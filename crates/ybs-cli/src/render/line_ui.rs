//! The terminal's [`Ui`]: the reply rendered to one writer, tool calls, notices and usage to
//! another, answers read from a line reader, a spinner while the model has not answered.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use crate::render::spinner::{SharedWriter, Spinner};
use crate::render::{Renderer, wrap};
use ybs_agent::confirm::{Answer, prompt};
use ybs_agent::{Notice, Ui};

/// A [`Ui`] that renders the reply to one writer, tool calls, notices and usage to another
/// (both stdout in the REPL; stdout and stderr for `exec`), and reads answers from a reader.
pub struct LineUi<'a> {
    renderer: Renderer,
    out: &'a mut dyn Write,
    log: &'a mut dyn Write,
    input: &'a mut dyn BufRead,
    /// Where to draw the waiting spinner, if anywhere.
    spinner: Option<SharedWriter>,
    spinning: Option<Spinner>,
    /// Rung when a confirmation waits.
    notifier: Option<crate::render::notify::Notifier>,
    /// Cancelled by Ctrl-C while a question waits on stdin ([`LineUi::watch`]).
    cancel: Option<tokio_util::sync::CancellationToken>,
    /// Another reader of the terminal during the turn, asked to stand aside for answers.
    key_reader: Option<Arc<dyn KeyReader>>,
}

/// Another reader of the terminal's keys during the turn (what the user types while the
/// agent works): it stands aside, the terminal as it was, while a question waits for its
/// answer, so the answer is echoed and read here.
pub trait KeyReader {
    /// Stop reading keys and give the terminal its usual mode.
    fn stand_aside(&self);
    /// Read keys again.
    fn come_back(&self);
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
            spinner: None,
            spinning: None,
            notifier: None,
            cancel: None,
            key_reader: None,
        }
    }

    /// Has `reader` stand aside while a question waits for its answer.
    pub fn with_key_reader(mut self, reader: Option<Arc<dyn KeyReader>>) -> Self {
        self.key_reader = reader;
        self
    }

    /// Stops waiting for an answer when `token` is cancelled (Ctrl-C), which then reads as
    /// no: a blocking read would sit the cancellation out until Enter. Only for a `LineUi`
    /// whose input is the process's stdin, and only when that is a terminal, which gives a
    /// line per read: on a pipe the next answers may already wait in the input's buffer,
    /// where polling the pipe would not see them.
    pub fn watch(&mut self, token: tokio_util::sync::CancellationToken) {
        if std::io::stdin().is_terminal() {
            self.cancel = Some(token);
        }
    }

    /// The answer line; `None` at the end of the input or when the turn was cancelled.
    fn read_answer(&mut self) -> Option<String> {
        let reader = self.key_reader.clone();
        if let Some(reader) = &reader {
            reader.stand_aside();
        }
        let answer = self.read_answer_line();
        if let Some(reader) = &reader {
            reader.come_back();
        }
        answer
    }

    fn read_answer_line(&mut self) -> Option<String> {
        if let Some(token) = &self.cancel {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            let stdin = std::io::stdin();
            let tick = Timespec {
                tv_sec: 0,
                tv_nsec: 100_000_000,
            };
            loop {
                if token.is_cancelled() {
                    let _ = writeln!(self.log);
                    return None;
                }
                let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
                match poll(&mut fds, Some(&tick)) {
                    Ok(0) | Err(rustix::io::Errno::INTR) => {}
                    _ => break,
                }
            }
        }
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    /// Notifies with `notifier` (the caller checked the log is a terminal) when a
    /// confirmation waits.
    pub fn with_notifier(mut self, notifier: Option<crate::render::notify::Notifier>) -> Self {
        self.notifier = notifier;
        self
    }

    /// With `on`, animates a spinner on stderr from each request until the first streamed
    /// event, but only where it can be seen and is wanted: stderr is a terminal and the
    /// renderer uses colour (so `NO_COLOR`, `ui.color: false` and a non-TTY stdout turn it
    /// off too).
    pub fn with_spinner(self, on: bool) -> Self {
        let stderr = std::io::stderr();
        if !(on && self.renderer.options().color && stderr.is_terminal()) {
            return self;
        }
        // The spinner's thread writes to its own handle of the terminal: `std::io::stderr()`
        // takes a lock that the REPL holds for its whole run, so the thread would wait on it
        // forever (and the turn on the thread).
        match std::os::fd::AsFd::as_fd(&stderr).try_clone_to_owned() {
            Ok(fd) => {
                let terminal: SharedWriter = Arc::new(Mutex::new(std::fs::File::from(fd)));
                self.with_spinner_on(terminal)
            }
            Err(_) => self,
        }
    }

    /// Animates the spinner on `out` whatever it is (the caller checked it is a terminal).
    pub fn with_spinner_on(mut self, out: SharedWriter) -> Self {
        self.spinner = Some(out);
        self
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinning.take() {
            // The reply goes to another stream: everything before it must be out first.
            let _ = self.out.flush();
            spinner.stop();
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
        if let (Some(out), None) = (&self.spinner, &self.spinning) {
            self.spinning = Some(Spinner::start(Arc::clone(out)));
        }
    }

    fn stream_event(&mut self, event: &StreamEvent) {
        let lines = self.renderer.event(event);
        // Text is shown a whole line at a time, hidden reasoning not at all, and a call's
        // arguments only once complete: while a delta shows nothing, the spinner goes on
        // (or starts again), so a long first paragraph is not a blank screen.
        let delta = matches!(
            event,
            StreamEvent::TextDelta { .. }
                | StreamEvent::ThinkingDelta { .. }
                | StreamEvent::ToolCallDelta { .. }
        );
        if lines.is_empty() && delta {
            self.waiting();
            return;
        }
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

    fn preview(&mut self, preview: &ybs_agent::preview::Preview) {
        self.renderer.preview(preview);
        let painter = crate::render::style::Painter {
            color: self.renderer.options().color,
        };
        let lines = crate::render::diff_view::render(
            preview,
            painter,
            crate::render::diff_view::FOLD_LINES,
        );
        self.log(lines);
    }

    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.tool_result(tool, result);
        self.log(lines);
    }

    fn todos(&mut self, todos: &[ybs_tools::builtins::Todo]) {
        let held = self.renderer.finish();
        self.print(held);
        self.log(ybs_agent::todos::lines(todos));
    }

    fn notice(&mut self, kind: Notice, message: &str) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.notice(kind, message);
        self.log(lines);
    }

    fn usage(&mut self, turn: &Usage, session: &Usage, fill: Option<(u64, u64)>) {
        let held = self.renderer.finish();
        self.print(held);
        let lines = self.renderer.usage(turn, session, fill);
        self.log(lines);
    }

    fn confirm(&mut self, _call: &ToolCall, reason: &str) -> Answer {
        self.stop_spinner();
        if let Some(notifier) = &self.notifier {
            let _ = write!(
                self.log,
                "{}",
                notifier.sequence("ybs: a tool call waits for your confirmation")
            );
        }
        let question = prompt(&crate::render::inert(reason));
        let _ = write!(self.log, "{}", wrap::wrap(&question, self.renderer.width()));
        let _ = self.log.flush();
        match self.read_answer() {
            Some(line) => Answer::parse(&line),
            None => Answer::No,
        }
    }

    fn choose_rule(
        &mut self,
        offers: &[ybs_agent::permissions::Offer],
    ) -> Option<(usize, ybs_agent::permissions::Layer)> {
        let mut question = String::from("always allow:\n");
        for (index, offer) in offers.iter().enumerate() {
            let text = offer.to_string();
            let offer = format!("  [{}] {}", index + 1, crate::render::inert(&text));
            question.push_str(&wrap::hanging(&offer, self.renderer.width(), 6));
            question.push('\n');
        }
        question.push_str(
            "which, and for the [s]ession, the [p]roject or the [u]ser (e.g. 1s; Enter: the \
             first for the session; anything else: none, and the call does not run)? ",
        );
        let _ = write!(self.log, "{}", wrap::wrap(&question, self.renderer.width()));
        let _ = self.log.flush();
        let line = self.read_answer()?;
        ybs_agent::confirm::parse_rule_choice(&line, offers.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::render::{RenderOptions, spinner};

    fn renderer() -> Renderer {
        Renderer::new(RenderOptions {
            color: false,
            show_reasoning: true,
            show_tool_calls: true,
            show_token_usage: true,
        })
    }

    /// A spinner target the test can read back.
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_spinner_runs_until_the_first_event_and_erases_its_line() {
        let drawn = Arc::new(Mutex::new(Vec::new()));
        let target: SharedWriter = Arc::new(Mutex::new(Shared(Arc::clone(&drawn))));
        let (mut out, mut log, mut input) = (Vec::new(), Vec::new(), &b""[..]);
        {
            let mut ui =
                LineUi::new(renderer(), &mut out, &mut log, &mut input).with_spinner_on(target);
            ui.waiting();
            ui.stream_event(&StreamEvent::TextDelta {
                text: "hello\n".into(),
            });
            // Later events and a second `waiting` of the same reply draw nothing more...
            let after_first = drawn.lock().unwrap().len();
            ui.stream_event(&StreamEvent::TextDelta {
                text: "world\n".into(),
            });
            ui.reply_done();
            assert_eq!(drawn.lock().unwrap().len(), after_first);
            // ...while the next request starts it again.
            ui.waiting();
            ui.reply_done();
        }
        let drawn = String::from_utf8(drawn.lock().unwrap().clone()).unwrap();
        let first = spinner::frame(0, std::time::Duration::ZERO);
        assert!(drawn.starts_with(&first), "{drawn:?}");
        assert!(drawn.ends_with(spinner::ERASE), "{drawn:?}");
        assert_eq!(drawn.matches(spinner::ERASE).count(), 2, "{drawn:?}");
        assert!(
            drawn.contains(&format!("{}{first}", spinner::ERASE)),
            "{drawn:?}"
        );
        // The reply itself has no trace of the spinner.
        assert_eq!(String::from_utf8(out).unwrap_or_default(), "hello\nworld\n");
        assert!(log.is_empty());
    }

    #[test]
    fn the_spinner_goes_on_while_a_line_is_held_back() {
        let drawn = Arc::new(Mutex::new(Vec::new()));
        let target: SharedWriter = Arc::new(Mutex::new(Shared(Arc::clone(&drawn))));
        let (mut out, mut log, mut input) = (Vec::new(), Vec::new(), &b""[..]);
        let erased = || {
            let drawn = String::from_utf8(drawn.lock().unwrap().clone()).unwrap();
            drawn.matches(spinner::ERASE).count()
        };
        {
            let mut ui = LineUi::new(renderer(), &mut out, &mut log, &mut input)
                .with_spinner_on(Arc::clone(&target));
            ui.waiting();
            // A line not yet complete shows nothing: the spinner is not erased.
            ui.stream_event(&StreamEvent::TextDelta {
                text: "a long first ".into(),
            });
            assert_eq!(erased(), 0);
            // Its end erases it before the line is printed...
            ui.stream_event(&StreamEvent::TextDelta {
                text: "paragraph\nnext ".into(),
            });
            assert_eq!(erased(), 1);
            // ...and the next held line starts it again, until the reply ends.
            let before = drawn.lock().unwrap().len();
            ui.stream_event(&StreamEvent::TextDelta { text: "one".into() });
            assert!(drawn.lock().unwrap().len() > before);
            ui.reply_done();
            assert_eq!(erased(), 2);
        }
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "a long first paragraph\nnext one\n"
        );
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
            "`run_shell` requires confirmation. Allow? [y]es / [n]o / [a]lways (a rule): "
        );
    }
}
