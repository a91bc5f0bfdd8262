//! The pest grammar of one line (`chat.pest`) and typed answers to the questions the parser and
//! the serializer ask about a line.

use pest::Parser;
use pest::iterators::Pair;
use pest_derive::Parser;

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
    /// `word:-- command {{{`.
    CmdOpen { cmd: &'a str },
    /// `word:-- command }}}`.
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

/// The shape of `line` among all ten rules of the notes (first match wins).
pub(crate) fn classify(line: &str) -> Shape<'_> {
    shape_of(Rule::line, line)
}

/// The shape of `line` among headers, escaped headers, XML openings and text only: what a line
/// is where the block-marker rules do not apply.
pub(crate) fn classify_plain(line: &str) -> Shape<'_> {
    shape_of(Rule::plain_line, line)
}

fn shape_of(rule: Rule, line: &str) -> Shape<'_> {
    let Ok(mut pairs) = LineGrammar::parse(rule, line) else {
        // Both entry rules end in `text = { ANY* }`, so they always match; stay total anyway.
        return Shape::Text;
    };
    let Some(kind) = pairs.next().and_then(|outer| outer.into_inner().next()) else {
        return Shape::Text;
    };
    match kind.as_rule() {
        Rule::fence => Shape::Fence,
        Rule::square_open => Shape::SquareOpen,
        Rule::cmd_open => Shape::CmdOpen {
            cmd: inner_str(kind, Rule::cmd_text),
        },
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

fn inner_str<'a>(pair: Pair<'a, Rule>, rule: Rule) -> &'a str {
    pair.into_inner()
        .find(|inner| inner.as_rule() == rule)
        .map_or("", |inner| inner.as_str())
}

/// Whether the stripped line ends with `]]` (rule 2).
pub(crate) fn ends_with_square_close(line: &str) -> bool {
    LineGrammar::parse(Rule::square_close, line).is_ok()
}

/// The names of the closing tags `</name>` on `line`, in order.
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
pub(crate) fn first_close_tag(line: &str) -> Option<&str> {
    close_tags(line).into_iter().next()
}

/// Removes ASCII whitespace and NUL from both ends ("strip" in the notes). Unicode spaces are
/// content.
pub(crate) fn strip(text: &str) -> &str {
    text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_rule_order() {
        assert_eq!(classify("  ```rust"), Shape::Fence);
        assert_eq!(classify("[[x: y"), Shape::SquareOpen);
        assert_eq!(
            classify("shell:-- ls -la {{{"),
            Shape::CmdOpen { cmd: "ls -la" }
        );
        assert_eq!(
            classify("shell:-- a {{{ b {{{"),
            Shape::CmdOpen { cmd: "a {{{ b" }
        );
        assert_eq!(classify("shell:-- ls -la }}}"), Shape::CmdClose);
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
