//! Property test: the confined walk of `list_files` and `search_files` respects ignore files
//! exactly as the `ignore` crate's walker does with the tools' settings (hidden files shown,
//! `.git` skipped, `.gitignore` applied without a repository, `.ignore` before `.gitignore`
//! before `.git/info/exclude`, the innermost matching rule deciding, the files of the
//! directories above the walk's start applied too). Random trees get random ignore files
//! from a pool of rules (negations, anchored and directory-only patterns, `**`), and both
//! walks are run from the top and from a subdirectory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

const DIRS: [&str; 6] = ["", "a", "a/b", "a/b/c", "d", "d/e"];
const FILES: [&str; 5] = ["x.rs", "y.txt", ".hidden", "keep.log", "c"];
const RULES: [&str; 18] = [
    "*.log",
    "!keep.log",
    "b/",
    "/x.rs",
    "c",
    "*.txt",
    "!a/b/y.txt",
    "**/e",
    "y.*",
    "# comment",
    "d/*.rs",
    "!*.rs",
    "x.rs/",
    "/d",
    ".hidden",
    "!c/",
    "a/**/x.rs",
    "\u{feff}*.rs",
];
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".git/info/exclude"];

/// For each directory and ignore file, the rules it holds (an empty list: no file).
fn tree() -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(
        prop::collection::vec(0..RULES.len(), 0..4),
        DIRS.len() * IGNORE_FILES.len(),
    )
}

fn build(root: &Path, rules: &[Vec<usize>]) {
    for dir in DIRS {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    std::fs::create_dir_all(root.join("d/c")).unwrap();
    for dir in DIRS {
        for file in FILES {
            // `c` is a directory in `a/b` and `d`, a file elsewhere.
            let path = root.join(dir).join(file);
            if !path.exists() {
                std::fs::write(path, "text\n").unwrap();
            }
        }
    }
    std::fs::write(root.join("d/c/z.rs"), "").unwrap();
    for (i, chosen) in rules.iter().enumerate() {
        if chosen.is_empty() {
            continue;
        }
        let dir = root.join(DIRS[i / IGNORE_FILES.len()]);
        let file = dir.join(IGNORE_FILES[i % IGNORE_FILES.len()]);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let text: Vec<&str> = chosen.iter().map(|&r| RULES[r]).collect();
        std::fs::write(file, text.join("\n") + "\r\n").unwrap();
    }
}

/// What the `ignore` crate's walker lists from `root/start`, relative to `root`.
fn expected(root: &Path, start: &str) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let walk = ignore::WalkBuilder::new(root.join(start))
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walk {
        let entry = entry.unwrap();
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let relative = entry.path().strip_prefix(root).unwrap();
            files.insert(relative.to_str().unwrap().to_string());
        }
    }
    files
}

fn listed(ctx: &ToolContext, start: &str) -> BTreeSet<String> {
    let path = if start.is_empty() { "." } else { start };
    let result = ToolRegistry::new()
        .invoke(
            "list_files",
            &json!({"pattern": "**/*", "path": path, "max_results": 10_000}),
            ctx,
        )
        .unwrap();
    result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

fn searched(ctx: &ToolContext, start: &str) -> BTreeSet<String> {
    let path = if start.is_empty() { "." } else { start };
    let result = ToolRegistry::new()
        .invoke(
            "search_files",
            &json!({"pattern": "text", "path": path, "max_results": 1000, "context_lines": 0}),
            ctx,
        )
        .unwrap();
    result["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap().to_string())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_walk_ignores_what_the_ignore_crate_ignores(rules in tree()) {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        build(&root, &rules);
        let sandbox = PathSandbox::new([root.to_str().unwrap()], Vec::<String>::new()).unwrap();
        let ctx = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
        for start in ["", "a", "a/b", "d"] {
            let expected = expected(&root, start);
            prop_assert_eq!(&listed(&ctx, start), &expected, "listing from `{}`", start);
            // Every listed file that holds text is found by a search (ignore files too).
            let with_text: BTreeSet<String> = expected
                .iter()
                .filter(|f| std::fs::read(root.join(f)).unwrap().starts_with(b"text"))
                .cloned()
                .collect();
            prop_assert_eq!(&searched(&ctx, start), &with_text, "searching from `{}`", start);
        }
    }
}
