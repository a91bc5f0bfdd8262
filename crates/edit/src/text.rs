//! Line and line-ending helpers shared by the matchers. Every offset here is a byte offset
//! produced by `str` APIs at `\n` or at the end of leading whitespace, so it is always a char
//! boundary.

/// One line of a file: `start..end` is its text without the terminator, `start..term_end`
/// includes the terminator (`\n` or `\r\n`; empty for a last line without a newline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub term_end: usize,
}

/// Splits `content` into lines. An empty file has no lines; `"a\n"` has one.
pub(crate) fn lines(content: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = content.as_bytes();
    while start < content.len() {
        match content[start..].find('\n') {
            Some(rel) => {
                let nl = start + rel;
                let end = if nl > start && bytes[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                out.push(Line {
                    start,
                    end,
                    term_end: nl + 1,
                });
                start = nl + 1;
            }
            None => {
                out.push(Line {
                    start,
                    end: content.len(),
                    term_end: content.len(),
                });
                start = content.len();
            }
        }
    }
    out
}

/// The 1-based line numbers of the sorted byte offsets `starts`, in one pass.
pub(crate) fn line_numbers(content: &str, starts: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(starts.len());
    let (mut line, mut scanned) = (1, 0);
    for &at in starts {
        line += content[scanned..at].matches('\n').count();
        scanned = at;
        out.push(line);
    }
    out
}

/// The line ending a file uses: `"\r\n"` when most of its newlines are CRLF, else `"\n"`.
pub(crate) fn eol(content: &str) -> &'static str {
    let crlf = content.matches("\r\n").count();
    let all = content.matches('\n').count();
    if crlf > 0 && crlf * 2 >= all {
        "\r\n"
    } else {
        "\n"
    }
}

/// `text` with every line ending (`\r\n` or `\n`) written as `eol`.
pub(crate) fn with_eol(text: &str, eol: &str) -> String {
    let lf = text.replace("\r\n", "\n");
    if eol == "\n" {
        lf
    } else {
        lf.replace('\n', eol)
    }
}

/// Splits the text the model sent (an `old_string` or anchor) into lines, ignoring CR before
/// LF. Returns the lines and whether the text ended with a newline (which then does not
/// count as an extra empty line).
pub(crate) fn split_text(text: &str) -> (Vec<&str>, bool) {
    let mut parts: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let trailing = parts.len() > 1 && parts.last().is_some_and(|l| l.is_empty());
    if trailing {
        parts.pop();
    }
    (parts, trailing)
}

/// The leading whitespace of `line`.
pub(crate) fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Re-indents every non-blank line of `text` (LF line endings) from `from` to `to`: the
/// indentation the model used for the matched region versus the indentation really in the
/// file. Lines indented less than `from` are shifted by the same amount where possible.
pub(crate) fn reindent(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_owned();
    }
    let remove = from.chars().count().saturating_sub(to.chars().count());
    let shifted: Vec<String> = text
        .split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                line.to_owned()
            } else if let Some(rest) = line.strip_prefix(from) {
                format!("{to}{rest}")
            } else if let Some(add) = to.strip_prefix(from) {
                format!("{add}{line}")
            } else {
                let mut rest = line;
                for _ in 0..remove {
                    let mut chars = rest.chars();
                    match chars.next() {
                        Some(c) if c.is_whitespace() => rest = chars.as_str(),
                        _ => break,
                    }
                }
                rest.to_owned()
            }
        })
        .collect();
    shifted.join("\n")
}

/// Gives `result` the trailing-newline state of `base`: a file that ended with a newline
/// still does (unless it is now empty), and one that did not still does not. An empty base
/// (a new or empty file) imposes nothing.
pub(crate) fn keep_trailing_newline(base: &str, mut result: String, eol: &str) -> String {
    if base.is_empty() || result.is_empty() {
        return result;
    }
    let had = base.ends_with('\n');
    let has = result.ends_with('\n');
    if had && !has {
        result.push_str(eol);
    } else if !had && has {
        result.pop();
        if result.ends_with('\r') {
            result.pop();
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_with_both_endings() {
        let s = "a\r\nbé\nc";
        let l = lines(s);
        assert_eq!(l.len(), 3);
        assert_eq!(&s[l[0].start..l[0].end], "a");
        assert_eq!(&s[l[0].start..l[0].term_end], "a\r\n");
        assert_eq!(&s[l[1].start..l[1].end], "bé");
        assert_eq!(&s[l[2].start..l[2].term_end], "c");
        assert!(lines("").is_empty());
        assert_eq!(lines("x\n").len(), 1);
    }

    #[test]
    fn detects_eol() {
        assert_eq!(eol("a\r\nb\r\n"), "\r\n");
        assert_eq!(eol("a\nb\n"), "\n");
        assert_eq!(eol("single"), "\n");
    }

    #[test]
    fn reindents_both_ways() {
        assert_eq!(
            reindent("if x:\n    y\nz", "", "    "),
            "    if x:\n        y\n    z"
        );
        assert_eq!(reindent("    a\n        b\n  c", "    ", ""), "a\n    b\nc");
        assert_eq!(reindent("\ta\n\t\tb", "\t", "    "), "    a\n    \tb");
    }

    #[test]
    fn trailing_newline_state() {
        assert_eq!(keep_trailing_newline("a\n", "b".into(), "\n"), "b\n");
        assert_eq!(keep_trailing_newline("a", "b\r\n".into(), "\r\n"), "b");
        assert_eq!(keep_trailing_newline("a\n", String::new(), "\n"), "");
        assert_eq!(keep_trailing_newline("", "b".into(), "\n"), "b");
    }
}
