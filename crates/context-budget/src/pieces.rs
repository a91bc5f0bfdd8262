//! Counting one pre-tokenized piece at a time, the way tiktoken encodes: a piece that is itself
//! a token of the vocabulary costs one token and needs no byte-pair merging; only the other
//! pieces go through the BPE.
//!
//! tiktoken looks every piece up in its vocabulary first and emits the single token when it is
//! there, so this shortcut is its definition of the count, not an approximation of it. Most
//! pieces of source code and prose (words, operators, indentation) are whole tokens; the others
//! are merged by `merge`. Both read the vocabulary compiled into the binary (`vocab`), so
//! nothing is built at start (only a piece longer than [`MERGE_MAX`] builds `bpe-openai`'s
//! tables).

use bpe_openai::Tokenizer;

use crate::merge;
use crate::pretokenize::{Pattern, Splitter};
use crate::vocab::{self, Vocab};

/// The longest piece merged pair by pair; a longer one (only adversarial text has them: a
/// run of letters or whitespace this long) goes through `bpe-openai`'s backtracking encoder,
/// which is linear where the heap of pairs becomes memory-bound, at the price of building that
/// tokenizer's tables (some 50 ms) the first time.
const MERGE_MAX: usize = 64 * 1024;

/// One of tiktoken's encodings: its vocabulary and its pre-tokenizer.
pub(crate) struct PieceCounter {
    vocab: &'static Vocab,
    pattern: Pattern,
    /// The same encoding in `bpe-openai`, for pieces longer than [`MERGE_MAX`] (built on
    /// first use).
    long: fn() -> &'static Tokenizer,
}

/// `cl100k_base`.
pub(crate) static CL100K: PieceCounter = PieceCounter {
    vocab: &vocab::CL100K,
    pattern: Pattern::Cl100k,
    long: bpe_openai::cl100k_base,
};

/// `o200k_base`.
pub(crate) static O200K: PieceCounter = PieceCounter {
    vocab: &vocab::O200K,
    pattern: Pattern::O200k,
    long: bpe_openai::o200k_base,
};

impl PieceCounter {
    /// The number of tokens tiktoken encodes `text` into.
    pub(crate) fn count(&self, text: &str) -> usize {
        Splitter::new(text, self.pattern)
            .map(|piece| {
                let bytes = piece.as_bytes();
                // Every byte is a token (the vocabulary's test checks it).
                if bytes.len() == 1 || self.vocab.rank(bytes).is_some() {
                    1
                } else if bytes.len() <= MERGE_MAX {
                    merge::count(self.vocab, bytes)
                } else {
                    (self.long)().bpe.count(bytes)
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_tokens_and_merged_pieces_count_as_the_bpe_does() {
        for (counter, tokenizer) in [
            (&CL100K, bpe_openai::cl100k_base()),
            (&O200K, bpe_openai::o200k_base()),
        ] {
            for text in [
                "",
                "hello",
                " world",
                "fn main() {\n    println!(\"hi\");\n}\n",
                "antidisestablishmentarianism pneumonoultramicroscopic",
                "日本語のテキスト 🎉🎉 naïve café",
                "    \n\n\t  trailing   ",
            ] {
                assert_eq!(counter.count(text), tokenizer.count(text), "{text:?}");
            }
        }
    }

    /// Letters from a fixed pseudo-random sequence: one piece, `len` bytes long.
    fn long_word(len: usize) -> String {
        let mut seed = 7u64;
        (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from(b'a' + ((seed >> 33) % 26) as u8)
            })
            .collect()
    }

    #[test]
    fn pieces_on_either_side_of_the_merge_limit_count_as_tiktoken_encodes_them() {
        for (counter, bpe) in [
            (&CL100K, tiktoken_rs::cl100k_base_singleton()),
            (&O200K, tiktoken_rs::o200k_base_singleton()),
        ] {
            for len in [MERGE_MAX, MERGE_MAX + 1] {
                let text = long_word(len);
                assert_eq!(
                    counter.count(&text),
                    bpe.encode_ordinary(&text).len(),
                    "{len}"
                );
            }
        }
    }
}
