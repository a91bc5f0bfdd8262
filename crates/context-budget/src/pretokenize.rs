//! Tiktoken's pre-tokenizer for `cl100k_base` and `o200k_base`, decided from the bytes where a
//! piece is plain ASCII and handed to the encodings' own regular expression (`pretokenize_regex`)
//! wherever a character outside ASCII could change the answer.
//!
//! The regular expressions are anchored at the start of each piece and look neither behind it
//! nor further ahead than the character after it, so where a piece ends depends only on the
//! text from its start on. That lets the two readers take turns piece by piece: [`Splitter`]
//! asks [`ascii_piece_end`] first and the regex only when it answers `None`. The rules below
//! are the alternatives of the patterns in their order, restricted to ASCII, where `\p{L}` is
//! `[A-Za-z]` (`Lu` the capitals, `Ll` the small letters), `\p{N}` is `[0-9]` and `\s` is
//! `[\t\n\x0B\x0C\r ]`; any other byte below 0x80 is a symbol (`[^\s\p{L}\p{N}]`). The property
//! tests hold the pieces equal to the regex's on arbitrary text.

use crate::pretokenize_regex::{self, PieceRegex};

/// Which encoding's pre-tokenizer to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// `cl100k_base`: contractions first, then `[^\r\n\p{L}\p{N}]?\p{L}+`, numbers, symbols
    /// with trailing newlines, whitespace.
    Cl100k,
    /// `o200k_base`: words split at case changes (`Lu* Ll+` or `Lu+ Ll*`, each with an optional
    /// contraction), numbers, symbols with trailing newlines and slashes, whitespace.
    O200k,
}

impl Pattern {
    /// The encoding's regex, which answers where the ASCII rules cannot (compiled on first use).
    fn regex(self) -> &'static PieceRegex {
        match self {
            Pattern::Cl100k => &pretokenize_regex::CL100K,
            Pattern::O200k => &pretokenize_regex::O200K,
        }
    }
}

/// The pieces of a text in order, as the encoding's regex splits it.
pub(crate) struct Splitter<'a> {
    text: &'a str,
    at: usize,
    pattern: Pattern,
}

impl<'a> Splitter<'a> {
    /// The pieces of `text` under `pattern`.
    pub(crate) fn new(text: &'a str, pattern: Pattern) -> Self {
        Splitter {
            text,
            at: 0,
            pattern,
        }
    }
}

impl<'a> Iterator for Splitter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.text.get(self.at..).filter(|rest| !rest.is_empty())?;
        let len = match ascii_piece_end(rest.as_bytes(), self.pattern) {
            Some(len) => len,
            // Every character starts some alternative, so the regex always has a piece; if it
            // ever had none, the rest would be one piece rather than an endless loop.
            None => self.pattern.regex().first_piece(rest).unwrap_or(rest.len()),
        };
        let len = len.max(1);
        let piece = rest.get(..len).unwrap_or(rest);
        self.at += piece.len();
        Some(piece)
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

fn is_newline(b: u8) -> bool {
    b == b'\r' || b == b'\n'
}

/// `[^\s\p{L}\p{N}]` among ASCII bytes.
fn is_symbol(b: u8) -> bool {
    b.is_ascii() && !b.is_ascii_alphanumeric() && !is_space(b)
}

/// The length of the run of bytes matching `class` from `from`, and the byte that ends it.
fn run(bytes: &[u8], from: usize, class: impl Fn(u8) -> bool) -> (usize, Option<u8>) {
    let rest = bytes.get(from..).unwrap_or_default();
    let len = rest.iter().position(|&b| !class(b)).unwrap_or(rest.len());
    (len, rest.get(len).copied())
}

/// Whether a run stopped by `end` (the byte after it, if any) is complete: a byte outside
/// ASCII might continue it (a letter, a digit, a space or a symbol of another script).
fn ends_in_ascii(end: Option<u8>) -> bool {
    end.is_none_or(|b| b.is_ascii())
}

/// The length of the piece at the start of `bytes` (not empty), or `None` when a character
/// outside ASCII takes part in the decision.
pub(crate) fn ascii_piece_end(bytes: &[u8], pattern: Pattern) -> Option<usize> {
    let first = *bytes.first()?;
    if !first.is_ascii() {
        return None;
    }
    let second = bytes.get(1).copied();
    if pattern == Pattern::Cl100k && first == b'\'' {
        if let Some(len) = contraction(bytes, 0)? {
            return Some(len);
        }
    }
    // Words: a letter, or one character that is neither a newline, a letter nor a digit
    // followed by a letter.
    let word_start = if first.is_ascii_alphabetic() {
        Some(0)
    } else if !is_newline(first) && !first.is_ascii_digit() {
        match second {
            Some(b) if !b.is_ascii() => return None,
            Some(b) if b.is_ascii_alphabetic() => Some(1),
            _ => None,
        }
    } else {
        None
    };
    if let Some(start) = word_start {
        return match pattern {
            Pattern::Cl100k => {
                let (len, end) = run(bytes, start, |b| b.is_ascii_alphabetic());
                ends_in_ascii(end).then_some(start + len)
            }
            Pattern::O200k => cased_word(bytes, start),
        };
    }
    if first.is_ascii_digit() {
        // `\p{N}{1,3}`: never look past the fourth byte, or a long run of digits would be
        // scanned again for each of its pieces (quadratic time on untrusted text).
        let head = bytes.get(..bytes.len().min(4)).unwrap_or(bytes);
        let (len, end) = run(head, 0, |b| b.is_ascii_digit());
        return if len >= 3 {
            Some(3)
        } else {
            ends_in_ascii(end).then_some(len)
        };
    }
    // Symbols: an optional space, then symbols, then newlines (and slashes for o200k).
    let symbols_start = match (first, second) {
        (b' ', Some(b)) if !b.is_ascii() => return None,
        (b' ', Some(b)) if is_symbol(b) => Some(1),
        (b, _) if is_symbol(b) => Some(0),
        _ => None,
    };
    if let Some(start) = symbols_start {
        let (len, end) = run(bytes, start, is_symbol);
        if !ends_in_ascii(end) {
            return None;
        }
        let trailing = match pattern {
            Pattern::Cl100k => run(bytes, start + len, is_newline).0,
            Pattern::O200k => run(bytes, start + len, |b| is_newline(b) || b == b'/').0,
        };
        return Some(start + len + trailing);
    }
    whitespace(bytes)
}

/// o200k's words from `start`: capitals then small letters (at least one), or capitals (at
/// least one) then small letters; either with an optional contraction.
fn cased_word(bytes: &[u8], start: usize) -> Option<usize> {
    let (capitals, _) = run(bytes, start, |b| b.is_ascii_uppercase());
    let (smalls, end) = run(bytes, start + capitals, |b| b.is_ascii_lowercase());
    if !ends_in_ascii(end) {
        return None;
    }
    let word_end = start + capitals + smalls;
    Some(word_end + contraction(bytes, word_end)?.unwrap_or(0))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at`: `Some(Some(len))` when it matches, `Some(None)` when
/// it does not, `None` when a character outside ASCII follows the apostrophe (case folding
/// lets `ſ` match `s`).
fn contraction(bytes: &[u8], at: usize) -> Option<Option<usize>> {
    if bytes.get(at) != Some(&b'\'') {
        return Some(None);
    }
    let letter = |offset: usize| bytes.get(at + offset).map(u8::to_ascii_lowercase);
    match bytes.get(at + 1) {
        Some(b) if !b.is_ascii() => return None,
        None => return Some(None),
        Some(_) => {}
    }
    let len = match (letter(1), letter(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => Some(2),
        (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => Some(3),
        _ => None,
    };
    Some(len)
}

/// The whitespace alternatives, in order: `\s*[\r\n]+` (up to the last newline of the run),
/// `\s+$` (a run that ends the text), `\s+(?!\S)` (the run but its last character, which
/// goes with what follows), `\s+`.
fn whitespace(bytes: &[u8]) -> Option<usize> {
    let (len, end) = run(bytes, 0, is_space);
    if len == 0 || !ends_in_ascii(end) {
        return None;
    }
    let spaces = bytes.get(..len)?;
    if let Some(last_newline) = spaces.iter().rposition(|&b| is_newline(b)) {
        return Some(last_newline + 1);
    }
    if end.is_none() || len == 1 {
        return Some(len);
    }
    Some(len - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bpe_openai::Tokenizer;
    use proptest::prelude::*;

    /// `bpe-openai`'s tokenizer, whose regex pieces are the reference.
    fn tokenizer(pattern: Pattern) -> &'static Tokenizer {
        match pattern {
            Pattern::Cl100k => bpe_openai::cl100k_base(),
            Pattern::O200k => bpe_openai::o200k_base(),
        }
    }

    fn assert_same_pieces(text: &str) {
        for pattern in [Pattern::Cl100k, Pattern::O200k] {
            let tokenizer = tokenizer(pattern);
            let ours: Vec<&str> = Splitter::new(text, pattern).collect();
            let regex: Vec<&str> = tokenizer.split(text).collect();
            assert_eq!(ours, regex, "{pattern:?} on {text:?}");
        }
    }

    #[test]
    fn ascii_pieces_are_the_regex_pieces() {
        for text in [
            "",
            "hello world",
            "fn main() {\n    println!(\"hi\");\n}\n",
            "HelloWorld HELLO'S don't we'll I'M they'Re 'sup 'x '",
            "  \n\n    foo\t\tbar   \n",
            "x = 12345678; y=1_000; 3.14",
            "a // comment\n//\n/* */ ;\n//x",
            " !!!\n\r\n  ",
            "trailing spaces   ",
            "\u{0}\u{1f}\u{7f} control",
            "'",
            "word'",
            "ABCdef GHI jKL mN",
        ] {
            assert_same_pieces(text);
        }
    }

    #[test]
    fn characters_outside_ascii_go_to_the_regex() {
        for text in [
            "café naïve",
            "'ſ 'ſt x'ſ",
            "a\u{a0}b \u{a0} \u{85}x",
            "e\u{301} Ǆemo ǅx",
            "日本語 テキスト",
            "١٢٣ 12٣",
            " →→ x→",
            "🦀👍🏽 done",
            "  \u{3000}\n",
        ] {
            assert_same_pieces(text);
        }
    }

    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z]{1,6}",
            "[ -~]{1,6}",
            "[\\t\\n\\r \\x0B\\x0C]{1,4}",
            "'[sStTrReEvVmMlLdD]{0,2}",
            "[0-9]{1,5}",
            "[/;\\n]{1,3}",
            ".{1,3}",
            Just("ſ".to_owned()),
            Just("\u{a0}".to_owned()),
            Just("é".to_owned()),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn pieces_are_the_regex_pieces(text in text()) {
            for pattern in [Pattern::Cl100k, Pattern::O200k] {
                let tokenizer = tokenizer(pattern);
                let ours: Vec<&str> = Splitter::new(&text, pattern).collect();
                let regex: Vec<&str> = tokenizer.split(&text).collect();
                prop_assert_eq!(ours, regex);
            }
        }
    }
}
