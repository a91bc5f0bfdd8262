//! Line-by-line markdown styling: headings, code fences and inline spans.

use super::inline::style_inline;
use super::style::{Painter, Role};

/// Styles the lines of one reply in order, remembering whether a code fence is open.
#[derive(Debug, Clone, Default)]
pub struct MarkdownLines {
    /// The open fence's marker (```` ``` ```` or `~~~`, possibly longer), if any.
    fence: Option<String>,
    /// The open block's highlighter, when colour is on and its language is known.
    code: Option<crate::render::highlight::Block>,
}

impl MarkdownLines {
    /// The next line, styled.
    pub fn style(&mut self, line: &str, painter: Painter) -> String {
        let trimmed = line.trim_start();
        if let Some(open) = &self.fence {
            if trimmed.starts_with(open.as_str()) && trimmed[open.len()..].trim().is_empty() {
                self.fence = None;
                self.code = None;
                return painter.paint(Role::Fence, line);
            }
            if let Some(block) = &mut self.code {
                return block.line(line);
            }
            return painter.paint(Role::Code, line);
        }
        if let Some(marker) = fence_marker(trimmed) {
            self.fence = Some(marker.to_owned());
            if painter.color {
                self.code = crate::render::highlight::Block::new(&trimmed[marker.len()..]);
            }
            return painter.paint(Role::Fence, line);
        }
        if let Some(level) = heading_level(trimmed) {
            let role = if level == 1 {
                Role::Heading1
            } else {
                Role::Heading
            };
            // Inline markers inside a heading are shown as typed: the whole line is bold.
            return painter.paint(role, line);
        }
        style_inline(line, painter)
    }

    /// Forgets an unclosed fence (the reply ended).
    pub fn reset(&mut self) {
        self.fence = None;
        self.code = None;
    }
}

/// The opening fence of a code block: three or more backticks or tildes.
fn fence_marker(line: &str) -> Option<&str> {
    let first = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = line.len() - line.trim_start_matches(first).len();
    if run < 3 {
        return None;
    }
    let info = &line[run..];
    // A backtick fence's info string may not contain backticks (that is inline code).
    if first == '`' && info.contains('`') {
        return None;
    }
    Some(&line[..run])
}

/// `# Title` is level 1, `###### Title` level 6; `#hashtag` is no heading.
fn heading_level(line: &str) -> Option<usize> {
    let level = line.len() - line.trim_start_matches('#').len();
    let rest = &line[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with(' '))).then_some(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(lines: &[&str]) -> Vec<String> {
        let mut markdown = MarkdownLines::default();
        lines
            .iter()
            .map(|line| {
                markdown
                    .style(line, Painter { color: true })
                    .replace("\x1b[0m", "")
                    .replace("\x1b[2m", "<fence>")
                    .replace("\x1b[32m", "<code>")
                    .replace("\x1b[1m\x1b[4m", "<h1>")
                    .replace("\x1b[1m", "<b>")
            })
            .collect()
    }

    #[test]
    fn a_block_in_a_known_language_is_highlighted_in_colour_only() {
        let coloured = styled(&["```rust", "fn main() {}", "```", "fn x"]);
        assert!(coloured[1].contains("\x1b[38;2;"), "{coloured:?}");
        assert_eq!(coloured[3], "fn x", "highlighting ends with the block");
        let mut markdown = MarkdownLines::default();
        let plain: Vec<String> = ["```rust", "fn main() {}"]
            .iter()
            .map(|line| markdown.style(line, Painter { color: false }))
            .collect();
        assert_eq!(plain, ["```rust", "fn main() {}"]);
    }

    #[test]
    fn fences_open_and_close_with_the_same_marker() {
        assert_eq!(
            styled(&["```nolang", "let a = `x`;", "~~~", "```", "after **b**"]),
            [
                "<fence>```nolang",
                "<code>let a = `x`;",
                "<code>~~~",
                "<fence>```",
                "after <b>b"
            ]
        );
        assert_eq!(
            styled(&["````nolang", "```", "````"]),
            ["<fence>````nolang", "<code>```", "<fence>````"]
        );
    }

    #[test]
    fn headings_need_a_space() {
        assert_eq!(
            styled(&["# Title", "### Sub **x**", "#tag", "####### seven"]),
            ["<h1># Title", "<b>### Sub **x**", "#tag", "####### seven"]
        );
    }

    #[test]
    fn inline_triple_backticks_are_not_fences() {
        assert_eq!(styled(&["```a``` b"]), ["\x1b[36ma b"]);
    }

    #[test]
    fn reset_closes_a_dangling_fence() {
        let mut markdown = MarkdownLines::default();
        let painter = Painter { color: false };
        markdown.style("```", painter);
        markdown.reset();
        assert_eq!(
            markdown.style("# h", Painter { color: true }),
            "\x1b[1m\x1b[4m# h\x1b[0m"
        );
    }
}
