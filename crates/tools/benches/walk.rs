//! Criterion benches of `list_files` and `search_files` on a generated tree of 20,000 files.
//!
//! Set `YBS_BENCH_TREE=DIR` to generate the tree in DIR and keep it (to compare with `rg` and
//! `fd` on the same files); otherwise it lives in a temp dir.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

/// 20 top directories x 10 subdirectories x 100 files.
fn generate(root: &Path) {
    if root.join(".generated").exists() {
        return;
    }
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    let mut n = 0u32;
    for top in 0..20 {
        for sub in 0..10 {
            let dir = root.join(format!("dir{top:02}/sub{sub}"));
            std::fs::create_dir_all(&dir).unwrap();
            for file in 0..100 {
                n += 1;
                let ext = if file % 2 == 0 { "rs" } else { "txt" };
                let mut text = String::new();
                for line in 0..40 {
                    if line == 20 && n % 50 == 0 {
                        text.push_str(&format!("fn needle_{n}() {{}}\n"));
                    } else {
                        text.push_str(&format!(
                            "let value_{line} = compute({n}, {line}); // filler text\n"
                        ));
                    }
                }
                std::fs::write(dir.join(format!("file{file:03}.{ext}")), text).unwrap();
            }
        }
    }
    std::fs::create_dir_all(root.join("ignored")).unwrap();
    std::fs::write(root.join("ignored/x.rs"), "fn needle_ignored() {}\n").unwrap();
    std::fs::write(root.join(".generated"), "").unwrap();
}

fn bench(c: &mut Criterion) {
    let temp = tempfile::tempdir().unwrap();
    let root: PathBuf = std::env::var_os("YBS_BENCH_TREE")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().join("tree"));
    generate(&root);
    let sandbox = PathSandbox::new([root.to_str().unwrap()], Vec::<String>::new()).unwrap();
    let ctx = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
    let registry = ToolRegistry::new();

    let listed = registry
        .invoke("list_files", &json!({"pattern": "**/*.rs"}), &ctx)
        .unwrap();
    assert_eq!(listed["total_matches"], 10_000);
    let found = registry
        .invoke("search_files", &json!({"pattern": r"fn needle_\d+"}), &ctx)
        .unwrap();
    assert_eq!(found["total_matches"], 400);

    let mut group = c.benchmark_group("tree_20k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("list_files **/*.rs", |b| {
        b.iter(|| {
            registry
                .invoke("list_files", &json!({"pattern": "**/*.rs"}), &ctx)
                .unwrap()
        })
    });
    group.bench_function("search_files fn needle_\\d+", |b| {
        b.iter(|| {
            registry
                .invoke("search_files", &json!({"pattern": r"fn needle_\d+"}), &ctx)
                .unwrap()
        })
    });
    group.bench_function("search_files fn needle_\\d+ *.rs", |b| {
        b.iter(|| {
            registry
                .invoke(
                    "search_files",
                    &json!({"pattern": r"fn needle_\d+", "file_pattern": "*.rs"}),
                    &ctx,
                )
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
