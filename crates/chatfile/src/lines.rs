//! The line shapes without the grammar: lines split with `memchr`, and each shape decided from
//! the bytes, in the grammar's order, by small recognizers written from the rules of
//! `chat.pest`.
//!
//! The grammar stays the statement of the shapes. Every shape but the command-output markers
//! (rules 4 and 5) is fixed by a line's first bytes (a fence, `[[`, `<name` then `>` or
//! whitespace and a `>`, `role:` at column 0, backslashes then `role:`); a marker needs `:--`
//! somewhere on the line, whose offsets are found for the whole text in one pass, so a line
//! without one skips those rules. Closing tags are found the same way. Most lines need no
//! shape at all: `is_plain_*` tell from the first bytes that a line is ordinary content of the
//! block the parser is in. The property tests in `fast_path_tests.rs` hold this path equal to
//! the grammar, line by line and message by message, on arbitrary input.

use crate::grammar::Shape;
use crate::search::find;

/// The offsets of one needle in a text, found in one pass as the lines are asked about in
/// order. The needles (`:--`, `</`) hold no newline and cannot overlap themselves, so every
/// occurrence is found and one that starts in a line ends in it.
pub(crate) struct Markers<'a> {
    found: memchr::memmem::FindIter<'a, 'static>,
    /// The first occurrence at or after the last line asked about.
    next: Option<usize>,
}

impl<'a> Markers<'a> {
    pub(crate) fn new(text: &'a str, needle: &'static str) -> Self {
        let mut found = memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes());
        let next = found.next();
        Markers { found, next }
    }

    /// Whether an occurrence starts in `start..end`; lines are asked about in order.
    #[inline]
    pub(crate) fn within(&mut self, start: usize, end: usize) -> bool {
        while self.next.is_some_and(|at| at < start) {
            self.next = self.found.next();
        }
        self.next.is_some_and(|at| at < end)
    }
}

/// The lines of a text, split on `"\n"`: the offsets of each line's first byte and of its end
/// (its `"\n"` or the end of the text), and whether it holds `:--`.
pub(crate) struct LineScan<'a> {
    bytes: &'a [u8],
    /// Where the next line starts; `None` once the last line was returned.
    next: Option<usize>,
    cmd_markers: Markers<'a>,
}

impl<'a> LineScan<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        LineScan {
            bytes: text.as_bytes(),
            next: Some(0),
            cmd_markers: Markers::new(text, ":--"),
        }
    }

    /// The next line's start and end, and whether it holds `:--` (without one, rules 4 and 5
    /// cannot match).
    #[inline(always)]
    pub(crate) fn next_line(&mut self) -> Option<(usize, usize, bool)> {
        let start = self.next?;
        let end = match newline(self.bytes.get(start..)?) {
            Some(len) => {
                self.next = Some(start + len + 1);
                start + len
            }
            None => {
                self.next = None;
                self.bytes.len()
            }
        };
        Some((start, end, self.cmd_markers.within(start, end)))
    }
}

/// The offset of the first `"\n"` in `bytes`. Most lines are short: their end is looked for
/// eight bytes at a time in the first few words before `memchr` is called.
#[inline]
fn newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    for (index, chunk) in bytes.chunks_exact(8).take(4).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word) ^ (ONES * u64::from(b'\n'));
        // The high bit of each zero byte; a borrow can only set bits above the first one.
        let zeros = word.wrapping_sub(ONES) & !word & HIGH;
        if zeros != 0 {
            return Some(index * 8 + (zeros.trailing_zeros() / 8) as usize);
        }
    }
    let from = (bytes.len() / 8).min(4) * 8;
    memchr::memchr(b'\n', &bytes[from..]).map(|at| from + at)
}

/// The lines of a text, split on `"\n"`, each with its shape and its byte offset (the parser
/// asks for shapes only where the first bytes do not settle a line).
pub(crate) struct Lines<'a> {
    text: &'a str,
    scan: LineScan<'a>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Lines {
            text,
            scan: LineScan::new(text),
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    /// The shape, the line (without its `"\n"`) and the offset of its first byte.
    type Item = (Shape<'a>, &'a str, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let (start, end, has_cmd_marker) = self.scan.next_line()?;
        let line = self.text.get(start..end)?;
        Some((shape(line, has_cmd_marker), line, start))
    }
}

/// Outside blocks, whether a line without `:--` is text by its first bytes alone (`false` when
/// they do not settle it): no fence, `[[` or XML opening after the leading whitespace, and no
/// header or escaped header at column 0.
#[inline]
pub(crate) fn is_plain_outside(line: &[u8]) -> bool {
    match line.first() {
        None => true,
        Some(&b) if is_lead(b) => !matches!(after_lead(line).first(), Some(b'`' | b'[' | b'<')),
        Some(b'`' | b'[' | b'<' | b'\\') => false,
        Some(&b) if is_role(b) => line.get(role_len(line)) != Some(&b':'),
        Some(_) => true,
    }
}

/// In a fence, whether a line without `:--` is ordinary content: it is no fence line.
#[inline]
pub(crate) fn is_plain_in_fence(line: &[u8]) -> bool {
    !after_lead(line).starts_with(b"```")
}

/// In a square block, whether a line without `:--` is ordinary content: it neither opens
/// (`[[` after the leading whitespace) nor closes (`]]` at the end, rule 2) a square block.
#[inline]
pub(crate) fn is_plain_in_square(line: &[u8]) -> bool {
    let end = line
        .iter()
        .rposition(|&b| !is_lead(b))
        .map_or(0, |last| last + 1);
    !line[..end].ends_with(b"]]") && !after_lead(line).starts_with(b"[[")
}

/// `line` without its leading whitespace (the grammar's `ws_char`s).
#[inline]
fn after_lead(line: &[u8]) -> &[u8] {
    let lead = line.iter().position(|&b| !is_lead(b)).unwrap_or(line.len());
    &line[lead..]
}

/// The shape of one line, as `grammar::shapes` would give it; `has_cmd_marker` says whether
/// the line holds `:--` (without it, rules 4 and 5 cannot match).
pub(crate) fn shape(line: &str, has_cmd_marker: bool) -> Shape<'_> {
    let bytes = line.as_bytes();
    // The block markers are decided after the leading whitespace, in the grammar's order:
    // rules 1 and 3 by their first bytes, then rules 4 and 5, then rule 7 (in `plain_shape`).
    let lead = bytes
        .iter()
        .position(|&b| !is_lead(b))
        .unwrap_or(bytes.len());
    let stripped = &line[lead..];
    if stripped.starts_with("```") {
        return Shape::Fence;
    }
    if stripped.starts_with("[[") {
        return Shape::SquareOpen;
    }
    if has_cmd_marker {
        if let Some(marker) = command_marker(stripped) {
            return marker;
        }
    }
    plain_shape(line)
}

/// The grammar's `command_marker` on a line whose leading whitespace is already cut off
/// (`stripped`): `Some(CmdOpen)` or `Some(CmdClose)` when rule 4 or 5 matches.
///
/// Rule 4 (`cmd_open`): the first word runs to the first `:-- ` or Ruby whitespace, and must
/// end at a `:-- `; a ` {{{` must follow after it. Rule 5 (`cmd_close`): a ` }}}` follows the
/// first `:--`. All of the patterns are ASCII, so searching bytes finds what the grammar's
/// character steps find.
fn command_marker(stripped: &str) -> Option<Shape<'static>> {
    let bytes = stripped.as_bytes();
    let first_cmd = find(bytes, b":--")?;
    let word_end = bytes[..first_cmd]
        .iter()
        .position(|&b| is_ruby_space(b))
        .unwrap_or(first_cmd);
    // The word stops at the first `:-- `, which can only be at or after the first `:--`.
    if word_end == first_cmd {
        let at_open = find(&bytes[first_cmd..], b":-- ")
            .map(|at| first_cmd + at)
            .filter(|&at| !bytes[first_cmd..at].iter().any(|&b| is_ruby_space(b)));
        if let Some(at) = at_open {
            if find(&bytes[at + 4..], b" {{{").is_some() {
                return Some(Shape::CmdOpen);
            }
        }
    }
    find(&bytes[first_cmd + 3..], b" }}}").map(|_| Shape::CmdClose)
}

/// The shape of `line` among XML openings, headers, escaped headers and text only (the
/// grammar's `plain_line`): what a line is where the block-marker rules do not apply, and the
/// end of [`shape`] once they were ruled out.
pub(crate) fn plain_shape(line: &str) -> Shape<'_> {
    let bytes = line.as_bytes();
    let lead = bytes
        .iter()
        .position(|&b| !is_lead(b))
        .unwrap_or(bytes.len());
    if let Some(tag) = xml_open_tag(&line[lead..]) {
        return Shape::XmlOpen { tag };
    }
    // Rule 8 at column 0; rule 9: backslashes, then a header shape.
    let role = role_len(bytes);
    if role > 0 && bytes.get(role) == Some(&b':') {
        return Shape::Header {
            role: &line[..role],
            rest: &line[role + 1..],
        };
    }
    if bytes.first() == Some(&b'\\') {
        let slashes = bytes.iter().take_while(|&&b| b == b'\\').count();
        let role = role_len(&bytes[slashes..]);
        if role > 0 && bytes.get(slashes + role) == Some(&b':') {
            return Shape::Escaped { body: &line[1..] };
        }
    }
    Shape::Text
}

/// Ruby's `\s` (no NUL): the whitespace of the reference's command-output patterns.
fn is_ruby_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// The length of the `[a-z0-9_]*` run at the start of `bytes`.
fn role_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| !is_role(b))
        .unwrap_or(bytes.len())
}

/// The tag of `<name>` or `<name attrs...>` at the start of `text` (the grammar's `xml_open`):
/// attributes start with whitespace and run to a `>`.
fn xml_open_tag(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('<')?;
    let name_len = rest.bytes().position(|b| !is_word(b)).unwrap_or(rest.len());
    let after = rest.as_bytes().get(name_len..)?;
    let opens = match after.first() {
        Some(b'>') => true,
        Some(b' ' | b'\t' | 0x0B | 0x0C | b'\r') => memchr::memchr(b'>', after).is_some(),
        _ => false,
    };
    (name_len > 0 && opens).then(|| &rest[..name_len])
}

/// The names of the closing tags `</name>` on `line`, in order (the grammar's `close_tags`).
/// A closing tag holds no newline, so on a text of several lines this gives those of every
/// line, in order.
pub(crate) fn close_tags(line: &str) -> impl Iterator<Item = &str> {
    let bytes = line.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(at) = memchr::memchr(b'<', bytes.get(from..)?).map(|at| at + from) {
            from = at + 1;
            if bytes.get(at + 1) != Some(&b'/') {
                continue;
            }
            let name_start = at + 2;
            let name_len = bytes[name_start..]
                .iter()
                .position(|&b| !is_word(b))
                .unwrap_or(bytes.len() - name_start);
            let name_end = name_start + name_len;
            if name_len > 0 && bytes.get(name_end) == Some(&b'>') {
                from = name_end + 1;
                return line.get(name_start..name_end);
            }
        }
        None
    })
}

/// The name of the first closing tag on `line`, if any.
pub(crate) fn first_close_tag(line: &str) -> Option<&str> {
    close_tags(line).next()
}

/// The grammar's `ws_char`: what "strip" removes, and what may precede a block marker.
fn is_lead(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0B..=0x0D | 0)
}

/// `[a-z0-9_]`, a byte of a role.
fn is_role(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'
}

/// `[A-Za-z0-9_]`, a byte of an XML tag name.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(text: &str) -> Vec<(Shape<'_>, &str)> {
        Lines::new(text)
            .map(|(shape, line, _)| (shape, line))
            .collect()
    }

    #[test]
    fn plain_text_headers_and_markers() {
        let text = "hello\nuser: hi\n  ```rust\n[[x\n<file a>\n</file>\n\\user: x\nUser: no\n\nsh:-- ls {{{";
        assert_eq!(fast(text), crate::grammar::shapes(text));
        assert_eq!(
            fast("a\n\nb\n"),
            vec![
                (Shape::Text, "a"),
                (Shape::Text, ""),
                (Shape::Text, "b"),
                (Shape::Text, "")
            ]
        );
        assert_eq!(fast(""), vec![(Shape::Text, "")]);
    }

    #[test]
    fn offsets_point_at_each_line() {
        let text = "ab\n\ncd";
        let offsets: Vec<usize> = Lines::new(text).map(|(_, _, at)| at).collect();
        assert_eq!(offsets, vec![0, 3, 4]);
    }
}
