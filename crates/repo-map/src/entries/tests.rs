use std::collections::BTreeSet;

use super::*;
use crate::rank::rank;
use crate::test_files::file;

/// The entries as `path` or `path:name,name`.
fn order(files: &[MappedFile], mentioned: &[&str], near: &str) -> Vec<String> {
    let mentioned: BTreeSet<String> = mentioned.iter().map(|s| (*s).to_owned()).collect();
    (entries(files, &rank(files, &mentioned, near)).iter())
        .map(|entry| {
            let file = &files[entry.file];
            if entry.definitions.is_empty() {
                return file.path.clone();
            }
            let names: Vec<&str> = (entry.definitions.iter())
                .map(|&d| file.symbols.definitions[d].name.as_str())
                .collect();
            format!("{}:{}", file.path, names.join(","))
        })
        .collect()
}

#[test]
fn used_definitions_of_every_file_come_before_the_unused_ones_of_any() {
    let files = vec![
        file("big.rs", &["Used", "a", "b", "c"], &[]),
        file("small.rs", &["Helper", "d"], &[]),
        file("user.rs", &["main"], &["Used", "Helper"]),
        file("notes.md", &[], &[]),
    ];
    assert_eq!(
        order(&files, &[], ""),
        [
            "big.rs:Used",
            "small.rs:Helper",
            "notes.md",
            "user.rs",
            "big.rs:a",
            "big.rs:b",
            "big.rs:c",
            "small.rs:d",
            "user.rs:main",
        ]
    );
}

#[test]
fn the_more_used_definition_comes_first_and_same_named_ones_stay_together() {
    let mut config = file("config.rs", &["Config", "Config", "load"], &[]);
    config.symbols.definitions[1].signature = "impl Config".to_owned();
    let files = vec![
        config,
        file("a.rs", &[], &["Config", "load"]),
        file("b.rs", &[], &["Config"]),
    ];
    let ordered = order(&files, &[], "");
    assert_eq!(ordered[..2], ["config.rs:Config,Config", "config.rs:load"]);
}

#[test]
fn mentioned_files_come_whole_then_near_ones_then_the_rest() {
    let files = vec![
        file("lib/core.rs", &["Core", "spare"], &[]),
        file("app/main.rs", &["main"], &["Core"]),
        file("app/extra.rs", &["extra"], &[]),
        file("docs/guide.md", &[], &[]),
    ];
    assert_eq!(
        order(&files, &["docs/guide.md"], "app"),
        [
            "docs/guide.md",
            "app/extra.rs",
            "app/main.rs",
            "app/extra.rs:extra",
            "app/main.rs:main",
            "lib/core.rs:Core",
            "lib/core.rs:spare",
        ]
    );
    // A prefix that is not a whole folder name is not near.
    assert_eq!(order(&files, &[], "ap")[0], "lib/core.rs:Core");
}
