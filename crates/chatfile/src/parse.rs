//! The parser: text in, `{role, content}` messages with their line spans out. Pure.
//!
//! The entry points are here (the messages are in `message.rs`); the walk over the lines, with the rules where
//! the notes leave room, is in `walk.rs`. [`parse_each`] hands each message out as soon as it
//! is complete; `stream.rs` reads a file a window at a time with the same walk.

use std::collections::HashMap;

#[cfg(test)]
use crate::grammar;
use crate::lines;
use crate::walk::{Walk, offset_in, walk_lines};

pub use crate::message::{
    BlockKind, ChatMessage, DEFAULT_ROLE, Document, LineSpan, MessageRef, OpenBlock, ParsedMessage,
};

/// Parses a chat file into messages with line spans.
pub fn parse(text: &str) -> Vec<ParsedMessage> {
    parse_document(text).messages
}

/// Parses a chat file into messages without spans.
pub fn parse_messages(text: &str) -> Vec<ChatMessage> {
    parse_borrowed(text)
        .into_iter()
        .map(|message| ChatMessage {
            role: message.role.to_owned(),
            content: message.content.into_owned(),
        })
        .collect()
}

/// Parses a chat file into messages that borrow from `text` wherever they can: the same
/// reading as [`parse`], without copying the content of messages the parser did not rewrite.
pub fn parse_borrowed(text: &str) -> Vec<MessageRef<'_>> {
    let mut messages = Vec::new();
    parse_each(text, |message| messages.push(message));
    messages
}

/// Parses a chat file, also reporting a protected block left open at its end.
pub fn parse_document(text: &str) -> Document {
    let mut messages = Vec::new();
    let unclosed = parse_each(text, |message| messages.push(message.into_owned()));
    Document { messages, unclosed }
}

/// Parses a chat file and hands each message to `each` as soon as it is complete, in file
/// order (the reading of [`parse_borrowed`], without gathering the messages); returns the
/// protected block left open at the end, if any. For readers that stream the messages out.
pub fn parse_each<'a>(text: &'a str, each: impl FnMut(MessageRef<'a>)) -> Option<OpenBlock> {
    let mut closes = last_close_offsets(text);
    let mut walk = Walk::new(text, 0, lines::first_close_tag, each);
    walk_lines(text, &mut walk, 0, &mut closes);
    walk.finish()
}

/// The same reading with the grammar run on every line: what the fast path must equal.
#[cfg(test)]
pub(crate) fn parse_document_grammar_only(text: &str) -> Document {
    let mut last_close = HashMap::new();
    for line in text.split('\n') {
        for tag in grammar::close_tags(line) {
            last_close.insert(tag, offset_in(text, tag));
        }
    }
    let mut messages = Vec::new();
    let mut walk = Walk::new(
        text,
        0,
        grammar::first_close_tag,
        |message: MessageRef<'_>| messages.push(message.into_owned()),
    );
    for (index, (shape, line)) in grammar::shapes(text).into_iter().enumerate() {
        let start = offset_in(text, line);
        walk.line(index, line, start, shape, &mut last_close);
    }
    let unclosed = walk.finish();
    Document { messages, unclosed }
}

/// For each tag name, the offset of the last `</name>` (rule 7 asks whether one appears on a
/// later line, that is after the end of the opening line; answering from this table keeps
/// that question O(1)). A closing tag holds no newline, so the whole text is searched at once.
fn last_close_offsets(text: &str) -> HashMap<&str, usize> {
    let mut last = HashMap::new();
    for tag in lines::close_tags(text) {
        last.insert(tag, offset_in(text, tag));
    }
    last
}
