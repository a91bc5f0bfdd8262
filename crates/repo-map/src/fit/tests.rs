use ybs_context_budget::CharsPerToken;

use super::*;
use crate::{Definition, Symbols};

/// Counts characters: one token per character, so budgets are easy to reason about.
const CHARS: CharsPerToken = CharsPerToken {
    chars_per_token: 1.0,
};

fn file(path: &str, definitions: &[(&str, usize)]) -> MappedFile {
    MappedFile {
        path: path.to_owned(),
        symbols: Symbols {
            definitions: (definitions.iter())
                .map(|&(signature, depth)| Definition {
                    name: signature.rsplit(' ').next().unwrap_or("").to_owned(),
                    signature: signature.to_owned(),
                    depth,
                })
                .collect(),
            references: Vec::new(),
        },
    }
}

fn files() -> Vec<MappedFile> {
    vec![
        file("src/main.rs", &[("fn main", 0)]),
        file(
            "src/config.rs",
            &[
                ("pub struct Config", 0),
                ("impl Config", 0),
                ("pub fn load", 1),
            ],
        ),
        file("README.md", &[]),
    ]
}

fn entry(file: usize, definitions: &[usize]) -> Entry {
    Entry {
        file,
        definitions: definitions.to_vec(),
    }
}

#[test]
fn everything_fits_in_a_large_budget() {
    let entries = [
        entry(0, &[0]),
        entry(1, &[0, 1]),
        entry(1, &[2]),
        entry(2, &[]),
    ];
    let fitted = fit(&files(), &entries, "", 1000, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main\nsrc/config.rs:\n  pub struct Config\n  impl Config\n    \
         pub fn load\nREADME.md\n"
    );
    assert_eq!(fitted.files_shown, 3);
    assert_eq!(fitted.tokens, fitted.text.chars().count());
}

#[test]
fn a_method_brings_its_impl_line_and_files_come_in_the_order_of_their_first_entry() {
    let entries = [entry(1, &[2]), entry(0, &[0]), entry(1, &[0, 1])];
    let fitted = fit(&files(), &entries, "", 1000, &CHARS);
    assert_eq!(
        fitted.text,
        "src/config.rs:\n  pub struct Config\n  impl Config\n    pub fn load\nsrc/main.rs:\n  \
         fn main\n… 1 more files not shown\n"
    );
    let first_only = fit(&files(), &entries[..1], "", 1000, &CHARS);
    assert_eq!(
        first_only.text,
        "src/config.rs:\n  impl Config\n    pub fn load\n… 2 more files not shown\n"
    );
}

#[test]
fn a_tight_budget_keeps_the_longest_run_of_first_entries() {
    let entries = [
        entry(0, &[0]),
        entry(2, &[]),
        entry(1, &[0, 1]),
        entry(1, &[2]),
    ];
    let fitted = fit(&files(), &entries, "", 60, &CHARS);
    assert_eq!(
        fitted.text,
        "src/main.rs:\n  fn main\nREADME.md\n… 1 more files not shown\n"
    );
    assert_eq!(fitted.files_shown, 2);
    assert!(fitted.tokens <= 60);
    assert_eq!(fit(&files(), &entries, "", 10, &CHARS), Fitted::default());
    assert_eq!(fit(&files(), &entries, "", 0, &CHARS), Fitted::default());
    assert_eq!(fit(&files(), &[], "", 100, &CHARS), Fitted::default());
}

#[test]
fn paths_are_written_from_the_near_folder() {
    let entries = [entry(0, &[0]), entry(2, &[])];
    let fitted = fit(&files(), &entries, "src", 1000, &CHARS);
    assert_eq!(
        fitted.text,
        "main.rs:\n  fn main\n../README.md\n… 1 more files not shown\n"
    );
    assert_eq!(display_path("a/b/c.rs", "a/b"), "c.rs");
    assert_eq!(display_path("a/bc.rs", "a/b"), "../../a/bc.rs");
    assert_eq!(display_path("x.rs", "/a/"), "../x.rs");
    assert_eq!(display_path("x.rs", ""), "x.rs");
}

mod property {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn never_over_budget_and_deterministic(
            shape in proptest::collection::vec((0usize..3, 0usize..4), 0..30),
            budget in 0usize..400,
        ) {
            let files = files();
            let entries: Vec<Entry> = (shape.iter())
                .map(|&(file, n)| {
                    let count = files[file].symbols.definitions.len();
                    entry(file, &(0..n.min(count)).collect::<Vec<_>>())
                })
                .collect();
            let fitted = fit(&files, &entries, "", budget, &CHARS);
            prop_assert!(fitted.tokens <= budget);
            prop_assert_eq!(CHARS.count(&fitted.text), fitted.tokens);
            prop_assert_eq!(&fit(&files, &entries, "", budget, &CHARS), &fitted);
        }
    }
}
