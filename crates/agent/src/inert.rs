//! Text from the model, a tool, a file or a file name made inert before it reaches the
//! terminal: every control character is shown as something visible instead of being sent,
//! so no escape sequence in it can move the cursor, erase what is shown, set the window
//! title or the clipboard, or hide a line of a command the user is asked about.
//!
//! C0 controls and DEL are shown in caret notation (`ESC` as `^[`, `CR` as `^M`, DEL as
//! `^?`); C1 controls (which some terminals obey as escape sequences) and the Unicode
//! controls that reorder or hide text (bidirectional overrides and isolates, zero-width
//! joiners are left alone) as `<U+XXXX>`. A tab stays a tab; a newline stays a newline only
//! where the caller says lines are allowed.

use std::borrow::Cow;

/// `text` with every control character shown visibly; newlines are shown as `^J` too.
pub fn inert(text: &str) -> Cow<'_, str> {
    convert(text, false)
}

/// Like [`inert`], but newlines are kept (the caller prints the text as several lines).
pub fn inert_lines(text: &str) -> Cow<'_, str> {
    convert(text, true)
}

fn convert(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let dangerous = |c: char| is_dangerous(c) && !(keep_newlines && c == '\n');
    if !text.chars().any(dangerous) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !dangerous(c) {
            out.push(c);
        } else if (c as u32) < 0x20 {
            out.push('^');
            out.push(char::from(b'@' + c as u8));
        } else if c == '\u{7f}' {
            out.push_str("^?");
        } else {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        }
    }
    Cow::Owned(out)
}

/// Whether the terminal could act on `c` rather than show it (the workspace's one rule).
fn is_dangerous(c: char) -> bool {
    ybs_core::is_terminal_control(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_become_visible() {
        assert_eq!(inert("plain text"), "plain text");
        assert!(matches!(inert("plain"), Cow::Borrowed(_)));
        assert_eq!(inert("\x1b]52;c;aGk=\x07"), "^[]52;c;aGk=^G");
        assert_eq!(inert("ls\r\x1b[2K\x1b[1A"), "ls^M^[[2K^[[1A");
        assert_eq!(inert("a\nb\tc\x7f"), "a^Jb\tc^?");
        assert_eq!(inert_lines("a\nb\x1b"), "a\nb^[");
        assert_eq!(inert("\u{9b}31m"), "<U+009B>31m");
        assert_eq!(inert("x\u{202e}y"), "x<U+202E>y");
        assert_eq!(inert("naïve ✓"), "naïve ✓");
        // What comes out has nothing left to convert.
        let once = inert("\x1b\u{9b}\n");
        assert_eq!(inert(&once), once);
    }
}
