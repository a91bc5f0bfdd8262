//! The line shapes without the grammar: lines split with `memchr`, and each shape decided from
//! the bytes, in the grammar's order, by small recognizers written from the rules of
//! `chat.pest`.
//!
//! The grammar stays the statement of the shapes. Every shape but the command-output markers
//! (rules 4 and 5) is fixed by a line's first bytes (a fence, `[[`, `<name` then `>` or
//! whitespace and a `>`, `role:` at column 0, backslashes then `role:`); a marker needs `:--`
//! somewhere on the line, whose offsets are found for the whole text in one pass, so a line
//! without one skips those rules. Closing tags are found the same way. The property tests in
//! `fast_path_tests.rs` hold this path equal to the grammar, line by line and message by
//! message, on arbitrary input.

use memchr::memmem::Finder;

use crate::grammar::Shape;

/// The lines of a text, split on `"\n"`, each with its shape and its byte offset.
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Where the next line starts; `None` once the last line was returned.
    next: Option<usize>,
    /// The offsets of the `:--` in the text, found in one pass; the front one is the first at
    /// or after the current line.
    cmd_markers: memchr::memmem::FindIter<'a, 'static>,
    next_cmd_marker: Option<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut cmd_markers = memchr::memmem::find_iter(text.as_bytes(), ":--");
        let next_cmd_marker = cmd_markers.next();
        Lines {
            text,
            next: Some(0),
            cmd_markers,
            next_cmd_marker,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    /// The shape, the line (without its `"\n"`) and the offset of its first byte.
    type Item = (Shape<'a>, &'a str, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.next?;
        let rest = self.text.get(start..)?;
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(len) => {
                self.next = Some(start + len + 1);
                &rest[..len]
            }
            None => {
                self.next = None;
                rest
            }
        };
        let end = start + line.len();
        while self.next_cmd_marker.is_some_and(|at| at < start) {
            self.next_cmd_marker = self.cmd_markers.next();
        }
        // `:--` has no newline, so one that starts in the line ends in it.
        let has_cmd_marker = self.next_cmd_marker.is_some_and(|at| at < end);
        Some((shape(line, has_cmd_marker), line, start))
    }
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
    let first_cmd = memchr::memmem::find(bytes, b":--")?;
    let word_end = bytes[..first_cmd]
        .iter()
        .position(|&b| is_ruby_space(b))
        .unwrap_or(first_cmd);
    // The word stops at the first `:-- `, which can only be at or after the first `:--`.
    if word_end == first_cmd {
        let at_open = memchr::memmem::find(&bytes[first_cmd..], b":-- ")
            .map(|at| first_cmd + at)
            .filter(|&at| !bytes[first_cmd..at].iter().any(|&b| is_ruby_space(b)));
        if let Some(at) = at_open {
            if memchr::memmem::find(&bytes[at + 4..], b" {{{").is_some() {
                return Some(Shape::CmdOpen);
            }
        }
    }
    memchr::memmem::find(&bytes[first_cmd + 3..], b" }}}").map(|_| Shape::CmdClose)
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

/// The indexes (from 0) of the lines of `text` that hold `"</"`, in order, each once: the only
/// lines that can hold a closing tag (rule 6).
pub(crate) fn lines_with_close_tags(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut line_index = 0;
    // The offset up to which newlines were counted, and where the current line starts.
    let mut counted = 0;
    let mut line_start = 0;
    let mut from = 0;
    let finder = Finder::new("</");
    while let Some(at) = finder.find(&bytes[from..]).map(|at| at + from) {
        let newlines = memchr::memchr_iter(b'\n', &bytes[counted..at]);
        for newline in newlines {
            line_index += 1;
            line_start = counted + newline + 1;
        }
        counted = at;
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |len| at + len);
        found.push((line_index, &text[line_start..line_end]));
        from = line_end;
    }
    found
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

    #[test]
    fn close_tag_lines_are_found_once_each() {
        let text = "a</b></c>\nx\n\n y </z>\n</";
        assert_eq!(
            lines_with_close_tags(text),
            vec![(0, "a</b></c>"), (3, " y </z>"), (4, "</")]
        );
        assert!(lines_with_close_tags("no tags\nhere").is_empty());
    }
}
