//! Counting one pre-tokenized piece at a time, the way tiktoken encodes: a piece that is itself
//! a token of the vocabulary costs one token and needs no byte-pair merging; only the other
//! pieces go through the BPE.
//!
//! tiktoken looks every piece up in its vocabulary first and emits the single token when it is
//! there, so this shortcut is its definition of the count, not an approximation of it. Most
//! pieces of source code and prose (words, operators, indentation) are whole tokens, and a hash
//! lookup costs far less than setting up the BPE's backtracking encoder for a piece of a few
//! bytes.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use rustc_hash::FxHasher;

use crate::pretokenize::{Pattern, Splitter};

/// The byte strings of every token of a vocabulary.
type WholeTokens = HashSet<&'static [u8], BuildHasherDefault<FxHasher>>;

/// A tokenizer of one of tiktoken's encodings and the byte strings of its tokens.
pub(crate) struct PieceCounter {
    tokenizer: &'static Tokenizer,
    pattern: Pattern,
    whole: WholeTokens,
}

/// `cl100k_base`, built on first use.
pub(crate) static CL100K: LazyLock<PieceCounter> =
    LazyLock::new(|| PieceCounter::new(bpe_openai::cl100k_base(), Pattern::Cl100k));

/// `o200k_base`, built on first use.
pub(crate) static O200K: LazyLock<PieceCounter> =
    LazyLock::new(|| PieceCounter::new(bpe_openai::o200k_base(), Pattern::O200k));

impl PieceCounter {
    /// `tokenizer` must not normalize its input (tiktoken's encodings do not): pieces are
    /// split from the text as it is, by `pattern`'s pre-tokenizer.
    fn new(tokenizer: &'static Tokenizer, pattern: Pattern) -> Self {
        let bpe = &tokenizer.bpe;
        let tokens = u32::try_from(bpe.num_tokens()).unwrap_or(u32::MAX);
        let mut whole =
            WholeTokens::with_capacity_and_hasher(bpe.num_tokens(), BuildHasherDefault::default());
        whole.extend((0..tokens).map(|id| bpe.token_bytes(id)));
        PieceCounter {
            tokenizer,
            pattern,
            whole,
        }
    }

    /// The number of tokens tiktoken encodes `text` into.
    pub(crate) fn count(&self, text: &str) -> usize {
        Splitter::new(text, self.pattern, self.tokenizer)
            .map(|piece| {
                let bytes = piece.as_bytes();
                if self.whole.contains(bytes) {
                    1
                } else {
                    self.tokenizer.bpe.count(bytes)
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
            (&*CL100K, bpe_openai::cl100k_base()),
            (&*O200K, bpe_openai::o200k_base()),
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
}
