//! The tiktoken BPE encodings, counted without materialising token ids (and on several
//! threads for long texts).

use std::fmt;
use std::str::FromStr;

use tiktoken_rs::CoreBPE;

use super::TokenCounter;
use crate::parallel::{self, PARALLEL_MIN_BYTES};
use crate::pieces::{self, PieceCounter};

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
/// The vocabularies are compiled into the binary (from the copies `tiktoken-rs` embeds; nothing
/// is downloaded) in a form that is read as it is: counting builds no table at start, so a
/// short-lived process pays only for the text it counts. [`Bpe::cl100k`] and [`Bpe::o200k`]
/// hand out `'static` references shared by every thread.
///
/// Text is encoded as ordinary text: special-token markers such as `<|endoftext|>` inside a
/// message are counted as the characters they are, which is how a provider treats user text.
///
/// Counting never materialises token ids: the text is cut into tiktoken's pieces (ASCII
/// decided from its bytes, the rest by the encoding's regex, compiled on first need), a piece
/// that is a whole token counts one, and only the others are merged pair by pair as tiktoken
/// merges them; texts of at least [`PARALLEL_MIN_BYTES`] are counted on several threads. The
/// counts are tiktoken's to the token. [`encode`](Bpe::encode) goes through tiktoken-rs, which
/// parses its vocabulary on first use.
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
}
