//! Mapping a generated repository of 5,000 files (Rust, Python, TypeScript, Go, C and plain
//! text, each referencing definitions of others): the whole of `map_directory` (walk, read,
//! parse, rank, fit to 1,024 tokens), `build` alone over files already in memory, and a
//! [`Mapper`]'s rebuild after one file changed.

#![allow(missing_docs)]

use std::fs;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use ybs_context_budget::CharsPerToken;
use ybs_repo_map::{Mapper, SourceFile, build, map_directory, scan, walk};

const FILES: usize = 5_000;

/// The text of generated file `i`: a few definitions and calls to definitions of other files.
fn source(i: usize) -> (String, String) {
    let a = (i * 7 + 3) % FILES;
    let b = (i * 13 + 5) % FILES;
    let dir = format!("pkg{:02}", i % 50);
    match i % 6 {
        0 => (
            format!("{dir}/mod{i}.rs"),
            format!(
                "use crate::x;\n\n/// A type.\npub struct Item{i} {{\n    value: u64,\n}}\n\n\
                 impl Item{i} {{\n    pub fn new(value: u64) -> Self {{\n        Item{i} {{ value }}\n    }}\n\n\
                 \x20   pub fn total(&self, other: &Item{a}) -> u64 {{\n        self.value + helper_{b}(other.value)\n    }}\n}}\n\n\
                 pub fn helper_{i}(x: u64) -> u64 {{\n    x * 2 + {i}\n}}\n"
            ),
        ),
        1 => (
            format!("{dir}/mod{i}.py"),
            format!(
                "import os\n\n\nclass Item{i}(object):\n    def __init__(self, value):\n        self.value = value\n\n\
                 \x20   def total(self, other):\n        return self.value + helper_{b}(other.value)\n\n\n\
                 def helper_{i}(x: int) -> int:\n    return Item{a}(x).total(x) * 2\n"
            ),
        ),
        2 => (
            format!("{dir}/mod{i}.ts"),
            format!(
                "import {{ helper_{b} }} from './x';\n\nexport interface Shape{i} {{\n  area(): number;\n}}\n\n\
                 export class Item{i} implements Shape{i} {{\n  constructor(private value: number) {{}}\n\
                 \x20 area(): number {{ return helper_{b}(this.value) + new Item{a}(1).area(); }}\n}}\n\n\
                 export const helper_{i} = (x: number): number => x * 2;\n"
            ),
        ),
        3 => (
            format!("{dir}/mod{i}.go"),
            format!(
                "package pkg\n\ntype Item{i} struct {{\n\tValue int\n}}\n\n\
                 func (it *Item{i}) Total(o *Item{a}) int {{\n\treturn it.Value + helper_{b}(o.Value)\n}}\n\n\
                 func helper_{i}(x int) int {{\n\treturn x * 2\n}}\n"
            ),
        ),
        4 => (
            format!("{dir}/mod{i}.c"),
            format!(
                "#include \"x.h\"\n\ntypedef struct item{i} {{\n    int value;\n}} item{i}_t;\n\n\
                 int helper_{i}(int x) {{\n    return helper_{b}(x) + item_total_{a}(x);\n}}\n\n\
                 int item_total_{i}(int x) {{\n    return x * 2;\n}}\n"
            ),
        ),
        _ => (
            format!("{dir}/notes{i}.md"),
            format!("# Notes {i}\n\nSee helper_{a} and Item{b}.\n"),
        ),
    }
}

fn generate(root: &Path) {
    for i in 0..FILES {
        let (path, text) = source(i);
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            let _ = fs::create_dir_all(parent);
        }
        let _ = fs::write(path, text);
    }
    let _ = fs::write(root.join(".gitignore"), "target/\n");
}

fn bench(c: &mut Criterion) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    generate(dir.path());
    let counter = CharsPerToken::default();
    let mut group = c.benchmark_group("repo_map_5000_files");
    group.sample_size(10);
    group.bench_function("map_directory", |b| {
        b.iter(|| map_directory(dir.path(), |_| false, "see pkg01/mod1.py", 1024, &counter))
    });
    let files = scan(dir.path(), |_| false);
    let sources: Vec<SourceFile> = walk::read(dir.path(), &files);
    group.bench_function("build_in_memory", |b| {
        b.iter(|| build(&sources, &[], 1024, &counter))
    });
    // A session's rebuild after one file changed: the other 4,999 are not parsed again.
    let mut mapper = Mapper::new();
    mapper.map(dir.path(), &files, &[], 1024, &counter);
    let mut round = 0u32;
    group.bench_function("rebuild_after_one_change", |b| {
        b.iter(|| {
            round += 1;
            let _ = fs::write(
                dir.path().join("pkg00/mod0.rs"),
                format!("pub fn f{round}() {{}}\n"),
            );
            let files = scan(dir.path(), |_| false);
            mapper.map(dir.path(), &files, &[], 1024, &counter)
        })
    });
    group.bench_function("scan_and_fingerprint", |b| {
        b.iter(|| walk::fingerprint(&scan(dir.path(), |_| false)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
