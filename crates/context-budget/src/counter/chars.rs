//! The heuristic counter of the WYSIWYG workflow: characters divided by a ratio.

use super::TokenCounter;

/// The default of [`CharsPerToken`]: 3.5 characters per token.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 3.5;

/// The heuristic counter of the WYSIWYG workflow: `ceil(chars / chars_per_token)`, at least 1
/// for non-empty text and 0 for empty text.
///
/// Characters are Unicode scalar values (`str::chars`), not bytes, so accented or CJK text is
/// not counted three times over. A ratio that is not a finite positive number (a hand-edited
/// setting of 0, say) counts as [`DEFAULT_CHARS_PER_TOKEN`] rather than dividing by zero; use
/// [`CharsPerToken::new`] to reject such a ratio up front.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CharsPerToken {
    /// How many characters make one token (`charsPerToken`, CPT).
    pub chars_per_token: f64,
}

impl Default for CharsPerToken {
    fn default() -> Self {
        CharsPerToken {
            chars_per_token: DEFAULT_CHARS_PER_TOKEN,
        }
    }
}

/// A chars-per-token ratio that is not a finite number greater than zero.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error(
    "invalid charsPerToken {0}: it must be a finite number greater than 0 (the default is 3.5)"
)]
pub struct InvalidCharsPerToken(pub f64);

impl CharsPerToken {
    /// A counter with the given ratio, which must be finite and greater than zero.
    pub fn new(chars_per_token: f64) -> Result<Self, InvalidCharsPerToken> {
        if chars_per_token.is_finite() && chars_per_token > 0.0 {
            Ok(CharsPerToken { chars_per_token })
        } else {
            Err(InvalidCharsPerToken(chars_per_token))
        }
    }

    /// The ratio actually used: the configured one, or the default when it is unusable.
    pub fn effective_ratio(&self) -> f64 {
        if self.chars_per_token.is_finite() && self.chars_per_token > 0.0 {
            self.chars_per_token
        } else {
            DEFAULT_CHARS_PER_TOKEN
        }
    }
}

impl TokenCounter for CharsPerToken {
    fn count(&self, text: &str) -> usize {
        let chars = text.chars().count();
        if chars == 0 {
            return 0;
        }
        // The quotient is finite and positive, so the float-to-int cast only saturates for
        // texts no machine can hold.
        let tokens = (chars as f64 / self.effective_ratio()).ceil() as usize;
        tokens.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_per_token_rounds_up_and_is_at_least_one() {
        let cpt = CharsPerToken::default();
        assert_eq!(cpt.chars_per_token, 3.5);
        assert_eq!(cpt.count(""), 0);
        assert_eq!(cpt.count("a"), 1);
        assert_eq!(cpt.count("abc"), 1);
        assert_eq!(cpt.count("abcd"), 2);
        assert_eq!(cpt.count("abcdefg"), 2);
        assert_eq!(cpt.count("abcdefgh"), 3);
        assert_eq!(cpt.count(&"x".repeat(350)), 100);
        assert_eq!(cpt.count(&"x".repeat(351)), 101);
        assert_eq!(
            CharsPerToken {
                chars_per_token: 100.0
            }
            .count("a"),
            1
        );
    }

    #[test]
    fn chars_per_token_counts_characters_not_bytes() {
        let cpt = CharsPerToken {
            chars_per_token: 1.0,
        };
        assert_eq!(cpt.count("日本語"), 3);
        assert_eq!(cpt.count("é"), 1);
    }

    #[test]
    fn unusable_ratio_is_rejected_or_falls_back_to_default() {
        assert_eq!(
            CharsPerToken::new(0.0).unwrap_err().to_string(),
            "invalid charsPerToken 0: it must be a finite number greater than 0 (the default is 3.5)"
        );
        assert!(CharsPerToken::new(f64::NAN).is_err());
        assert!(CharsPerToken::new(-1.0).is_err());
        assert!(CharsPerToken::new(f64::INFINITY).is_err());
        assert_eq!(CharsPerToken::new(4.0).unwrap().chars_per_token, 4.0);
        let broken = CharsPerToken {
            chars_per_token: 0.0,
        };
        assert_eq!(broken.effective_ratio(), 3.5);
        assert_eq!(broken.count("abcdefgh"), 3);
    }
}
