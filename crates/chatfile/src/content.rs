//! A message's content while the parser collects it: pieces of the input rather than copies,
//! turned into one string of the right size when the message is complete.
//!
//! The content of a block is `"\n" + line` for each line it holds, stripped as a whole. Most
//! lines follow the previous one in the input, so a run of them is one slice; the lines the
//! parser rewrites (a marker removed, a command-output line) are slices and fixed text too, so
//! nothing is copied until the message is complete.

use std::borrow::Cow;

use crate::grammar::{is_stripped, strip};

enum Piece {
    /// The newline before a line that does not follow the previous piece in the input.
    Newline,
    /// `input[start..end]`, which may span several lines.
    Input { start: usize, end: usize },
    /// Text the parser writes in place of some of the input.
    Fixed(&'static str),
}

/// The pieces of the content being collected; reused from message to message.
pub(crate) struct Content<'a> {
    input: &'a str,
    pieces: Vec<Piece>,
}

impl<'a> Content<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Content {
            input,
            pieces: Vec::new(),
        }
    }

    /// Adds `"\n"` and `input[start..end]`, which ends at the end of a line.
    #[inline]
    pub(crate) fn push_input(&mut self, start: usize, end: usize) {
        // A slice that starts right after the newline that ends the previous piece extends it.
        if let Some(Piece::Input { end: last, .. }) = self.pieces.last_mut() {
            if *last + 1 == start && self.input.as_bytes().get(*last) == Some(&b'\n') {
                *last = end;
                return;
            }
        }
        self.pieces.push(Piece::Newline);
        self.pieces.push(Piece::Input { start, end });
    }

    /// Adds `"\n"` and `input[start..end]` without `input[cut_start..cut_end]` (a line without
    /// its marker).
    pub(crate) fn push_cut(&mut self, start: usize, cut_start: usize, cut_end: usize, end: usize) {
        self.pieces.push(Piece::Newline);
        self.pieces.push(Piece::Input {
            start,
            end: cut_start,
        });
        // What follows the cut ends the line, so the next line may extend it.
        self.pieces.push(Piece::Input {
            start: cut_end,
            end,
        });
    }

    /// Adds `"\n"` and `before`, `input[start..end]` and `after` (a rewritten line that keeps
    /// some of the input).
    pub(crate) fn push_rewritten(
        &mut self,
        before: &'static str,
        (start, end): (usize, usize),
        after: &'static str,
    ) {
        self.pieces.push(Piece::Newline);
        self.pieces.push(Piece::Fixed(before));
        self.pieces.push(Piece::Input { start, end });
        self.pieces.push(Piece::Fixed(after));
    }

    /// Adds `"\n"` and `text` (a line the parser rewrote whole).
    pub(crate) fn push_fixed(&mut self, text: &'static str) {
        self.pieces.push(Piece::Newline);
        self.pieces.push(Piece::Fixed(text));
    }

    /// The stripped content, and the pieces cleared for the next message: a slice of the input
    /// when the content is one run of it, else one allocation (none when it is empty).
    pub(crate) fn take_stripped(&mut self) -> Cow<'a, str> {
        if let [Piece::Newline, Piece::Input { start, end }] = *self.pieces.as_slice() {
            let text = strip(self.input.get(start..end).unwrap_or_default());
            self.clear();
            return Cow::Borrowed(text);
        }
        let out = self.joined();
        self.clear();
        Cow::Owned(out)
    }

    /// The pieces joined and stripped, in one allocation of the right size.
    fn joined(&self) -> String {
        let piece = |piece| piece_text(self.input, piece);
        let capacity: usize = self.pieces.iter().map(|p| piece(p).len()).sum();
        let mut out = String::new();
        for text in self.pieces.iter().map(piece) {
            if out.is_empty() {
                let text = strip_start(text);
                if !text.is_empty() {
                    out.reserve_exact(capacity);
                    out.push_str(text);
                }
            } else {
                out.push_str(text);
            }
        }
        let kept = strip(&out).len();
        out.truncate(kept);
        out
    }

    pub(crate) fn clear(&mut self) {
        self.pieces.clear();
    }
}

/// The text of a piece of `input`'s content.
fn piece_text<'p>(input: &'p str, piece: &'p Piece) -> &'p str {
    match piece {
        Piece::Newline => "\n",
        Piece::Input { start, end } => input.get(*start..*end).unwrap_or_default(),
        Piece::Fixed(text) => text,
    }
}

fn strip_start(text: &str) -> &str {
    let start = text
        .bytes()
        .position(|b| !is_stripped(b))
        .unwrap_or(text.len());
    text.get(start..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_lines_are_one_slice_and_the_result_is_stripped() {
        let input = "  a\nb \n\\c\nd\n";
        let mut content = Content::new(input);
        content.push_input(0, 3);
        content.push_input(4, 6);
        // `\c` without its backslash: not contiguous, then `d` extends it.
        content.push_input(8, 9);
        content.push_input(10, 11);
        assert_eq!(content.pieces.len(), 4);
        assert_eq!(content.take_stripped(), "a\nb \nc\nd");
        assert!(content.pieces.is_empty());
        content.push_fixed("<x>");
        content.push_input(0, 3);
        assert_eq!(content.take_stripped(), "<x>\n  a");
        content.push_input(12, 12);
        assert_eq!(content.take_stripped(), "");
    }

    #[test]
    fn cut_and_rewritten_lines_keep_what_they_keep() {
        let input = "[[ a\nb\nsh:-- ls {{{\n";
        let mut content = Content::new(input);
        // `[[ a` without `[[`, then `b` extends what follows the cut.
        content.push_cut(0, 0, 2, 4);
        content.push_input(5, 6);
        assert_eq!(content.pieces.len(), 3);
        content.push_rewritten("<cmd_output cmd=\"", (13, 15), "\">");
        content.push_fixed("</cmd_output>");
        assert_eq!(
            content.take_stripped(),
            "a\nb\n<cmd_output cmd=\"ls\">\n</cmd_output>"
        );
    }
}
