//! Token counters: the chars-per-token heuristic of the WYSIWYG workflow, the `cl100k_base` and
//! `o200k_base` BPE encodings (tiktoken), and a bounded cache keyed by content hash.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use sha2::{Digest, Sha256};
use tiktoken_rs::CoreBPE;

use crate::parallel::{self, PARALLEL_MIN_BYTES};
use crate::pieces::{self, PieceCounter};

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

/// The default of [`CharsPerToken`]: 3.5 characters per token (workflow spec section 7.4).
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

/// A tiktoken BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `cl100k_base`: GPT-4, GPT-3.5, text-embedding-ada-002; what bb7 estimates with.
    Cl100k,
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the `o` series.
    O200k,
}

impl Encoding {
    /// The tiktoken name: `cl100k_base` or `o200k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100k => "cl100k_base",
            Encoding::O200k => "o200k_base",
        }
    }

    /// The encoding a model id most likely uses: `o200k_base` for GPT-4o, GPT-4.1, GPT-5,
    /// gpt-oss and the `o1`/`o3`/`o4` series (with or without an `openai/` style prefix),
    /// `cl100k_base` for everything else, which is the spec's default for estimates.
    pub fn for_model(model: &str) -> Encoding {
        let id = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let o200k = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "gpt-oss",
            "chatgpt-4o",
        ]
        .iter()
        .any(|prefix| id.starts_with(prefix))
            || ["o1", "o3", "o4"]
                .iter()
                .any(|series| id == *series || id.starts_with(&format!("{series}-")));
        if o200k {
            Encoding::O200k
        } else {
            Encoding::Cl100k
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An encoding name that is neither cl100k nor o200k.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown token encoding {0:?}: use cl100k_base (or cl100k) or o200k_base (or o200k)")]
pub struct UnknownEncoding(pub String);

impl FromStr for Encoding {
    type Err = UnknownEncoding;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cl100k" | "cl100k_base" => Ok(Encoding::Cl100k),
            "o200k" | "o200k_base" => Ok(Encoding::O200k),
            _ => Err(UnknownEncoding(name.to_owned())),
        }
    }
}

/// A BPE counter for one [`Encoding`].
///
/// The vocabularies are embedded in the binary by `tiktoken-rs` (nothing is downloaded). Each
/// is parsed once, on first use, and then shared by every thread: [`Bpe::cl100k`] and
/// [`Bpe::o200k`] hand out `'static` references, and building the tables happens on the first
/// [`count`](TokenCounter::count), not when the reference is taken.
///
/// Text is encoded as ordinary text: special-token markers such as `<|endoftext|>` inside a
/// message are counted as the characters they are, which is how a provider treats user text.
///
/// Counting never materialises token ids: the text is cut into tiktoken's pieces (ASCII
/// decided from its bytes, the rest by the encoding's regex through `bpe-openai`), a piece
/// that is a whole token counts one, and only the others go through `bpe-openai`'s BPE; texts
/// of at least [`PARALLEL_MIN_BYTES`] are counted on several threads. The counts are
/// tiktoken's to the token. [`encode`](Bpe::encode) goes through tiktoken-rs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bpe {
    encoding: Encoding,
}

static CL100K: Bpe = Bpe {
    encoding: Encoding::Cl100k,
};
static O200K: Bpe = Bpe {
    encoding: Encoding::O200k,
};

impl Bpe {
    /// The shared `cl100k_base` counter.
    pub fn cl100k() -> &'static Bpe {
        &CL100K
    }

    /// The shared `o200k_base` counter.
    pub fn o200k() -> &'static Bpe {
        &O200K
    }

    /// The shared counter of `encoding`.
    pub fn get(encoding: Encoding) -> &'static Bpe {
        match encoding {
            Encoding::Cl100k => Bpe::cl100k(),
            Encoding::O200k => Bpe::o200k(),
        }
    }

    /// Which encoding this counter uses.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The token ids of `text` (ordinary text, see the type's docs).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.core().encode_ordinary(text)
    }

    /// The number of tokens of `text`, counted on up to `threads` threads (the calling one
    /// included) when it is long enough to gain from it. The count does not depend on
    /// `threads`: the text is only cut where the encoding starts a new piece anyway.
    pub fn count_on_threads(&self, text: &str, threads: usize) -> usize {
        let counter = self.pieces();
        let count = |chunk: &str| counter.count(chunk);
        if threads < 2 || text.len() < PARALLEL_MIN_BYTES {
            return count(text);
        }
        parallel::count_in_chunks(text, threads, PARALLEL_MIN_BYTES / 2, &count)
    }

    /// The counting tokenizer: the same vocabulary and pre-tokenizer as tiktoken's, giving the
    /// same counts without materialising token ids.
    fn pieces(&self) -> &'static PieceCounter {
        match self.encoding {
            Encoding::Cl100k => &pieces::CL100K,
            Encoding::O200k => &pieces::O200K,
        }
    }

    fn core(&self) -> &'static CoreBPE {
        // tiktoken-rs keeps one lazily built instance per encoding; building from the embedded
        // vocabulary cannot fail short of a corrupt build.
        match self.encoding {
            Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200k => tiktoken_rs::o200k_base_singleton(),
        }
    }
}

impl TokenCounter for Bpe {
    /// Counts on every available core when the text is at least [`PARALLEL_MIN_BYTES`] long.
    fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let threads = if text.len() < PARALLEL_MIN_BYTES {
            1
        } else {
            std::thread::available_parallelism().map_or(1, usize::from)
        };
        self.count_on_threads(text, threads)
    }
}

/// The default bound of a [`CachedCounter`]: 4096 entries (about 170 KiB of keys and counts).
pub const DEFAULT_CACHE_CAPACITY: usize = 4096;

type ContentHash = [u8; 32];

/// Two generations of counts: lookups see both, inserts go to `current`, and when `current` is
/// full it becomes `previous` (dropping the old `previous`). Entries used since the last
/// rotation survive the next one, so this behaves like an LRU without a linked list.
#[derive(Debug, Default)]
struct Generations {
    current: HashMap<ContentHash, usize>,
    previous: HashMap<ContentHash, usize>,
}

/// A [`TokenCounter`] that remembers the counts of texts it has seen, keyed by the SHA-256 of
/// the text, so counting the same context file on every estimate costs one hash instead of one
/// BPE pass.
///
/// The cache holds at most [`capacity`](CachedCounter::capacity) entries; the least recently
/// used half is dropped when it is full (two-generation scheme). Only hashes and counts are
/// kept, never the text. Empty text is answered without touching the cache. Safe to share
/// between threads: the lock is not held while the inner counter runs, so two threads may
/// count the same new text at once, and both get the same answer.
#[derive(Debug)]
pub struct CachedCounter<C> {
    inner: C,
    generation_capacity: usize,
    state: Mutex<Generations>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<C: TokenCounter> CachedCounter<C> {
    /// A cache of [`DEFAULT_CACHE_CAPACITY`] entries in front of `inner`.
    pub fn new(inner: C) -> Self {
        CachedCounter::with_capacity(inner, DEFAULT_CACHE_CAPACITY)
    }

    /// A cache of at most `capacity` entries in front of `inner`. The capacity is rounded down
    /// to an even number and is at least 2.
    pub fn with_capacity(inner: C, capacity: usize) -> Self {
        CachedCounter {
            inner,
            generation_capacity: (capacity / 2).max(1),
            state: Mutex::new(Generations::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The counter behind the cache.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// The most entries the cache holds.
    pub fn capacity(&self) -> usize {
        self.generation_capacity * 2
    }

    /// How many entries the cache holds now.
    pub fn len(&self) -> usize {
        let state = self.lock();
        state.current.len() + state.previous.len()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many counts were answered from the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// How many counts ran the inner counter.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// Forgets every remembered count (for instance after the inner counter's settings
    /// changed).
    pub fn clear(&self) {
        let mut state = self.lock();
        state.current.clear();
        state.previous.clear();
    }

    fn lock(&self) -> MutexGuard<'_, Generations> {
        // The maps are always left consistent (single inserts), so a panic elsewhere while the
        // lock was held does not make them unusable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lookup(&self, key: &ContentHash) -> Option<usize> {
        let mut state = self.lock();
        if let Some(&count) = state.current.get(key) {
            return Some(count);
        }
        let count = state.previous.remove(key)?;
        self.insert_locked(&mut state, *key, count);
        Some(count)
    }

    fn insert_locked(&self, state: &mut Generations, key: ContentHash, count: usize) {
        if state.current.len() >= self.generation_capacity && !state.current.contains_key(&key) {
            state.previous = std::mem::take(&mut state.current);
            state.previous.remove(&key);
        }
        state.current.insert(key, count);
    }
}

impl<C: TokenCounter> TokenCounter for CachedCounter<C> {
    fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let key: ContentHash = Sha256::digest(text.as_bytes()).into();
        if let Some(count) = self.lookup(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return count;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let count = self.inner.count(text);
        let mut state = self.lock();
        self.insert_locked(&mut state, key, count);
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts bytes and how often it was asked.
    #[derive(Default)]
    struct Probe {
        calls: AtomicUsize,
    }

    impl TokenCounter for Probe {
        fn count(&self, text: &str) -> usize {
            self.calls.fetch_add(1, Ordering::SeqCst);
            text.len()
        }
    }

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

    #[test]
    fn known_counts_under_cl100k() {
        let bpe = Bpe::cl100k();
        assert_eq!(bpe.encoding(), Encoding::Cl100k);
        assert_eq!(bpe.count(""), 0);
        assert_eq!(bpe.count("hello world"), 2);
        assert_eq!(bpe.encode("hello world"), vec![15339, 1917]);
        assert_eq!(bpe.count("tiktoken is great!"), 6);
        assert_eq!(
            bpe.count("This is a sample sentence to test the token counter."),
            11
        );
        // Special-token markers are ordinary text.
        assert_eq!(bpe.count("<|endoftext|>"), 7);
    }

    #[test]
    fn known_counts_under_o200k() {
        let bpe = Bpe::o200k();
        assert_eq!(bpe.encoding(), Encoding::O200k);
        assert_eq!(bpe.count(""), 0);
        assert_eq!(bpe.count("hello world"), 2);
        assert_eq!(bpe.encode("hello world"), vec![24912, 2375]);
        assert_eq!(bpe.count("tiktoken is great!"), 6);
    }

    /// Pieces that stress the pre-tokenizers: whitespace runs before words and newlines,
    /// contractions, digits, punctuation, combining marks, CJK, emoji, lone CR.
    fn tricky_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\r".to_string()),
            Just(" ".to_string()),
            Just("   ".to_string()),
            Just("\t".to_string()),
            Just("\u{a0}".to_string()),
            Just("\u{3000}".to_string()),
            Just("'s".to_string()),
            Just("'LL".to_string()),
            Just("don't".to_string()),
            Just("12345".to_string()),
            Just("e\u{301}".to_string()),
            Just("日本語".to_string()),
            Just("🦀👍🏽".to_string()),
            Just("<|endoftext|>".to_string()),
            Just("fn main() {".to_string()),
            Just("//".to_string()),
            Just("HelloWorld".to_string()),
            "[a-zA-Z]{1,8}",
            "[ -~]{0,8}",
            ".{0,4}",
        ];
        prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    #[test]
    fn counts_are_tiktokens_on_edge_cases() {
        let cases = [
            "",
            " ",
            "  ",
            "\n",
            "\n\n\n",
            " \n ",
            "a  b",
            "a   \n\n  b",
            "x \t\n",
            "\r\n\r\n",
            "trailing   ",
            "  leading",
            "He's, they'LL, we'd've",
            "1234567",
            "naïve café e\u{301}",
            "日本語のテキスト",
            "🦀 rust 👍🏽\u{200d}",
            "\u{a0}\u{a0}x\u{3000}y",
            "<|endoftext|> <|fim_prefix|>",
            "fn main() {\n    println!(\"{x:?}\");\n}\n",
        ];
        for bpe in [Bpe::cl100k(), Bpe::o200k()] {
            for case in cases {
                assert_eq!(
                    bpe.count(case),
                    bpe.encode(case).len(),
                    "{} on {case:?}",
                    bpe.encoding()
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn counts_are_tiktokens(text in tricky_text()) {
            for bpe in [Bpe::cl100k(), Bpe::o200k()] {
                prop_assert_eq!(bpe.count(&text), bpe.encode(&text).len());
            }
        }

        #[test]
        fn counting_in_chunks_on_threads_is_counting_the_whole(
            text in tricky_text(),
            parts in 2usize..6,
        ) {
            for bpe in [Bpe::cl100k(), Bpe::o200k()] {
                let counter = bpe.pieces();
                let count = |chunk: &str| counter.count(chunk);
                prop_assert_eq!(
                    parallel::count_in_chunks(&text, parts, 1, &count),
                    bpe.encode(&text).len()
                );
            }
        }
    }

    #[test]
    fn a_large_text_counts_the_same_on_any_number_of_threads() {
        let line = "The quick brown fox: 日本語 12345 don't stop.\n    indented(code);\n";
        let text = line.repeat(PARALLEL_MIN_BYTES / line.len() + 10);
        let bpe = Bpe::cl100k();
        let one = bpe.count_on_threads(&text, 1);
        assert_eq!(one, bpe.encode(&text).len());
        for threads in [2, 3, 8] {
            assert_eq!(bpe.count_on_threads(&text, threads), one);
        }
        assert_eq!(bpe.count(&text), one);
    }

    #[test]
    fn bpe_singletons_are_shared() {
        assert!(std::ptr::eq(Bpe::cl100k(), Bpe::get(Encoding::Cl100k)));
        assert!(std::ptr::eq(Bpe::o200k(), Bpe::get(Encoding::O200k)));
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| Bpe::cl100k().count("hello world")))
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), 2);
        }
    }

    #[test]
    fn encoding_names_parse_and_print() {
        assert_eq!("cl100k".parse::<Encoding>().unwrap(), Encoding::Cl100k);
        assert_eq!("cl100k_base".parse::<Encoding>().unwrap(), Encoding::Cl100k);
        assert_eq!("O200K_BASE".parse::<Encoding>().unwrap(), Encoding::O200k);
        assert_eq!(
            "p50k".parse::<Encoding>().unwrap_err().to_string(),
            "unknown token encoding \"p50k\": use cl100k_base (or cl100k) or o200k_base (or o200k)"
        );
        assert_eq!(Encoding::O200k.to_string(), "o200k_base");
    }

    #[test]
    fn encoding_for_model() {
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200k);
        assert_eq!(Encoding::for_model("openai/gpt-5"), Encoding::O200k);
        assert_eq!(Encoding::for_model("o3-mini"), Encoding::O200k);
        assert_eq!(Encoding::for_model("o1"), Encoding::O200k);
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Encoding::Cl100k);
        assert_eq!(
            Encoding::for_model("anthropic/claude-sonnet-4"),
            Encoding::Cl100k
        );
        assert_eq!(Encoding::for_model("o1x"), Encoding::Cl100k);
    }

    #[test]
    fn cache_counts_the_same_text_once() {
        let cached = CachedCounter::new(Probe::default());
        assert_eq!(cached.count("some file"), 9);
        assert_eq!(cached.count("some file"), 9);
        assert_eq!(cached.count("other"), 5);
        assert_eq!(cached.count(""), 0);
        assert_eq!(cached.inner().calls.load(Ordering::SeqCst), 2);
        assert_eq!((cached.hits(), cached.misses()), (1, 2));
        assert_eq!(cached.len(), 2);
        cached.clear();
        assert!(cached.is_empty());
        assert_eq!(cached.count("some file"), 9);
        assert_eq!(cached.inner().calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn cache_is_bounded_and_keeps_recently_used_entries() {
        let cached = CachedCounter::with_capacity(Probe::default(), 4);
        assert_eq!(cached.capacity(), 4);
        for i in 0..100 {
            cached.count(&format!("text {i}"));
            cached.count("hot");
            assert!(cached.len() <= 4, "len {} at {i}", cached.len());
        }
        // "hot" was used after every insert, so it was counted exactly once.
        let calls = cached.inner().calls.load(Ordering::SeqCst);
        assert_eq!(calls, 101);
        // An old entry was evicted and costs a count again.
        cached.count("text 0");
        assert_eq!(cached.inner().calls.load(Ordering::SeqCst), 102);
    }

    #[test]
    fn tiny_capacity_still_caches() {
        let cached = CachedCounter::with_capacity(Probe::default(), 0);
        assert_eq!(cached.capacity(), 2);
        cached.count("a");
        cached.count("a");
        assert_eq!(cached.hits(), 1);
    }

    #[test]
    fn counters_work_through_references_boxes_and_arcs() {
        let boxed: Box<dyn TokenCounter> = Box::new(CharsPerToken::default());
        assert_eq!(boxed.count("abcd"), 2);
        let shared: Arc<dyn TokenCounter> = Arc::new(CachedCounter::new(Bpe::cl100k()));
        assert_eq!(shared.count("hello world"), 2);
        let by_ref: &dyn TokenCounter = &CharsPerToken::default();
        assert_eq!((&by_ref).count("a"), 1);
    }
}
