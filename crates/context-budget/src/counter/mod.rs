//! Token counters: the [`TokenCounter`] trait and its implementations, the chars-per-token
//! heuristic of the WYSIWYG workflow (`chars`), the `cl100k_base` and `o200k_base` BPE
//! encodings of tiktoken (`bpe`), and a bounded cache keyed by content hash (`cache`).

mod bpe;
mod cache;
mod chars;

use std::sync::Arc;

pub use bpe::{Bpe, Encoding, UnknownEncoding};
pub use cache::{CachedCounter, DEFAULT_CACHE_CAPACITY};
pub use chars::{CharsPerToken, DEFAULT_CHARS_PER_TOKEN, InvalidCharsPerToken};

/// Something that says how many tokens a text costs.
///
/// Implementations are shared between threads (the bb7 daemon estimates from several requests
/// at once), so counting takes `&self`.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens of `text`. Empty text costs 0.
    fn count(&self, text: &str) -> usize;
}

impl<T: TokenCounter + ?Sized> TokenCounter for &T {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for Box<T> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for Arc<T> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}
