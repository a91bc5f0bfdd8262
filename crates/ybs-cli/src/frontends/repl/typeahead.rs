//! Typing while the agent works. During a turn the terminal stays in a mode that gives each
//! key at once without echo (Ctrl-C still sends SIGINT, which cancels the turn); a thread
//! reads the keys into a draft line drawn below the output. Enter queues the draft: shown as
//! `queued: …`, it is sent as the next message when the turn ends. Alt-Enter steers: the
//! draft goes to the running turn's next model request ([`ybs_agent::steering`]). Up with an
//! empty draft takes the last queued message back to edit, Ctrl-U clears the draft. Whatever
//! is typed is shown inert. While a question waits for its answer the reader stands aside
//! and the terminal is as it was.

use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rustix::termios::{self, InputModes, LocalModes, OptionalActions, SpecialCodeIndex, Termios};
use tokio_util::sync::CancellationToken;
use ybs_agent::steering::Steering;

use crate::render::wrap;

/// Erases the line the cursor is on.
const ERASE: &str = "\r\x1b[K";

/// What the reader and the turn's writers share.
struct Shared {
    state: Mutex<State>,
    /// Set when the turn is over: the reader thread ends.
    stop: AtomicBool,
    steering: Steering,
    /// The terminal's mode before the turn, given back at its end and while a question waits.
    cooked: Termios,
    /// The terminal's mode during the turn.
    keys: Termios,
    /// The terminal's width, for ybs's lines.
    width: Option<usize>,
    /// The turn's cancellation: a line entered once it is cancelled is the next message, as
    /// if typed at the prompt that follows.
    cancel: Mutex<Option<CancellationToken>>,
}

#[derive(Default)]
struct State {
    /// What is typed and not yet queued.
    draft: String,
    /// Messages queued for after the turn, oldest first.
    queued: Vec<String>,
    /// Lines entered after the turn was cancelled: the next message.
    after_cancel: Vec<String>,
    /// Lines to show at the next line start (`queued: …`).
    notes: Vec<String>,
    /// The draft is on the screen (the cursor is on its line).
    drawn: bool,
    /// The output's last byte was a newline: the draft can be drawn on the next line.
    at_line_start: bool,
    /// A question waits for its answer: no key is read, nothing is drawn.
    standing_aside: bool,
    /// Bytes of a key not yet whole (an escape sequence, a character's first bytes).
    pending: Vec<u8>,
    /// The reader's own handle of the terminal.
    terminal: Option<std::fs::File>,
}

/// The keys read during one turn; [`TypeAhead::finish`] ends it and gives what was typed.
pub struct TypeAhead {
    shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
}

/// What was typed during a turn and not given to it.
#[derive(Debug, Default)]
pub struct Typed {
    /// The queued messages, oldest first.
    pub queued: Vec<String>,
    /// The draft not yet queued.
    pub draft: String,
    /// Lines entered after the turn was cancelled, sent as the next message.
    pub after_cancel: Vec<String>,
}

impl TypeAhead {
    /// Starts reading keys when stdin and stdout are terminals; `None` otherwise (a pipe
    /// keeps the input for later turns, as before).
    pub fn start(steering: Steering) -> Option<TypeAhead> {
        use std::io::IsTerminal;
        if !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
            return None;
        }
        let stdin = io::stdin();
        let cooked = termios::tcgetattr(stdin.as_fd()).ok()?;
        let mut keys = cooked.clone();
        // Each key at once and unechoed; signals stay on, so Ctrl-C still cancels the turn.
        keys.local_modes -= LocalModes::ICANON | LocalModes::ECHO;
        // Enter stays a carriage return, as the line editor's own mode keeps it: keys left
        // in the terminal for the next prompt are then read as Enter, not as Ctrl-J.
        keys.input_modes -= InputModes::ICRNL;
        keys.special_codes[SpecialCodeIndex::VMIN] = 1;
        keys.special_codes[SpecialCodeIndex::VTIME] = 0;
        termios::tcsetattr(stdin.as_fd(), OptionalActions::Now, &keys).ok()?;
        let terminal = io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(|fd: OwnedFd| std::fs::File::from(fd));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                at_line_start: true,
                terminal,
                ..State::default()
            }),
            stop: AtomicBool::new(false),
            steering,
            cooked,
            keys,
            width: wrap::terminal_width(),
            cancel: Mutex::new(None),
        });
        let reading = Arc::clone(&shared);
        let reader = std::thread::Builder::new()
            .name("ybs-keys".into())
            .spawn(move || read_keys(&reading))
            .ok();
        Some(TypeAhead { shared, reader })
    }

    /// Stops reading keys once `token` is cancelled (Ctrl-C ends the turn).
    pub fn watch(&self, token: CancellationToken) {
        if let Ok(mut cancel) = self.shared.cancel.lock() {
            *cancel = Some(token);
        }
    }

    /// A writer for the turn's output to `inner` that keeps the draft below it.
    pub fn around<'a>(&self, inner: &'a mut dyn Write) -> AroundDraft<'a> {
        AroundDraft {
            inner,
            shared: Arc::clone(&self.shared),
        }
    }

    /// The handle the terminal's `Ui` uses to stand the reader aside during a question.
    pub fn handle(&self) -> Arc<dyn crate::render::KeyReader> {
        Arc::new(Handle(Arc::clone(&self.shared)))
    }

    /// Ends the turn's key reading: the terminal as it was, the draft erased, and what was
    /// typed and not given to the turn.
    pub fn finish(mut self) -> Typed {
        self.stop_reading()
    }

    fn stop_reading(&mut self) -> Typed {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let _ = termios::tcsetattr(
            io::stdin().as_fd(),
            OptionalActions::Now,
            &self.shared.cooked,
        );
        let mut state = lock(&self.shared);
        if state.drawn {
            state.write(ERASE);
            state.drawn = false;
        }
        Typed {
            queued: std::mem::take(&mut state.queued),
            draft: std::mem::take(&mut state.draft),
            after_cancel: std::mem::take(&mut state.after_cancel),
        }
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        // A turn that ends by an error or a panic gives the terminal back too.
        if self.reader.is_some() {
            self.stop_reading();
        }
    }
}

impl Shared {
    fn cancelled(&self) -> bool {
        (self.cancel.lock().ok())
            .is_some_and(|token| token.as_ref().is_some_and(CancellationToken::is_cancelled))
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads keys until the turn is over, polling so that the end is seen.
fn read_keys(shared: &Shared) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = io::stdin();
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let mut buffer = [0u8; 1024];
    while !shared.stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        if !matches!(poll(&mut fds, Some(&tick)), Ok(n) if n > 0) {
            continue;
        }
        let mut state = lock(shared);
        if state.standing_aside {
            drop(state);
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        // Read only what is there: the question that may follow reads the rest.
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if !matches!(poll(&mut fds, Some(&zero)), Ok(n) if n > 0) {
            continue;
        }
        match rustix::io::read(stdin.as_fd(), &mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                state.pending.extend_from_slice(&buffer[..read]);
                state.take_keys(shared);
                state.draw(shared.width);
            }
        }
    }
}

/// A key the reader acts on.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    Text(String),
    Enter,
    Steer,
    Backspace,
    Clear,
    Up,
    Other,
}

/// The first key of `bytes` and how many bytes it took; `None` when it is not whole yet.
fn next_key(bytes: &[u8]) -> Option<(Key, usize)> {
    let first = *bytes.first()?;
    Some(match first {
        b'\r' | b'\n' => (Key::Enter, 1),
        0x7f | 0x08 => (Key::Backspace, 1),
        0x15 => (Key::Clear, 1),
        0x1b => match bytes.get(1) {
            // A lone Esc (the rest of a sequence comes in the same read).
            None => (Key::Other, 1),
            Some(b'\r' | b'\n') => (Key::Steer, 2),
            Some(b'[' | b'O') => {
                let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
                let key = if bytes[2 + end] == b'A' {
                    Key::Up
                } else {
                    Key::Other
                };
                (key, end + 3)
            }
            Some(_) => (Key::Other, 2),
        },
        byte if byte < 0x20 => (Key::Other, 1),
        _ => {
            let length = match first {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            };
            let text = bytes.get(..length)?;
            (
                Key::Text(String::from_utf8_lossy(text).into_owned()),
                length,
            )
        }
    })
}

impl State {
    fn write(&mut self, text: &str) {
        if let Some(terminal) = &mut self.terminal {
            let _ = terminal.write_all(text.as_bytes());
            let _ = terminal.flush();
        }
    }

    /// Acts on the whole keys waiting in `pending`.
    fn take_keys(&mut self, shared: &Shared) {
        while let Some((key, used)) = next_key(&self.pending) {
            self.pending.drain(..used);
            match key {
                Key::Text(text) => self.draft.push_str(&text),
                Key::Backspace => {
                    self.draft.pop();
                }
                Key::Clear => self.draft.clear(),
                Key::Up if self.draft.is_empty() => {
                    if let Some(last) = self.queued.pop() {
                        self.note(&format!("unqueued, to edit: {last}"));
                        self.draft = last;
                    }
                }
                Key::Enter | Key::Steer if self.draft.trim().is_empty() => {}
                Key::Enter if shared.cancelled() => {
                    let text = std::mem::take(&mut self.draft);
                    self.note(&format!("sent next: {text}"));
                    self.after_cancel.push(text);
                }
                Key::Enter => {
                    let text = std::mem::take(&mut self.draft);
                    self.note(&format!("queued: {text}"));
                    self.queued.push(text);
                }
                Key::Steer => {
                    let text = std::mem::take(&mut self.draft);
                    self.note(&format!("steering: {text} (for the model's next request)"));
                    shared.steering.push(text);
                }
                Key::Up | Key::Other => {}
            }
        }
    }

    fn note(&mut self, line: &str) {
        self.notes.push(crate::render::inert(line).into_owned());
    }

    /// Shows the waiting notes and the draft, when the output is at a line's start.
    fn draw(&mut self, width: Option<usize>) {
        let nothing = self.notes.is_empty() && self.draft.is_empty() && !self.drawn;
        if !self.at_line_start || self.standing_aside || nothing {
            return;
        }
        let mut shown = String::from(ERASE);
        for note in std::mem::take(&mut self.notes) {
            shown.push_str(&wrap::hanging(&note, width, 4));
            shown.push('\n');
        }
        if !self.draft.is_empty() {
            // One line, never wrapped (so it can be erased): its end shows when too long.
            let room = width.unwrap_or(80).saturating_sub(3).max(10);
            let draft = crate::render::inert(&self.draft).into_owned();
            let skip = draft.chars().count().saturating_sub(room);
            let tail: String = draft.chars().skip(skip).collect();
            shown.push_str("> ");
            shown.push_str(&tail);
        }
        self.drawn = !self.draft.is_empty();
        self.write(&shown);
    }
}

/// The turn's output to one stream, erasing the draft before and drawing it again after.
pub struct AroundDraft<'a> {
    inner: &'a mut dyn Write,
    shared: Arc<Shared>,
}

impl Write for AroundDraft<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = lock(&self.shared);
        if state.drawn {
            state.write(ERASE);
            state.drawn = false;
        }
        self.inner.write_all(buf)?;
        if let Some(last) = buf.last() {
            state.at_line_start = *last == b'\n';
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut state = lock(&self.shared);
        self.inner.flush()?;
        state.draw(self.shared.width);
        Ok(())
    }
}

/// The `Ui`'s handle on the reader.
struct Handle(Arc<Shared>);

impl crate::render::KeyReader for Handle {
    fn stand_aside(&self) {
        let mut state = lock(&self.0);
        state.standing_aside = true;
        let _ = termios::tcsetattr(io::stdin().as_fd(), OptionalActions::Now, &self.0.cooked);
    }

    fn come_back(&self) {
        let mut state = lock(&self.0);
        let _ = termios::tcsetattr(io::stdin().as_fd(), OptionalActions::Now, &self.0.keys);
        state.standing_aside = false;
        // The answer's Enter was echoed: the cursor is at a line's start.
        state.at_line_start = true;
        state.draw(self.0.width);
    }
}

/// What happens to what was typed during a turn once it is over.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Left {
    /// The next message, sent at once: the queued messages (and steering the turn ended
    /// before taking), after a turn that finished.
    pub send: Option<String>,
    /// Text for the next prompt's line: the unqueued draft, and after a cancelled turn
    /// everything typed, to edit, send or drop.
    pub prefill: Option<String>,
}

/// Decides what is sent and what waits at the prompt, and says so on `out`.
pub fn after_turn(
    typed: Typed,
    steering: Vec<String>,
    cancelled: bool,
    out: &mut dyn Write,
) -> Left {
    let messages: Vec<String> = steering.into_iter().chain(typed.queued).collect();
    let draft = Some(typed.draft).filter(|draft| !draft.trim().is_empty());
    let entered = Some(typed.after_cancel.join("\n")).filter(|text| !text.trim().is_empty());
    if messages.is_empty() {
        return Left {
            send: entered,
            prefill: draft,
        };
    }
    let joined = messages.join("\n\n");
    if cancelled {
        let _ = writeln!(
            out,
            "{}",
            wrap::to_terminal(
                "what you typed during the turn is not sent: it is back at the prompt (Enter \
                 sends it, Ctrl-C drops it)"
            )
        );
        let prefill = match draft {
            Some(draft) => format!("{joined}\n\n{draft}"),
            None => joined,
        };
        return Left {
            send: entered,
            prefill: Some(prefill),
        };
    }
    let shown = crate::render::inert(&joined).into_owned();
    let said = format!("sending what you queued: {shown}");
    let _ = writeln!(out, "{}", wrap::hanging(&said, wrap::terminal_width(), 4));
    Left {
        send: Some(joined),
        prefill: draft,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<Key> {
        let mut keys = Vec::new();
        let mut at = 0;
        while let Some((key, used)) = next_key(&bytes[at..]) {
            keys.push(key);
            at += used;
        }
        keys
    }

    #[test]
    fn keys_are_read_from_the_terminals_bytes() {
        assert_eq!(
            keys("hé\r".as_bytes()),
            [Key::Text("h".into()), Key::Text("é".into()), Key::Enter]
        );
        assert_eq!(keys(b"\x1b\r"), [Key::Steer]);
        assert_eq!(
            keys(b"\x1b[A\x1b[1;5C\x7f\x15"),
            [Key::Up, Key::Other, Key::Backspace, Key::Clear]
        );
        // A sequence not yet whole waits for its end.
        assert_eq!(next_key(b"\x1b[1;"), None);
        assert_eq!(next_key("é".as_bytes().get(..1).unwrap_or_default()), None);
    }
}
