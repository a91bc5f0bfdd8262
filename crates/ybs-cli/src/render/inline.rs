//! Inline markdown within one line: `` `code` `` spans and `**bold**`.

use super::style::{Painter, Role};

/// `line` with its code spans and bold text painted and their markers removed. Without
/// colour the line is returned unchanged (the markers are the styling then).
pub fn style_inline(line: &str, painter: Painter) -> String {
    if !painter.color {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(start) = rest.find(['`', '*']) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        match span(tail) {
            Some((role, content, consumed)) => {
                out.push_str(&painter.paint(role, content));
                rest = &tail[consumed..];
            }
            None => {
                // Not a span opener: keep the whole run of marker characters as text.
                let marker = &tail[..1];
                let run = tail.len() - tail.trim_start_matches(marker).len();
                out.push_str(&tail[..run]);
                rest = &tail[run..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The span that starts `text` (which starts with a marker): its role, its content and how
/// many bytes it covers.
fn span(text: &str) -> Option<(Role, &str, usize)> {
    if text.starts_with('`') {
        let ticks = text.len() - text.trim_start_matches('`').len();
        let fence = &text[..ticks];
        let body = &text[ticks..];
        let mut search = 0;
        // The closing run must have exactly as many backticks as the opening one.
        while let Some(found) = body[search..].find(fence) {
            let at = search + found;
            let after = &body[at + ticks..];
            if !after.starts_with('`') {
                let content = &body[..at];
                let content = if ticks > 1 { content.trim() } else { content };
                return Some((Role::InlineCode, content, ticks + at + ticks));
            }
            search = at + ticks + (after.len() - after.trim_start_matches('`').len());
        }
        return None;
    }
    let body = text.strip_prefix("**")?;
    if body.starts_with(char::is_whitespace) || body.starts_with('*') {
        return None;
    }
    let end = body.find("**")?;
    let content = &body[..end];
    if content.is_empty() || content.ends_with(char::is_whitespace) {
        return None;
    }
    Some((Role::Bold, content, 2 + end + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible(line: &str) -> String {
        style_inline(line, Painter { color: true })
            .replace("\x1b[1m", "<b>")
            .replace("\x1b[36m", "<code>")
            .replace("\x1b[0m", "</>")
    }

    #[test]
    fn code_spans_and_bold_are_painted_without_markers() {
        assert_eq!(
            visible("use `cargo test` and **always** lint"),
            "use <code>cargo test</> and <b>always</> lint"
        );
        assert_eq!(visible("``a ` b`` c"), "<code>a ` b</> c");
        assert_eq!(visible("`**not bold**`"), "<code>**not bold**</>");
    }

    #[test]
    fn unmatched_or_spaced_markers_stay_text() {
        assert_eq!(visible("* a list item"), "* a list item");
        assert_eq!(visible("2 ** 3 and a ` tick"), "2 ** 3 and a ` tick");
        assert_eq!(visible("**open"), "**open");
        assert_eq!(visible("***"), "***");
        assert_eq!(visible("é `ü` ß"), "é <code>ü</> ß");
    }

    #[test]
    fn without_colour_nothing_changes() {
        let line = "use `x` and **y**";
        assert_eq!(style_inline(line, Painter { color: false }), line);
    }
}
