//! Counting one pre-tokenized piece at a time, the way tiktoken encodes: a piece that is itself
//! a token of the vocabulary costs one token and needs no byte-pair merging; only the other
//! pieces go through the BPE.
//!
//! tiktoken looks every piece up in its vocabulary first and emits the single token when it is
//! there, so this shortcut is its definition of the count, not an approximation of it. Most
//! pieces of source code and prose (words, operators, indentation) are whole tokens; the others
//! are merged by `merge`. Both read the vocabulary compiled into the binary (`vocab`), so
//! nothing is built at start.

use crate::merge;
use crate::pretokenize::{Pattern, Splitter};
use crate::vocab::{self, Vocab};

/// One of tiktoken's encodings: its vocabulary and its pre-tokenizer.
pub(crate) struct PieceCounter {
    vocab: &'static Vocab,
    pattern: Pattern,
}

/// `cl100k_base`.
pub(crate) static CL100K: PieceCounter = PieceCounter {
    vocab: &vocab::CL100K,
    pattern: Pattern::Cl100k,
};

/// `o200k_base`.
pub(crate) static O200K: PieceCounter = PieceCounter {
    vocab: &vocab::O200K,
    pattern: Pattern::O200k,
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
                } else {
                    merge::count(self.vocab, bytes)
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
}
