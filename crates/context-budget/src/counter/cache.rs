//! A counter that remembers the counts of the texts it has seen, keyed by content hash and
//! bounded in size.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use sha2::{Digest, Sha256};

use super::TokenCounter;

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
    use crate::counter::{Bpe, CharsPerToken};
    use std::sync::Arc;
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
