//! The walk: a chat file one line at a time, and the messages it hands out.
//!
//! Each line's shape is the one the pest grammar (`chat.pest`) gives it, decided from its
//! first bytes where they suffice (`lines.rs`); most lines are ordinary content of the block
//! they are in, which their first bytes (or the lack of a marker found for the whole text in
//! one pass) show, and those skip the shapes. A
//! message's content is gathered as slices of the input and copied at most once
//! (`content.rs`), and each message is handed out as soon as it is complete.
//! What a shape means depends on the block the walk is in (fence, `[[`, XML), which is the
//! small state machine below. Nothing recurses and each line is looked at a constant number of
//! times, so parsing is linear in the size of the input whatever it holds.
//!
//! Where the notes leave room, this parser reads them so, matching the reference
//! implementation (scout-ai's `Chat.parse`) wherever the notes do not say "we fix":
//! - a fence line inside a `[[` or XML block is an ordinary line of that block and nothing
//!   else: it neither opens nor closes a fence, closes no `[[` block and pops no XML tag (the
//!   reference drops the line; we keep it);
//! - `[[` lines act outside blocks and inside square blocks, never inside a fence or an XML
//!   block (the notes' fix against hijacking);
//! - a command-output opener acts everywhere, as in the reference: inside a fence or an XML
//!   block it turns the block into a square block;
//! - only an XML opening outside blocks pushes on the tag stack; inside, the first closing tag
//!   of a line pops it when it matches. As in the reference the stack outlives its block: a tag
//!   left on it by a block that a command-output opener took over stays there;
//! - an escape removes one backslash from any run of backslashes before a header shape, so
//!   that `\\user:` reads as `\user:` and escaping can always be undone (the reference only
//!   unescapes a single backslash);
//! - a block started by a header is a message even when empty (`clear:`); the text before the
//!   first header and after an inline header is a message only when it is not empty. (The
//!   reference drops empty header blocks, so a bare `clear:` does nothing there.)

use std::borrow::Cow;
use std::collections::HashMap;

use crate::content::Content;
use crate::grammar::{self, Shape};
use crate::lines::{self, LineScan, Markers};
use crate::message::{BlockKind, DEFAULT_ROLE, LineSpan, MessageRef, OpenBlock};
use crate::search;

/// Walks the lines of `text`, the first of which is line `first_index` (0-based) of the file.
pub(crate) fn walk_lines<'a, S: Sink<'a>>(
    text: &'a str,
    walk: &mut Walk<'a, S>,
    first_index: usize,
    closes: &mut impl CloseTable,
) {
    let mut scan = LineScan::new(text);
    let mut close_markers = Markers::new(text, "</");
    let mut index = first_index;
    let bytes = text.as_bytes();
    while let Some((start, end, has_cmd_marker)) = scan.next_line() {
        let line = bytes.get(start..end).unwrap_or_default();
        // Most lines are ordinary content wherever they are, and their first bytes (or, in an
        // XML block, the lack of `</`) say so: they skip the shapes.
        let plain = !has_cmd_marker
            && match walk.state {
                State::Normal => lines::is_plain_outside(line),
                State::Fence => lines::is_plain_in_fence(line),
                State::Square => lines::is_plain_in_square(line),
                State::Xml => !close_markers.within(start, end),
            };
        if plain {
            walk.push_plain(index + 1, line, start, end);
        } else {
            let line = text.get(start..end).unwrap_or_default();
            let shape = lines::shape(line, has_cmd_marker);
            let cut = if S::CUTS { walk.cut_at(&shape) } else { None };
            walk.line(index, line, start, shape, closes);
            // After the line: the header has handed out the block before it.
            match cut {
                Some(Cut::Before) if start > 0 => walk.each.cut(start, index, None),
                Some(Cut::After) if end < text.len() => {
                    let role = walk.block.role;
                    walk.each.cut(end + 1, index + 1, Some(role));
                }
                _ => {}
            }
        }
        index += 1;
    }
}

/// Where the messages of a walk go.
pub(crate) trait Sink<'a> {
    /// Whether [`Sink::cut`] is wanted; when not, the walk does not look for places to cut.
    const CUTS: bool = false;

    /// Takes a complete message.
    fn message(&mut self, message: MessageRef<'a>);

    /// Told that every message before the line at `start` (line `index`, 0-based) has been
    /// handed out, and that a fresh walk started at that line, in a text block of `role`
    /// when one is given, reads the rest of the text as this one does.
    fn cut(&mut self, _start: usize, _index: usize, _role: Option<&'a str>) {}
}

/// Where a header leaves the walk as a fresh walk would be: outside every block, with no XML
/// tag on the stack.
enum Cut {
    /// Before it: a header alone on its line starts its block whatever came before.
    Before,
    /// After it: an inline header's message is complete, and the lines after it are text of
    /// a block whose role is all the walk remembers.
    After,
}

impl<'a, F: FnMut(MessageRef<'a>)> Sink<'a> for F {
    fn message(&mut self, message: MessageRef<'a>) {
        self(message)
    }
}

/// Answers rule 7's question: the offset of the last `</name>` in the file, if any.
pub(crate) trait CloseTable {
    /// The offset of the last `</tag>`, from the start of the file.
    fn last(&mut self, tag: &str) -> Option<usize>;
}

impl CloseTable for HashMap<&str, usize> {
    fn last(&mut self, tag: &str) -> Option<usize> {
        self.get(tag).copied()
    }
}

/// Where `part`, a slice of `text`, starts in it.
pub(crate) fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

pub(crate) enum State {
    Normal,
    Fence,
    Square,
    Xml,
}

/// The message being collected (its text is in `Walk::content`).
struct Block<'a> {
    role: &'a str,
    /// Started by a block header (kept even when empty) rather than implied.
    explicit: bool,
    header_line: usize,
    first_text: Option<usize>,
    last_text: usize,
}

impl<'a> Block<'a> {
    fn new(role: &'a str, explicit: bool, header_line: usize, last_text: usize) -> Self {
        Block {
            role,
            explicit,
            header_line,
            first_text: None,
            last_text,
        }
    }
}

pub(crate) struct Walk<'a, S> {
    state: State,
    opened_at: usize,
    /// The XML tag stack; it outlives the XML block (see the module docs).
    stack: Vec<&'a str>,
    block: Block<'a>,
    content: Content<'a>,
    /// Takes each message once it is complete.
    each: S,
    /// Finds the first closing tag of a line (rule 6).
    first_close_tag: fn(&str) -> Option<&str>,
    /// The offset in the file of the text's first byte.
    base: usize,
}

impl<'a, S: Sink<'a>> Walk<'a, S> {
    /// A walk of `text`, which starts `base` bytes into the file.
    pub(crate) fn new(
        text: &'a str,
        base: usize,
        first_close_tag: fn(&str) -> Option<&str>,
        each: S,
    ) -> Self {
        Walk {
            first_close_tag,
            base,
            state: State::Normal,
            opened_at: 0,
            stack: Vec::new(),
            block: Block::new(DEFAULT_ROLE, false, 1, 0),
            content: Content::new(text),
            each,
        }
    }

    fn saw_text(&mut self, number: usize, text: &str) {
        if text.bytes().any(|b| !grammar::is_stripped(b)) {
            self.saw_line_with_text(number);
        }
    }

    /// Adds `line` (at `start` in the input) or its tail from `skip` bytes on, as it is.
    fn push(&mut self, number: usize, line: &str, start: usize, skip: usize) {
        self.saw_text(number, line.get(skip..).unwrap_or_default());
        self.content.push_input(start + skip, start + line.len());
    }

    /// Adds the line `input[start..end]` as it is.
    fn push_plain(&mut self, number: usize, line: &[u8], start: usize, end: usize) {
        if line.iter().any(|&b| !grammar::is_stripped(b)) {
            self.saw_line_with_text(number);
        }
        self.content.push_input(start, end);
    }

    /// Notes that line `number` holds text.
    fn saw_line_with_text(&mut self, number: usize) {
        self.block.first_text.get_or_insert(number);
        self.block.last_text = number;
    }

    /// Adds `line` (at `start` in the input) without its first `marker`, unless what is left
    /// is blank (how marker lines keep what follows the marker).
    fn push_without_marker(&mut self, number: usize, line: &str, start: usize, marker: &str) {
        let (cut_start, cut_end) = match search::find(line.as_bytes(), marker.as_bytes()) {
            Some(at) => (at, at + marker.len()),
            None => (line.len(), line.len()),
        };
        let blank = |text: &str| text.bytes().all(grammar::is_stripped);
        if !blank(&line[..cut_start]) || !blank(&line[cut_end..]) {
            self.saw_line_with_text(number);
            self.content.push_cut(
                start,
                start + cut_start,
                start + cut_end,
                start + line.len(),
            );
        }
    }

    fn open(&mut self, state: State, number: usize) {
        self.state = state;
        self.opened_at = number;
    }

    /// Where a line of this shape, read now, lets a fresh walk take over (see [`Cut`]).
    fn cut_at(&self, shape: &Shape<'_>) -> Option<Cut> {
        if !matches!(self.state, State::Normal) || !self.stack.is_empty() {
            return None;
        }
        match shape {
            Shape::Header { rest, .. } if grammar::strip(rest).is_empty() => Some(Cut::Before),
            Shape::Header { .. } => Some(Cut::After),
            _ => None,
        }
    }

    /// The walk, its lines until the first header being text of a block of `role` (where a
    /// walk started after an inline header is).
    pub(crate) fn in_block_of(mut self, role: &'a str) -> Self {
        self.block.role = role;
        self
    }

    pub(crate) fn line(
        &mut self,
        index: usize,
        line: &'a str,
        start: usize,
        shape: Shape<'a>,
        closes: &mut impl CloseTable,
    ) {
        let number = index + 1;
        match self.state {
            State::Fence => match shape {
                Shape::Fence => {
                    self.state = State::Normal;
                    self.push(number, line, start, 0);
                }
                Shape::CmdOpen => self.cmd_open(number, line, start),
                _ => self.push(number, line, start, 0),
            },
            State::Xml => match shape {
                // Rule 1: ordinary content; rule 3 does not apply here (we fix), rule 4 does.
                Shape::Fence => self.push(number, line, start, 0),
                Shape::CmdOpen => self.cmd_open(number, line, start),
                _ => {
                    if let Some(tag) = (self.first_close_tag)(line) {
                        if self.stack.last().is_some_and(|top| *top == tag) {
                            self.stack.pop();
                        }
                        if self.stack.is_empty() {
                            self.state = State::Normal;
                        }
                    }
                    self.push(number, line, start, 0);
                }
            },
            State::Square => {
                if shape == Shape::Fence {
                    self.push(number, line, start, 0);
                    return;
                }
                if grammar::ends_with_square_close(line) {
                    self.state = State::Normal;
                    self.push_without_marker(number, line, start, "]]");
                    return;
                }
                match shape {
                    Shape::SquareOpen => self.push_without_marker(number, line, start, "[["),
                    Shape::CmdOpen => self.cmd_open(number, line, start),
                    Shape::CmdClose => {
                        self.state = State::Normal;
                        if grammar::cmd_close_rewrites(line) {
                            self.saw_line_with_text(number);
                            self.content.push_fixed("</cmd_output>");
                        } else {
                            self.push(number, line, start, 0);
                        }
                    }
                    _ => self.push(number, line, start, 0),
                }
            }
            State::Normal => self.normal_line(number, line, start, shape, closes),
        }
    }

    /// Rule 4: a command-output opener starts a square block, whatever block it is in.
    fn cmd_open(&mut self, number: usize, line: &str, start: usize) {
        if !matches!(self.state, State::Square) {
            self.open(State::Square, number);
        }
        match grammar::cmd_open_command(line) {
            Some(cmd) => {
                let cmd_start = start + offset_in(line, cmd);
                self.saw_line_with_text(number);
                self.content.push_rewritten(
                    "<cmd_output cmd=\"",
                    (cmd_start, cmd_start + cmd.len()),
                    "\">",
                );
            }
            None => self.push(number, line, start, 0),
        }
    }

    fn normal_line(
        &mut self,
        number: usize,
        line: &'a str,
        start: usize,
        shape: Shape<'a>,
        closes: &mut impl CloseTable,
    ) {
        let shape = match shape {
            // Rule 5 only applies inside a square block; elsewhere the line is read again
            // without the block-marker rules.
            Shape::CmdClose => lines::plain_shape(line),
            shape => shape,
        };
        match shape {
            Shape::Fence => {
                self.open(State::Fence, number);
                self.push(number, line, start, 0);
            }
            Shape::SquareOpen => {
                self.open(State::Square, number);
                self.push_without_marker(number, line, start, "[[");
            }
            Shape::CmdOpen => self.cmd_open(number, line, start),
            Shape::XmlOpen { tag } => {
                if closes
                    .last(tag)
                    .is_some_and(|last| last > self.base + start + line.len())
                {
                    self.stack.push(tag);
                    self.open(State::Xml, number);
                }
                self.push(number, line, start, 0);
            }
            Shape::Header { role, rest } => self.header(number, role, rest),
            // The body is the line without its first byte, the backslash.
            Shape::Escaped { .. } => self.push(number, line, start, 1),
            Shape::CmdClose | Shape::Text => self.push(number, line, start, 0),
        }
    }

    fn header(&mut self, number: usize, role: &'a str, rest: &'a str) {
        self.flush();
        let inline = grammar::strip(rest);
        if inline.is_empty() {
            self.block = Block::new(role, true, number, number);
            return;
        }
        self.each.message(MessageRef {
            role,
            content: Cow::Borrowed(inline),
            span: LineSpan {
                start: number,
                end: number,
            },
        });
        let next_role = if role == "previous_response_id" || role == "agent" {
            DEFAULT_ROLE
        } else {
            self.block.role
        };
        self.block = Block::new(next_role, false, number, 0);
    }

    fn flush(&mut self) {
        let block = &self.block;
        if !block.explicit && block.first_text.is_none() {
            // Only blank lines: no message, and nothing to copy.
            self.content.clear();
            return;
        }
        let start = if block.explicit {
            block.header_line
        } else {
            block.first_text.unwrap_or(block.header_line)
        };
        let end = block.last_text.max(start);
        let role = block.role;
        let content = self.content.take_stripped();
        self.each.message(MessageRef {
            role,
            content,
            span: LineSpan { start, end },
        });
    }

    /// Where the messages went, the walk left unfinished (its last block is not handed out).
    pub(crate) fn into_sink(self) -> S {
        self.each
    }

    pub(crate) fn finish(mut self) -> Option<OpenBlock> {
        self.flush();
        match self.state {
            State::Normal => None,
            State::Fence => Some(BlockKind::Fence),
            State::Square => Some(BlockKind::Square),
            State::Xml => Some(BlockKind::Xml),
        }
        .map(|kind| OpenBlock {
            kind,
            line: self.opened_at,
        })
    }
}
