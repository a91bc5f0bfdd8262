//! Token counts for file statuses, with the `cl100k_base` vocabulary the spec names
//! (`ybs_context_budget::Bpe`), cached by content hash: statuses are asked for after every
//! change and most files have not changed since the last time.

use std::sync::OnceLock;

use ybs_context_budget::{Bpe, CachedCounter, TokenCounter};

/// The number of `cl100k_base` tokens in `text`.
pub fn count(text: &str) -> usize {
    counter().count(text)
}

/// The shared cached `cl100k_base` counter.
pub fn counter() -> &'static CachedCounter<&'static Bpe> {
    static COUNTER: OnceLock<CachedCounter<&'static Bpe>> = OnceLock::new();
    COUNTER.get_or_init(|| CachedCounter::new(Bpe::cl100k()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cl100k_tokens() {
        assert_eq!(count(""), 0);
        // "hello world" is two cl100k tokens.
        assert_eq!(count("hello world"), 2);
        assert_eq!(count("hello world"), 2);
    }
}
