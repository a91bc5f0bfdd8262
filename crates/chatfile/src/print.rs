//! The serializer: messages in, chat file text out, such that parsing the text gives the same
//! messages back. Pure.
//!
//! Content is written as it is wherever the parser would read it back unchanged. Where it would
//! not, the line is escaped:
//! - a header-shaped line gets a leading backslash (rule 9);
//! - a line already escaped, and any line that would open a block the content does not close
//!   itself (a `[[` line, a command-output marker, a fence or XML tag without its closer, or
//!   whose block holds a line that would break it), is wrapped as `[[LINE` plus a `]]` line:
//!   the parser drops both markers and keeps `LINE` verbatim.
//!
//! The text is also read the same by the reference implementation (scout-ai's `Chat.parse`):
//! every construct used means the same there. (The notes escape an already-escaped line with a
//! second backslash; the reference would not undo that, so such a line is wrapped instead.)

use std::collections::HashMap;

use thiserror::Error;

use crate::grammar::Shape;
use crate::lines::{self, Lines};
use crate::parse::ChatMessage;

/// Roles written in the inline form `role: value` when their content is one line.
pub const INLINE_ROLES: &[&str] = &[
    "option",
    "sticky_option",
    "endpoint",
    "model",
    "backend",
    "agent",
    "format",
    "persist",
    "previous_response_id",
    "function_call",
    "function_call_output",
    "meta",
    "import",
    "continue",
    "last",
    "file",
    "directory",
    "image",
    "pdf",
    "tool",
    "mcp",
    "task",
    "inline_task",
    "exec_task",
    "websearch",
];

/// Why messages could not be written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PrintError {
    /// A role that a header cannot hold.
    #[error(
        "cannot write message {index} with role `{role}`: a .chat role is one or more of a-z, 0-9 and _"
    )]
    InvalidRole {
        /// The message's position in the list, from 0.
        index: usize,
        /// The role.
        role: String,
    },
}

/// Whether `role` can be written as a header.
pub fn is_valid_role(role: &str) -> bool {
    !role.is_empty()
        && role
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Writes messages as a chat file: each message as `role:`, a blank line and its content (or
/// `role: value` for one-line values of [`INLINE_ROLES`]), separated by blank lines, ending
/// with a newline.
///
/// For every list of messages with valid roles and stripped contents,
/// `parse_messages(&print(m)?) == m`.
pub fn print(messages: &[ChatMessage]) -> Result<String, PrintError> {
    // Each message costs its role, its content and a few separators; escapes are rare, so a
    // small margin keeps the buffer from growing in practice.
    let size: usize = messages
        .iter()
        .map(|message| message.role.len() + message.content.len() + 6)
        .sum();
    let mut out = String::with_capacity(size + size / 32);
    let mut shaped = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        write_message(&mut out, &mut shaped, index, message)?;
    }
    Ok(out)
}

fn write_message<'a>(
    out: &mut String,
    shaped: &mut Vec<(Shape<'a>, &'a str)>,
    index: usize,
    message: &'a ChatMessage,
) -> Result<(), PrintError> {
    if !is_valid_role(&message.role) {
        return Err(PrintError::InvalidRole {
            index,
            role: message.role.clone(),
        });
    }
    let content = message.content.as_str();
    let one_line = !content.is_empty() && memchr::memchr(b'\n', content.as_bytes()).is_none();
    if one_line && INLINE_ROLES.contains(&message.role.as_str()) {
        out.push_str(&message.role);
        out.push_str(": ");
        out.push_str(content);
        out.push('\n');
        return Ok(());
    }
    out.push_str(&message.role);
    out.push_str(":\n");
    if !content.is_empty() {
        out.push('\n');
        write_content(out, shaped, content);
    }
    Ok(())
}

/// Writes a block's content, one line after another, each followed by a newline. Lines
/// written as they are go out as one slice of the content per run.
fn write_content<'a>(out: &mut String, shaped: &mut Vec<(Shape<'a>, &'a str)>, content: &'a str) {
    shaped.clear();
    shaped.extend(Lines::new(content).map(|(shape, line, _)| (shape, line)));
    if shaped.iter().all(|(shape, _)| *shape == Shape::Text) {
        out.push_str(content);
        out.push('\n');
        return;
    }
    let offset = |line: &str| line.as_ptr() as usize - content.as_ptr() as usize;
    let mut closers = None;
    // The first byte of the run of lines written as they are, not yet copied.
    let mut run: Option<usize> = None;
    let mut index = 0;
    while index < shaped.len() {
        let line = shaped[index].1;
        // A command-output closer means nothing outside a square block.
        let shape = match shaped[index].0 {
            Shape::CmdClose => lines::plain_shape(line),
            shape => shape,
        };
        let verbatim_until = match shape {
            Shape::Fence => closers
                .get_or_insert_with(|| Closers::new(shaped))
                .fence_after(index),
            Shape::XmlOpen { tag } => closers
                .get_or_insert_with(|| Closers::new(shaped))
                .xml_after(tag, index),
            Shape::SquareOpen | Shape::CmdOpen => None,
            // An escape the reference would not undo (it unescapes one backslash only) is
            // wrapped, which both read back the same.
            Shape::Escaped { .. } => None,
            Shape::Header { .. } => {
                flush_run(out, content, &mut run, offset(line));
                out.push('\\');
                push_line(out, line);
                index += 1;
                continue;
            }
            Shape::CmdClose | Shape::Text => Some(index),
        };
        match verbatim_until {
            Some(last) => {
                run.get_or_insert(offset(line));
                index = last + 1;
            }
            None => {
                flush_run(out, content, &mut run, offset(line));
                out.push_str("[[");
                push_line(out, line);
                push_line(out, "]]");
                index += 1;
            }
        }
    }
    flush_run(out, content, &mut run, content.len() + 1);
}

/// Copies the pending run of verbatim lines, which ends just before the line at `next`.
fn flush_run(out: &mut String, content: &str, run: &mut Option<usize>, next: usize) {
    if let Some(start) = run.take() {
        // `next - 1` is the newline that ends the run's last line (or the end of the content).
        push_line(out, content.get(start..next - 1).unwrap_or_default());
    }
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

/// Where the blocks a content line could open would close, within the content itself.
///
/// A block is written as it is only when both parsers read it the same: no line inside it may
/// be a command-output opener (which takes any block over), nor a `[[` line (which takes a
/// fence or an XML block over in the reference), nor, in an XML block, a fence line (which the
/// reference drops).
struct Closers<'a> {
    fences: Vec<usize>,
    /// Lines that would take over or be dropped from a fence.
    fence_breakers: Vec<usize>,
    /// Lines that would take over or be dropped from an XML block.
    xml_breakers: Vec<usize>,
    /// For each tag, the lines whose first closing tag is `</tag>` and that an XML block reads
    /// as content, ascending.
    xml: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Closers<'a> {
    fn new(lines: &[(Shape<'a>, &'a str)]) -> Self {
        let mut closers = Closers {
            fences: Vec::new(),
            fence_breakers: Vec::new(),
            xml_breakers: Vec::new(),
            xml: HashMap::new(),
        };
        for (index, (shape, line)) in lines.iter().enumerate() {
            match shape {
                Shape::Fence => {
                    closers.fences.push(index);
                    closers.xml_breakers.push(index);
                }
                Shape::SquareOpen | Shape::CmdOpen => {
                    closers.fence_breakers.push(index);
                    closers.xml_breakers.push(index);
                }
                _ => {
                    if let Some(tag) = lines::first_close_tag(line) {
                        closers.xml.entry(tag).or_default().push(index);
                    }
                }
            }
        }
        closers
    }

    /// The next fence line after `index`, where a fence opened at `index` closes, if nothing
    /// between would break the fence.
    fn fence_after(&self, index: usize) -> Option<usize> {
        let close = next_after(&self.fences, index)?;
        next_after(&self.fence_breakers, index)
            .is_none_or(|breaker| breaker > close)
            .then_some(close)
    }

    /// The next line after `index` whose first closing tag is `</tag>`, where an XML block
    /// opened at `index` closes, if nothing between would break the block.
    fn xml_after(&self, tag: &str, index: usize) -> Option<usize> {
        let close = self
            .xml
            .get(tag)
            .and_then(|lines| next_after(lines, index))?;
        next_after(&self.xml_breakers, index)
            .is_none_or(|breaker| breaker > close)
            .then_some(close)
    }
}

fn next_after(sorted: &[usize], index: usize) -> Option<usize> {
    let at = sorted.partition_point(|&line| line <= index);
    sorted.get(at).copied()
}
