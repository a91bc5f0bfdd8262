//! The parser: text in, `{role, content}` messages with their line spans out. Pure.
//!
//! It walks the file one line at a time. Each line's shape comes from the pest grammar
//! (`chat.pest`); what the shape means depends on the block the walk is in (fence, `[[`, XML),
//! which is the small state machine below. Nothing recurses and each line is looked at a
//! constant number of times, so parsing is linear in the size of the input whatever it holds.
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

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::grammar::{self, Shape};

/// The role of text before the first header, and of the lines after an inline
/// `previous_response_id:` or `agent:`.
pub const DEFAULT_ROLE: &str = "user";

/// A message as a `.chat` file holds it: a role (any `[a-z0-9_]+` name, control roles
/// included) and its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The role, such as `user`, `assistant`, `file` or `option`.
    pub role: String,
    /// The text, stripped of ASCII whitespace at both ends.
    pub content: String,
}

impl ChatMessage {
    /// A message with the given role and content.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// Lines of the source, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LineSpan {
    /// The first line: the header's line, or the first line with text for a block without one.
    pub start: usize,
    /// The last line that holds some of the message's text (`start` when there is none).
    pub end: usize,
}

/// A parsed message and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParsedMessage {
    /// The role.
    pub role: String,
    /// The stripped content.
    pub content: String,
    /// The lines it spans.
    pub span: LineSpan,
}

impl ParsedMessage {
    /// The message without its span.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::new(self.role.clone(), self.content.clone())
    }
}

/// A kind of protected block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// A triple-backtick fence.
    Fence,
    /// A `[[ ... ]]` block (or a `word:-- cmd {{{` command output).
    Square,
    /// An XML block, `<tag>` ... `</tag>`.
    Xml,
}

impl BlockKind {
    /// How the block is written, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            BlockKind::Fence => "``` fence",
            BlockKind::Square => "[[ block",
            BlockKind::Xml => "XML block",
        }
    }
}

/// A protected block still open at the end of the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpenBlock {
    /// Its kind.
    pub kind: BlockKind,
    /// The line that opened it.
    pub line: usize,
}

/// Everything the parser learns from a file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Document {
    /// The messages in file order. Empty messages are kept when a header started them.
    pub messages: Vec<ParsedMessage>,
    /// The protected block left open at the end of the file, if any (it ran to the end).
    pub unclosed: Option<OpenBlock>,
}

/// Parses a chat file into messages with line spans.
pub fn parse(text: &str) -> Vec<ParsedMessage> {
    parse_document(text).messages
}

/// Parses a chat file into messages without spans.
pub fn parse_messages(text: &str) -> Vec<ChatMessage> {
    parse(text).iter().map(ParsedMessage::to_message).collect()
}

/// Parses a chat file, also reporting a protected block left open at its end.
pub fn parse_document(text: &str) -> Document {
    let last_close = last_close_lines(text);
    let mut walk = Walk::new();
    for (index, (shape, line)) in grammar::shapes(text).into_iter().enumerate() {
        walk.line(index, line, shape, &last_close);
    }
    walk.finish()
}

/// For each tag name, the index of the last line holding `</name>` (rule 7 asks whether one
/// appears on a later line; answering from this table keeps that question O(1)).
fn last_close_lines(text: &str) -> HashMap<&str, usize> {
    let mut last = HashMap::new();
    for (index, line) in text.split('\n').enumerate() {
        for tag in grammar::close_tags(line) {
            last.insert(tag, index);
        }
    }
    last
}

enum State {
    Normal,
    Fence,
    Square,
    Xml,
}

/// The message being collected.
struct Block {
    role: String,
    /// Started by a block header (kept even when empty) rather than implied.
    explicit: bool,
    header_line: usize,
    content: String,
    first_text: Option<usize>,
    last_text: usize,
}

struct Walk {
    state: State,
    opened_at: usize,
    /// The XML tag stack; it outlives the XML block (see the module docs).
    stack: Vec<String>,
    block: Block,
    messages: Vec<ParsedMessage>,
}

impl Walk {
    fn new() -> Self {
        Walk {
            state: State::Normal,
            opened_at: 0,
            stack: Vec::new(),
            block: Block {
                role: DEFAULT_ROLE.to_owned(),
                explicit: false,
                header_line: 1,
                content: String::new(),
                first_text: None,
                last_text: 0,
            },
            messages: Vec::new(),
        }
    }

    fn push(&mut self, number: usize, text: &str) {
        self.block.content.push('\n');
        self.block.content.push_str(text);
        if !grammar::strip(text).is_empty() {
            self.block.first_text.get_or_insert(number);
            self.block.last_text = number;
        }
    }

    /// Adds `text` unless it is blank (how marker lines keep what follows the marker).
    fn push_unless_blank(&mut self, number: usize, text: &str) {
        if !grammar::strip(text).is_empty() {
            self.push(number, text);
        }
    }

    fn open(&mut self, state: State, number: usize) {
        self.state = state;
        self.opened_at = number;
    }

    fn line(
        &mut self,
        index: usize,
        line: &str,
        shape: Shape<'_>,
        last_close: &HashMap<&str, usize>,
    ) {
        let number = index + 1;
        match self.state {
            State::Fence => match shape {
                Shape::Fence => {
                    self.state = State::Normal;
                    self.push(number, line);
                }
                Shape::CmdOpen => self.cmd_open(number, line),
                _ => self.push(number, line),
            },
            State::Xml => match shape {
                // Rule 1: ordinary content; rule 3 does not apply here (we fix), rule 4 does.
                Shape::Fence => self.push(number, line),
                Shape::CmdOpen => self.cmd_open(number, line),
                _ => {
                    if let Some(tag) = grammar::first_close_tag(line) {
                        if self.stack.last().is_some_and(|top| top == tag) {
                            self.stack.pop();
                        }
                        if self.stack.is_empty() {
                            self.state = State::Normal;
                        }
                    }
                    self.push(number, line);
                }
            },
            State::Square => {
                if shape == Shape::Fence {
                    self.push(number, line);
                    return;
                }
                if grammar::ends_with_square_close(line) {
                    self.state = State::Normal;
                    self.push_unless_blank(number, &line.replacen("]]", "", 1));
                    return;
                }
                match shape {
                    Shape::SquareOpen => {
                        self.push_unless_blank(number, &line.replacen("[[", "", 1));
                    }
                    Shape::CmdOpen => self.cmd_open(number, line),
                    Shape::CmdClose => {
                        self.state = State::Normal;
                        if grammar::cmd_close_rewrites(line) {
                            self.push(number, "</cmd_output>");
                        } else {
                            self.push(number, line);
                        }
                    }
                    _ => self.push(number, line),
                }
            }
            State::Normal => self.normal_line(number, index, line, shape, last_close),
        }
    }

    /// Rule 4: a command-output opener starts a square block, whatever block it is in.
    fn cmd_open(&mut self, number: usize, line: &str) {
        if !matches!(self.state, State::Square) {
            self.open(State::Square, number);
        }
        match grammar::cmd_open_command(line) {
            Some(cmd) => self.push(number, &format!("<cmd_output cmd=\"{cmd}\">")),
            None => self.push(number, line),
        }
    }

    fn normal_line(
        &mut self,
        number: usize,
        index: usize,
        line: &str,
        shape: Shape<'_>,
        last_close: &HashMap<&str, usize>,
    ) {
        let shape = match shape {
            // Rule 5 only applies inside a square block; elsewhere the line is read again
            // without the block-marker rules.
            Shape::CmdClose => grammar::classify_plain(line),
            shape => shape,
        };
        match shape {
            Shape::Fence => {
                self.open(State::Fence, number);
                self.push(number, line);
            }
            Shape::SquareOpen => {
                self.open(State::Square, number);
                self.push_unless_blank(number, &line.replacen("[[", "", 1));
            }
            Shape::CmdOpen => self.cmd_open(number, line),
            Shape::XmlOpen { tag } => {
                if last_close.get(tag).is_some_and(|&last| last > index) {
                    self.stack.push(tag.to_owned());
                    self.open(State::Xml, number);
                }
                self.push(number, line);
            }
            Shape::Header { role, rest } => self.header(number, role, rest),
            Shape::Escaped { body } => self.push(number, body),
            Shape::CmdClose | Shape::Text => self.push(number, line),
        }
    }

    fn header(&mut self, number: usize, role: &str, rest: &str) {
        self.flush();
        let inline = grammar::strip(rest);
        if inline.is_empty() {
            self.block = Block {
                role: role.to_owned(),
                explicit: true,
                header_line: number,
                content: String::new(),
                first_text: None,
                last_text: number,
            };
            return;
        }
        self.messages.push(ParsedMessage {
            role: role.to_owned(),
            content: inline.to_owned(),
            span: LineSpan {
                start: number,
                end: number,
            },
        });
        let next_role = if role == "previous_response_id" || role == "agent" {
            DEFAULT_ROLE.to_owned()
        } else {
            std::mem::take(&mut self.block.role)
        };
        self.block = Block {
            role: next_role,
            explicit: false,
            header_line: number,
            content: String::new(),
            first_text: None,
            last_text: 0,
        };
    }

    fn flush(&mut self) {
        let block = &mut self.block;
        let content = grammar::strip(&block.content);
        if !block.explicit && content.is_empty() {
            return;
        }
        let start = if block.explicit {
            block.header_line
        } else {
            block.first_text.unwrap_or(block.header_line)
        };
        self.messages.push(ParsedMessage {
            role: block.role.clone(),
            content: content.to_owned(),
            span: LineSpan {
                start,
                end: block.last_text.max(start),
            },
        });
    }

    fn finish(mut self) -> Document {
        self.flush();
        let unclosed = match self.state {
            State::Normal => None,
            State::Fence => Some(BlockKind::Fence),
            State::Square => Some(BlockKind::Square),
            State::Xml => Some(BlockKind::Xml),
        }
        .map(|kind| OpenBlock {
            kind,
            line: self.opened_at,
        });
        Document {
            messages: self.messages,
            unclosed,
        }
    }
}
