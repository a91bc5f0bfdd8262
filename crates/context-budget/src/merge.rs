//! Byte-pair merging of one piece that is not a whole token, counting the tokens it ends up as:
//! tiktoken's algorithm over the vocabulary's ranks. The adjacent pair whose bytes form the
//! token of lowest rank is merged first (the leftmost one on a tie), and again, until no
//! adjacent pair forms a token.
//!
//! Short pieces (the common case: a word or identifier missing from the vocabulary) rescan an
//! array on the stack after each merge, as tiktoken does; longer ones keep the candidate pairs
//! in a heap and their parts in a linked list, `O(n log n)` rather than `O(n²)`. Both merge the
//! same pairs in the same order. (The heap's random accesses make it memory-bound on pieces of
//! hundreds of kilobytes, so `pieces` hands those to a linear encoder instead.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab::Vocab;

/// The longest piece merged by rescanning; longer ones go through the heap.
const SHORT: usize = 64;

/// No pair: sorts after every rank.
const NONE: u32 = u32::MAX;

/// The number of tokens tiktoken encodes `piece` into.
pub(crate) fn count(vocab: &Vocab, piece: &[u8]) -> usize {
    if piece.len() < 2 {
        piece.len()
    } else if piece.len() <= SHORT {
        count_short(vocab, piece)
    } else {
        count_long(vocab, piece)
    }
}

fn rank_or_none(vocab: &Vocab, bytes: &[u8]) -> u32 {
    vocab.rank(bytes).unwrap_or(NONE)
}

/// Rescanning: `starts[..=parts]` are where the parts start (and the piece's end), `ranks[i]`
/// the rank of parts `i` and `i + 1` merged.
fn count_short(vocab: &Vocab, piece: &[u8]) -> usize {
    let len = piece.len();
    let mut starts = [0u8; SHORT + 1];
    let mut ranks = [NONE; SHORT];
    for (at, start) in starts.iter_mut().enumerate().take(len + 1) {
        *start = at as u8;
    }
    for at in 0..len - 1 {
        ranks[at] = rank_or_none(vocab, &piece[at..at + 2]);
    }
    let pair = |starts: &[u8], from: usize, to: usize| -> u32 {
        rank_or_none(
            vocab,
            &piece[usize::from(starts[from])..usize::from(starts[to])],
        )
    };
    let mut parts = len;
    loop {
        let mut best = (NONE, 0);
        for (at, &rank) in ranks.iter().enumerate().take(parts - 1) {
            if rank < best.0 {
                best = (rank, at);
            }
        }
        let (rank, at) = best;
        if rank == NONE {
            return parts;
        }
        // Merge parts `at` and `at + 1`: drop the start of the second.
        starts.copy_within(at + 2..=parts, at + 1);
        ranks.copy_within(at + 2..parts, at + 1);
        parts -= 1;
        ranks[at] = if at + 1 < parts {
            pair(&starts, at, at + 2)
        } else {
            NONE
        };
        if at > 0 {
            ranks[at - 1] = pair(&starts, at - 1, at + 1);
        }
    }
}

/// The heap: candidate pairs as (rank, start), stale ones skipped when popped; `next[i]` and
/// `prev[i]` link the start `i` of a live part to its neighbours' (`next` of the last part is
/// the piece's length).
fn count_long(vocab: &Vocab, piece: &[u8]) -> usize {
    let len = piece.len();
    let mut next: Vec<usize> = (1..=len).collect();
    let mut prev: Vec<usize> = (0..len).map(|at| at.saturating_sub(1)).collect();
    let mut live = vec![true; len];
    let mut heap: BinaryHeap<Reverse<(u32, usize)>> = (0..len - 1)
        .filter_map(|at| {
            vocab
                .rank(&piece[at..at + 2])
                .map(|rank| Reverse((rank, at)))
        })
        .collect();
    let mut parts = len;
    while let Some(Reverse((rank, start))) = heap.pop() {
        if !live[start] {
            continue;
        }
        let mid = next[start];
        if mid >= len {
            continue;
        }
        let end = next[mid];
        // Still the pair it was pushed for (the same bytes, so the same token)?
        if end - start != vocab.token_len(rank) {
            continue;
        }
        live[mid] = false;
        next[start] = end;
        if end < len {
            prev[end] = start;
            if let Some(rank) = vocab.rank(&piece[start..next[end]]) {
                heap.push(Reverse((rank, start)));
            }
        }
        if start > 0 {
            let before = prev[start];
            if let Some(rank) = vocab.rank(&piece[before..end]) {
                heap.push(Reverse((rank, before)));
            }
        }
        parts -= 1;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{CL100K, O200K};
    use proptest::prelude::*;
    use rustc_hash::FxHashMap as HashMap;
    use std::sync::LazyLock;

    /// tiktoken's own ranks, for its own merge (`tiktoken_rs::byte_pair_split`).
    fn ranks(vocab: &Vocab) -> HashMap<Vec<u8>, u32> {
        (0..vocab.len() as u32)
            .map(|rank| (vocab.token(rank).to_vec(), rank))
            .collect()
    }

    static RANKS: LazyLock<[HashMap<Vec<u8>, u32>; 2]> =
        LazyLock::new(|| [ranks(&CL100K), ranks(&O200K)]);

    fn assert_tiktokens(piece: &[u8]) {
        for (vocab, ranks) in [&CL100K, &O200K].into_iter().zip(RANKS.iter()) {
            let expected = match piece.len() {
                0 => 0,
                1 => 1,
                _ => tiktoken_rs::byte_pair_split(piece, ranks).len(),
            };
            assert_eq!(count(vocab, piece), expected, "{piece:?}");
            if piece.len() >= 2 {
                assert_eq!(count_long(vocab, piece), expected, "long on {piece:?}");
            }
            if (2..=SHORT).contains(&piece.len()) {
                assert_eq!(count_short(vocab, piece), expected, "short on {piece:?}");
            }
        }
    }

    #[test]
    fn pieces_merge_as_tiktoken_merges_them() {
        for piece in [
            &b""[..],
            b"a",
            b"ab",
            b"aaa",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"antidisestablishmentarianism",
            b"pneumonoultramicroscopicsilicovolcanoconiosis",
            "日本語のテキスト".as_bytes(),
            "🦀👍🏽".as_bytes(),
            &[0xff, 0xfe, 0x00, 0x80],
        ] {
            assert_tiktokens(piece);
        }
        let long = "Supercalifragilisticexpialidocious".repeat(10);
        assert_tiktokens(long.as_bytes());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn random_pieces_merge_as_tiktoken_merges_them(
            piece in prop_oneof![
                "[a-z]{2,80}".prop_map(String::into_bytes),
                "[A-Za-z]{2,80}".prop_map(String::into_bytes),
                "[a-c]{2,200}".prop_map(String::into_bytes),
                ".{1,30}".prop_map(String::into_bytes),
                prop::collection::vec(any::<u8>(), 2..100),
            ]
        ) {
            assert_tiktokens(&piece);
        }
    }
}
