use proptest::prelude::*;
use ybs_context_budget::{Bpe, CharsPerToken};

use super::*;

fn block<'a>(path: &'a str, lines: &[&str]) -> Block<'a> {
    Block {
        path,
        lines: lines.iter().map(|line| format!("  {line}")).collect(),
    }
}

fn blocks() -> Vec<Block<'static>> {
    vec![
        block("src/main.rs", &["fn main()"]),
        block(
            "src/config.rs",
            &["pub struct Config", "impl Config", "pub fn load()"],
        ),
        block("README.md", &[]),
        block("docs/long/path/to/a/guide.md", &[]),
    ]
}

/// One token per character: budgets are easy to reason about.
const CHARS: CharsPerToken = CharsPerToken {
    chars_per_token: 1.0,
};

#[test]
fn everything_fits_in_a_large_budget() {
    let fitted = fit(&blocks(), 10_000, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main()\nsrc/config.rs:\n  pub struct Config\n  impl Config\n  \
         pub fn load()\nREADME.md\ndocs/long/path/to/a/guide.md\n"
    );
    assert_eq!(fitted.files_shown, 4);
    assert_eq!(fitted.tokens, fitted.text.chars().count());
}

#[test]
fn a_tight_budget_keeps_the_first_files_and_says_how_many_are_left_out() {
    // main.rs (25) + config.rs whole (64) + the last line (28) = 117.
    let fitted = fit(&blocks(), 120, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main()\nsrc/config.rs:\n  pub struct Config\n  impl Config\n  \
         pub fn load()\n… 2 more files not shown\n"
    );
    assert_eq!(fitted.files_shown, 2);
    assert!(fitted.tokens <= 120);
}

#[test]
fn a_block_that_does_not_fit_whole_keeps_its_first_definitions() {
    // main.rs (25) + config.rs with one definition (46) + the last line (25) = 96.
    let fitted = fit(&blocks(), 96, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main()\nsrc/config.rs:\n  pub struct Config\n  … 2 more\n\
         … 2 more files not shown\n"
    );
    assert_eq!(fitted.files_shown, 2);
}

#[test]
fn a_block_shrinks_to_its_path_then_the_map_stops() {
    let fitted = fit(&blocks(), 70, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main()\nsrc/config.rs\n… 2 more files not shown\n"
    );
    // Not even the first path and the last line: nothing.
    assert_eq!(fit(&blocks(), 20, &CHARS), Fitted::default());
    assert_eq!(fit(&blocks(), 0, &CHARS), Fitted::default());
    assert_eq!(fit(&[], 100, &CHARS), Fitted::default());
}

#[test]
fn a_lower_ranked_file_never_displaces_a_higher_one() {
    // The second file's path alone is too big; the small third file is not shown instead.
    let long = "x".repeat(60);
    let blocks = vec![block("a.rs", &[]), block(&long, &[]), block("b.rs", &[])];
    let fitted = fit(&blocks, 50, &CHARS);
    assert_eq!(fitted.text, "a.rs\n… 2 more files not shown\n");
}

fn arbitrary_blocks() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    prop::collection::vec(
        (
            "[a-z/]{1,30}\\.[a-z]{1,3}",
            prop::collection::vec("[ -~]{1,60}", 0..12),
        ),
        0..40,
    )
}

proptest! {
    #[test]
    fn never_over_budget_and_deterministic(raw in arbitrary_blocks(), budget in 0usize..3000) {
        let blocks: Vec<Block> = (raw.iter())
            .map(|(path, lines)| Block { path, lines: lines.clone() })
            .collect();
        let bpe = Bpe::cl100k();
        let counters: [&dyn TokenCounter; 3] = [&CharsPerToken::default(), &CHARS, bpe];
        for counter in counters {
            let fitted = fit(&blocks, budget, counter);
            prop_assert!(fitted.tokens <= budget);
            prop_assert_eq!(counter.count(&fitted.text), fitted.tokens);
            prop_assert_eq!(&fit(&blocks, budget, counter), &fitted);
            // Files appear in rank order, a prefix of the input.
            let mut at = 0;
            for block in &blocks[..fitted.files_shown] {
                let found = fitted.text[at..].find(block.path);
                prop_assert!(found.is_some());
                at += found.unwrap_or(0) + block.path.len();
            }
        }
    }
}
