//! The shapes of a line and typed answers to the questions the parser and the serializer ask
//! about one. The pest grammar of `chat.pest` states the shapes; the parser reads them with the
//! recognizers of `lines.rs`, which the tests hold equal to this grammar (only the tests run
//! it).

#[cfg(test)]
use pest::Parser;
#[cfg(test)]
use pest::iterators::Pair;
#[cfg(test)]
use pest_derive::Parser;

use crate::search::{find, rfind};

#[cfg(test)]
#[derive(Parser)]
#[grammar = "chat.pest"]
struct LineGrammar;

/// What a line looks like, before the block it sits in decides what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape<'a> {
    /// The stripped line starts with three backticks.
    Fence,
    /// The stripped line starts with `[[`.
    SquareOpen,
    /// `word:-- command {{{` (see [`cmd_open_command`] for the command).
    CmdOpen,
    /// `...:-- command }}}`.
    CmdClose,
    /// `role:rest` at column 0.
    Header { role: &'a str, rest: &'a str },
    /// `\role:...`; `body` is the line without its first backslash.
    Escaped { body: &'a str },
    /// The stripped line starts with `<tag>` or `<tag attrs>`.
    XmlOpen { tag: &'a str },
    /// Anything else.
    Text,
}

/// The shape of every line of `text` (split on `"\n"`), in order, with the line itself: the
/// grammar-only reading that the fast path (`lines.rs`) is tested against.
#[cfg(test)]
pub(crate) fn shapes(text: &str) -> Vec<(Shape<'_>, &str)> {
    let Ok(mut pairs) = LineGrammar::parse(Rule::lines, text) else {
        // `lines` matches any text (every line can be `text`); stay total anyway.
        return text.split('\n').map(|line| (Shape::Text, line)).collect();
    };
    let Some(file) = pairs.next() else {
        return Vec::new();
    };
    // Each pair ends its line; the line starts right after the previous "\n".
    let mut start = 0;
    file.into_inner()
        .filter(|pair| pair.as_rule() != Rule::EOI)
        .map(|pair| {
            let end = pair.as_span().end();
            let line = text.get(start..end).unwrap_or_default();
            start = end + 1;
            (shape_of_pair(pair), line)
        })
        .collect()
}

#[cfg(test)]
/// The shape of one line (without `"\n"`) among all ten rules of the notes.
pub(crate) fn classify(line: &str) -> Shape<'_> {
    first_shape(Rule::lines, line)
}

/// The shape of `line` among headers, escaped headers, XML openings and text only: what a line
/// is where the block-marker rules do not apply.
#[cfg(test)]
pub(crate) fn classify_plain(line: &str) -> Shape<'_> {
    first_shape(Rule::plain_line, line)
}

#[cfg(test)]
fn first_shape(rule: Rule, line: &str) -> Shape<'_> {
    LineGrammar::parse(rule, line)
        .ok()
        .and_then(|mut pairs| pairs.next())
        .and_then(|outer| outer.into_inner().next())
        .map_or(Shape::Text, shape_of_pair)
}

#[cfg(test)]
fn shape_of_pair(kind: Pair<'_, Rule>) -> Shape<'_> {
    match kind.as_rule() {
        Rule::fence => Shape::Fence,
        Rule::square_open => Shape::SquareOpen,
        Rule::cmd_open => Shape::CmdOpen,
        Rule::cmd_close => Shape::CmdClose,
        Rule::header => {
            let mut role = "";
            let mut rest = "";
            for part in kind.into_inner() {
                match part.as_rule() {
                    Rule::role_name => role = part.as_str(),
                    Rule::header_rest => rest = part.as_str(),
                    _ => {}
                }
            }
            Shape::Header { role, rest }
        }
        Rule::escaped => Shape::Escaped {
            body: inner_str(kind, Rule::escaped_body),
        },
        Rule::xml_open => Shape::XmlOpen {
            tag: inner_str(kind, Rule::word),
        },
        _ => Shape::Text,
    }
}

#[cfg(test)]
fn inner_str<'a>(pair: Pair<'a, Rule>, rule: Rule) -> &'a str {
    pair.into_inner()
        .find(|inner| inner.as_rule() == rule)
        .map_or("", |inner| inner.as_str())
}

/// Ruby's `\s`, the whitespace of the reference's command-output patterns (no NUL).
fn is_ruby_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

/// The command of a command-output opener as the reference rewrites it: the reference
/// substitutes `^[^\s]*:-- (.*) {{{.*` on the raw line, so the command runs from after the
/// first word's `:-- ` to the line's LAST ` {{{`. `None` when the raw line does not match
/// (it starts with whitespace, say): the reference then keeps the line as written, although
/// the block still opens.
pub(crate) fn cmd_open_command(line: &str) -> Option<&str> {
    let word_end = line.find(is_ruby_space)?;
    if !line[..word_end].ends_with(":--") || !line[word_end..].starts_with(' ') {
        return None;
    }
    let rest = &line[word_end + 1..];
    rfind(rest.as_bytes(), b" {{{").map(|end| &rest[..end])
}

/// Whether the reference rewrites a command-output closer to `</cmd_output>`: it substitutes
/// `^.*:-- .* }}}.*` on the raw line, which needs `:-- ` (with its space), unlike the test
/// that closes the block. When this is false the line is kept as written.
pub(crate) fn cmd_close_rewrites(line: &str) -> bool {
    let bytes = line.as_bytes();
    find(bytes, b":-- ").is_some_and(|start| find(&bytes[start + 4..], b" }}}").is_some())
}

/// Whether the stripped line ends with `]]` (rule 2: a suffix, so asked of the line itself
/// rather than of the grammar, which reads lines from their start).
pub(crate) fn ends_with_square_close(line: &str) -> bool {
    strip(line).ends_with("]]")
}

/// The names of the closing tags `</name>` on `line`, in order.
#[cfg(test)]
pub(crate) fn close_tags(line: &str) -> Vec<&str> {
    if !line.contains("</") {
        return Vec::new();
    }
    let Ok(pairs) = LineGrammar::parse(Rule::close_tags, line) else {
        return Vec::new();
    };
    pairs
        .flatten()
        .filter(|pair| pair.as_rule() == Rule::close_tag)
        .map(|pair| inner_str(pair, Rule::word))
        .collect()
}

/// The name of the first closing tag on `line`, if any.
#[cfg(test)]
pub(crate) fn first_close_tag(line: &str) -> Option<&str> {
    close_tags(line).into_iter().next()
}

/// Removes ASCII whitespace and NUL from both ends ("strip" in the notes). Unicode spaces are
/// content.
pub(crate) fn strip(text: &str) -> &str {
    // Every stripped character is one ASCII byte, so cutting bytes keeps char boundaries.
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !is_stripped(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| !is_stripped(b))
        .map_or(start, |last| last + 1);
    text.get(start..end).unwrap_or_default()
}

/// Whether "strip" removes this byte.
pub(crate) fn is_stripped(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_rule_order() {
        assert_eq!(classify("  ```rust"), Shape::Fence);
        assert_eq!(classify("[[x: y"), Shape::SquareOpen);
        assert_eq!(classify("shell:-- ls -la {{{"), Shape::CmdOpen);
        assert_eq!(classify("  $x.y:--  {{{ tail"), Shape::CmdOpen);
        assert_eq!(classify(" shell:--\tls {{{"), Shape::Text);
        assert_eq!(classify("shell :-- ls {{{"), Shape::Text);
        assert_eq!(classify("shell:-- ls -la }}}"), Shape::CmdClose);
        assert_eq!(classify("  see a:--b }}} c"), Shape::CmdClose);
        assert_eq!(
            classify("user: hi"),
            Shape::Header {
                role: "user",
                rest: " hi"
            }
        );
        assert_eq!(
            classify("http://x"),
            Shape::Header {
                role: "http",
                rest: "//x"
            }
        );
        assert_eq!(classify("User: hi"), Shape::Text);
        assert_eq!(classify(" user: hi"), Shape::Text);
        assert_eq!(classify("user : hi"), Shape::Text);
        assert_eq!(
            classify("\\\\user: x"),
            Shape::Escaped { body: "\\user: x" }
        );
        assert_eq!(
            classify(" <file name=\"a\">"),
            Shape::XmlOpen { tag: "file" }
        );
        assert_eq!(classify("<br/>"), Shape::Text);
        assert_eq!(classify("~~~"), Shape::Text);
        assert_eq!(
            shapes("a\n```\n\nuser: x"),
            vec![
                (Shape::Text, "a"),
                (Shape::Fence, "```"),
                (Shape::Text, ""),
                (
                    Shape::Header {
                        role: "user",
                        rest: " x"
                    },
                    "user: x"
                ),
            ]
        );
        assert_eq!(shapes(""), vec![(Shape::Text, "")]);
    }

    #[test]
    fn command_output_rewrites_follow_the_reference_substitutions() {
        assert_eq!(cmd_open_command("shell:-- ls -la {{{"), Some("ls -la"));
        assert_eq!(cmd_open_command("shell:-- a {{{ b {{{ c"), Some("a {{{ b"));
        assert_eq!(cmd_open_command("x:--  {{{"), Some(""));
        assert_eq!(cmd_open_command("\0x:-- ls {{{"), Some("ls"));
        assert_eq!(cmd_open_command(" shell:-- ls {{{"), None);
        assert_eq!(cmd_open_command("shell:-- {{{"), None);
        assert!(cmd_close_rewrites("  shell:-- ls }}} x"));
        assert!(!cmd_close_rewrites("shell:-- }}}"));
        assert!(!cmd_close_rewrites("shell:--ls }}}"));
    }

    #[test]
    fn suffixes_and_closing_tags() {
        assert!(ends_with_square_close("abc]] \r"));
        assert!(!ends_with_square_close("abc]] x"));
        assert_eq!(close_tags("a</b> </c d> </e>"), vec!["b", "e"]);
        assert_eq!(first_close_tag("x"), None);
        assert_eq!(strip("\0 \t x \r\n"), "x");
        assert_eq!(strip("\u{a0}x"), "\u{a0}x");
    }
}
