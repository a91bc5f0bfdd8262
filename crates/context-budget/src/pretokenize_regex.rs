//! The encodings' pre-tokenizer regular expressions, for the pieces the ASCII rules of
//! `pretokenize` leave open (a character outside ASCII takes part). Each is compiled on first
//! use, so text that is all ASCII never compiles one.
//!
//! They are tiktoken's patterns with its one look-ahead, `\s+(?!\S)`, rewritten the way
//! `bpe-openai` does it so a regex without look-around can run them: the alternatives are
//! split into three patterns tried in order, `…|\s+$`, then `\s+\s` whose match gives back its
//! last character, then `\s+`. The tests hold the pieces equal to `bpe-openai`'s.

use std::sync::LazyLock;

use regex_automata::meta::{BuildError, Regex};
use regex_automata::{Anchored, Input};

/// `cl100k_base`'s alternatives before the look-ahead.
const CL100K_FIRST: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+$",
);

/// `o200k_base`'s alternatives before the look-ahead.
const O200K_FIRST: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+$",
);

/// One encoding's pre-tokenizer.
pub(crate) struct PieceRegex {
    regex: Result<Regex, BuildError>,
}

/// `cl100k_base`'s, compiled on first use.
pub(crate) static CL100K: LazyLock<PieceRegex> = LazyLock::new(|| PieceRegex::new(CL100K_FIRST));

/// `o200k_base`'s, compiled on first use.
pub(crate) static O200K: LazyLock<PieceRegex> = LazyLock::new(|| PieceRegex::new(O200K_FIRST));

/// The index of the pattern whose match ends with one character of look-ahead.
const LOOKAHEAD: usize = 1;

impl PieceRegex {
    fn new(first: &str) -> Self {
        PieceRegex {
            regex: Regex::new_many(&[first, r"\s+\s", r"\s+"]),
        }
    }

    /// The byte length of the piece that starts `text`, or `None` if none matches (every
    /// character starts some alternative, so only an empty text or a pattern that failed to
    /// compile has none).
    pub(crate) fn first_piece(&self, text: &str) -> Option<usize> {
        let regex = self.regex.as_ref().ok()?;
        let found = regex.find(Input::new(text).anchored(Anchored::Yes))?;
        let end = found.end();
        if found.pattern().as_usize() != LOOKAHEAD {
            return Some(end);
        }
        let lookahead = text
            .get(..end)?
            .chars()
            .next_back()
            .map_or(0, char::len_utf8);
        Some(end - lookahead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_patterns_compile_and_split() {
        for regex in [&*CL100K, &*O200K] {
            assert!(regex.regex.is_ok());
            assert_eq!(regex.first_piece("héllo wörld"), Some("héllo".len()));
            assert_eq!(regex.first_piece("  \u{a0}x"), Some(2));
            assert_eq!(regex.first_piece("\u{3000}\u{3000}"), Some(6));
            assert_eq!(regex.first_piece(""), None);
        }
    }

    /// The pieces of `text`, each the regex's first piece of what is left.
    fn split<'a>(regex: &PieceRegex, text: &'a str) -> Vec<&'a str> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(len) = regex.first_piece(rest) {
            let (piece, after) = rest.split_at(len);
            pieces.push(piece);
            rest = after;
        }
        assert_eq!(rest, "", "no piece at {rest:?}");
        pieces
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

        #[test]
        fn pieces_are_bpe_openais(
            text in "([a-zA-Z0-9 '\\n\\t/.,]|\\PC|\\s|[éſǅ٣日🦀\\u{a0}\\u{3000}\\u{301}]){0,40}"
        ) {
            for (regex, tokenizer) in [
                (&*CL100K, bpe_openai::cl100k_base()),
                (&*O200K, bpe_openai::o200k_base()),
            ] {
                let theirs: Vec<&str> = tokenizer.split(&text).collect();
                proptest::prop_assert_eq!(split(regex, &text), theirs);
            }
        }
    }
}
