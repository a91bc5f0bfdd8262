//! Counts on adversarial shapes (long runs of digits, of letters, of whitespace, of one
//! repeated character, ASCII or not, with a tail that changes how the run ends) equal
//! tiktoken's, as `tiktoken-rs` encodes them, under both encodings. The same shapes at 100 KB
//! and 1 MB are timed by `benches/adversarial.rs`; no timing is asserted here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use ybs_context_budget::{Bpe, TokenCounter};

/// One run: a unit repeated `times` times.
fn run() -> impl Strategy<Value = String> {
    let unit = prop_oneof![
        "[0-9]{1,4}",
        "[a-z]{1,3}",
        "[A-Z]{1,3}",
        "[A-Za-z]{1,4}",
        "[ \\t\\n\\r]{1,3}",
        "[!-/:-@]{1,2}",
        Just("a".to_owned()),
        Just("1".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("é".to_owned()),
        Just("٣".to_owned()),
        Just("\u{3000}".to_owned()),
        Just("日".to_owned()),
        Just("🦀".to_owned()),
        Just("'s".to_owned()),
    ];
    (unit, 1usize..800).prop_map(|(unit, times)| unit.repeat(times))
}

/// What may follow a run and decide where its last piece ends.
fn tail() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("x".to_owned()),
        Just(" x".to_owned()),
        Just("\n".to_owned()),
        Just("é".to_owned()),
        Just("٣".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("'ll".to_owned()),
        Just("42".to_owned()),
    ]
}

fn shape() -> impl Strategy<Value = String> {
    (tail(), run(), tail(), prop::option::of(run())).prop_map(|(head, run, tail, second)| {
        format!("{head}{run}{tail}{}", second.unwrap_or_default())
    })
}

fn assert_tiktokens(text: &str) {
    for bpe in [Bpe::cl100k(), Bpe::o200k()] {
        assert_eq!(
            bpe.count(text),
            bpe.encode(text).len(),
            "{} on a {}-byte text starting {:?}",
            bpe.encoding(),
            text.len(),
            text.chars().take(20).collect::<String>()
        );
    }
}

#[test]
fn long_runs_count_as_tiktoken_encodes_them() {
    for unit in [
        "7",
        "1234567890",
        "a",
        "Ab",
        "Z",
        " ",
        "\t",
        "\n",
        " \n",
        "!",
        "é",
        "٣",
    ] {
        for tail in ["", "x", " x", "é", "9"] {
            assert_tiktokens(&format!("{}{tail}", unit.repeat(6_000 / unit.len())));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn adversarial_shapes_count_as_tiktoken_encodes_them(text in shape()) {
        for bpe in [Bpe::cl100k(), Bpe::o200k()] {
            prop_assert_eq!(bpe.count(&text), bpe.encode(&text).len(), "{}", bpe.encoding());
        }
    }
}
