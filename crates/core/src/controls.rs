//! Which characters a terminal (or a reader of a log) could act on rather than show: the one
//! rule every place that makes untrusted text inert shares.

/// Whether a terminal could act on `c` rather than show it: C0 controls but the tab, DEL,
/// C1 controls (some terminals obey U+009B as CSI), the bidirectional embeddings,
/// overrides and isolates that make text read differently from what it is (Trojan Source),
/// and the line and paragraph separators.
pub fn is_terminal_control(c: char) -> bool {
    match c {
        '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_c1_and_bidi_are_controls() {
        for c in [
            '\u{1b}', '\n', '\u{7f}', '\u{85}', '\u{9b}', '\u{202e}', '\u{2067}',
        ] {
            assert!(is_terminal_control(c), "{c:?}");
        }
        for c in ['\t', 'a', 'é', '\u{200d}'] {
            assert!(!is_terminal_control(c), "{c:?}");
        }
    }
}
