//! Syntax highlighting of fenced code blocks as they stream, with `syntect`'s bundled
//! grammars and themes. Only used when the renderer paints colour, so `NO_COLOR`,
//! `ui.color: false` and output that is not a terminal get the text as written. The theme is
//! `ui.theme` (a name of syntect's bundled themes), set once at start.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::as_24_bit_terminal_escaped;

use ybs_agent::config::DEFAULT_THEME;

static THEME_NAME: OnceLock<String> = OnceLock::new();
static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static THEME: OnceLock<Theme> = OnceLock::new();

/// Chooses the theme (the first call wins; later ones are ignored). Returns a warning when
/// `name` is not a bundled theme.
pub fn set_theme(name: &str) -> Option<String> {
    if name == DEFAULT_THEME {
        // Loading the bundled themes costs time at every start; the default needs no check.
        let _ = THEME_NAME.set(name.to_owned());
        return None;
    }
    let themes = ThemeSet::load_defaults();
    let known = themes.themes.contains_key(name);
    let _ = THEME_NAME.set(if known { name } else { DEFAULT_THEME }.to_owned());
    (!known).then(|| {
        let names: Vec<&str> = themes.themes.keys().map(String::as_str).collect();
        format!(
            "ui.theme `{name}` is not a bundled theme; using {DEFAULT_THEME} (known: {})",
            names.join(", ")
        )
    })
}

fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> &'static Theme {
    THEME.get_or_init(|| {
        let name = THEME_NAME.get().map_or(DEFAULT_THEME, String::as_str);
        let mut themes = ThemeSet::load_defaults();
        (themes.themes.remove(name))
            .or_else(|| themes.themes.remove(DEFAULT_THEME))
            .unwrap_or_default()
    })
}

/// The highlighting state of one open code block.
pub struct Block {
    language: String,
    lines: HighlightLines<'static>,
}

impl Block {
    /// A block in `language` (a fence's info string: `rust`, `py`, `sh`...); `None` when no
    /// bundled grammar knows it.
    pub fn new(language: &str) -> Option<Block> {
        let language = language
            .split_whitespace()
            .next()?
            .trim_matches(['{', '}', '.']);
        let set = syntaxes();
        let syntax = (set.find_syntax_by_token(language))
            .or_else(|| set.find_syntax_by_extension(language))?;
        Some(Block {
            language: language.to_owned(),
            lines: HighlightLines::new(syntax, theme()),
        })
    }

    /// `line` with 24-bit colour escapes, reset at its end; as written when it cannot be
    /// highlighted.
    pub fn line(&mut self, line: &str) -> String {
        let with_newline = format!("{line}\n");
        match self.lines.highlight_line(&with_newline, syntaxes()) {
            Ok(ranges) => {
                let painted = as_24_bit_terminal_escaped(&ranges, false);
                format!("{}\x1b[0m", painted.trim_end_matches('\n'))
            }
            Err(_) => line.to_owned(),
        }
    }
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Block({})", self.language)
    }
}

impl Clone for Block {
    /// A fresh block of the same language (the parse state starts over).
    fn clone(&self) -> Self {
        Block::new(&self.language).unwrap_or_else(|| Block {
            language: self.language.clone(),
            lines: HighlightLines::new(syntaxes().find_syntax_plain_text(), theme()),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn known_languages_are_coloured_and_unknown_ones_are_not_highlighted() {
        let mut block = Block::new("rust").unwrap();
        let line = block.line("fn main() {}");
        assert!(line.contains("\x1b[38;2;"), "{line:?}");
        assert!(line.ends_with("\x1b[0m"));
        let plain: String = strip(&line);
        assert_eq!(plain, "fn main() {}");
        assert!(Block::new("no-such-language").is_none());
        assert!(Block::new("").is_none());
    }

    #[test]
    fn an_unknown_theme_is_a_warning() {
        let warning = set_theme("no-such-theme").unwrap();
        assert!(warning.contains("using base16-ocean.dark"), "{warning}");
    }

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut escape = false;
        for c in text.chars() {
            match (escape, c) {
                (false, '\x1b') => escape = true,
                (true, 'm') => escape = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }
}
