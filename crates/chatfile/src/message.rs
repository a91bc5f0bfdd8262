//! The messages the parser gives, owned and borrowed, with their line spans, and what it
//! reports about blocks left open.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

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

    /// The message without its span, moved rather than copied.
    pub fn into_message(self) -> ChatMessage {
        ChatMessage::new(self.role, self.content)
    }
}

/// A parsed message that borrows from the text it was read from: the role always, the content
/// whenever it is one run of the input (a block of lines the parser did not rewrite). What
/// [`crate::parse_borrowed`] gives, for readers that need no owned copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageRef<'a> {
    /// The role.
    pub role: &'a str,
    /// The stripped content.
    pub content: Cow<'a, str>,
    /// The lines it spans.
    pub span: LineSpan,
}

impl MessageRef<'_> {
    /// The owned message with its span.
    pub fn into_owned(self) -> ParsedMessage {
        ParsedMessage {
            role: self.role.to_owned(),
            content: self.content.into_owned(),
            span: self.span,
        }
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
