//! Counting a large text on several threads: the text is cut where the BPE pre-tokenizer
//! starts a new piece whatever surrounds the cut, so the pieces, and so the counts, are those
//! of the whole text.
//!
//! A safe cut is right after a `"\n"` that is followed by an ASCII letter. No pre-tokenizer
//! pattern of `cl100k_base` or `o200k_base` matches a newline followed by a letter (the letter
//! patterns take at most one leading character that is not a newline, the whitespace and
//! punctuation patterns take no letter), so the piece holding the newline ends there and the
//! next starts at the letter; none of the patterns looks behind its start. Counts are a sum
//! over pieces, so the count of the whole is the sum of the counts of the parts. The property
//! tests of `counter.rs` check this against the count of the unsplit text.
//!
//! Threads are scoped: they end before the count returns, nothing outlives the call and
//! nothing is shared but the read-only vocabulary, so counting stays pure.

/// Texts shorter than this are counted on the calling thread: below it, starting threads costs
/// more than it saves.
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// Cuts `text` into at most `parts` consecutive slices of at least `min_len` bytes each
/// (except when no safe cut exists), each cut right after a newline followed by an ASCII
/// letter. The slices concatenate to `text`.
pub(crate) fn safe_chunks(text: &str, parts: usize, min_len: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let target = (text.len() / parts.max(1)).max(min_len).max(1);
    let mut chunks = Vec::with_capacity(parts);
    let mut start = 0;
    while chunks.len() + 1 < parts && text.len() - start > target {
        let Some(cut) = safe_cut_from(bytes, start + target) else {
            break;
        };
        chunks.push(&text[start..cut]);
        start = cut;
    }
    chunks.push(&text[start..]);
    chunks
}

/// The first safe cut at or after `from`: the offset of an ASCII letter right after `"\n"`.
fn safe_cut_from(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(newline) = memchr::memchr(b'\n', bytes.get(at..)?) {
        let next = at + newline + 1;
        if bytes.get(next).is_some_and(u8::is_ascii_alphabetic) {
            return Some(next);
        }
        at = next;
    }
    None
}

/// Sums `count` over safe chunks of `text`, one scoped thread per chunk past the first (which
/// the calling thread counts).
pub(crate) fn count_in_chunks(
    text: &str,
    parts: usize,
    min_len: usize,
    count: &(dyn Fn(&str) -> usize + Sync),
) -> usize {
    let chunks = safe_chunks(text, parts, min_len);
    let Some((first, rest)) = chunks.split_first() else {
        return 0;
    };
    if rest.is_empty() {
        return count(first);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter()
            .map(|chunk| scope.spawn(move || count(chunk)))
            .collect();
        let mut total = count(first);
        for handle in handles {
            // A panic in a counting thread is a panic of the count itself.
            total += handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        total
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_and_cut_before_a_letter_after_a_newline() {
        let text = "alpha beta\n  indented\nGamma\n1 digit\ndelta\n";
        let chunks = safe_chunks(text, 8, 1);
        assert_eq!(chunks.concat(), text);
        assert!(chunks.len() > 1);
        for chunk in &chunks[1..] {
            assert!(chunk.as_bytes()[0].is_ascii_alphabetic(), "{chunk:?}");
        }
        assert_eq!(safe_chunks(text, 1, 1), vec![text]);
        assert_eq!(
            safe_chunks("no newline at all", 4, 1),
            vec!["no newline at all"]
        );
        assert_eq!(safe_chunks("", 4, 1), vec![""]);
        // Chunks are never shorter than asked, but the last.
        assert_eq!(safe_chunks(text, 8, 1000), vec![text]);
    }

    #[test]
    fn counting_in_chunks_adds_the_counts_of_the_chunks() {
        let text = "a\nb\nc\nd\n".repeat(100);
        let bytes = |chunk: &str| chunk.len();
        assert_eq!(count_in_chunks(&text, 4, 10, &bytes), text.len());
        assert_eq!(count_in_chunks("", 4, 10, &bytes), 0);
    }
}
