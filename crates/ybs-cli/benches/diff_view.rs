//! The diff shown before a change is approved: one edited line in a 10,000-line file, and a
//! whole rewrite of a 2,000-line file (the worst case `similar` is bounded for).

#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use ybs_cli::render::diff_view::{FOLD_LINES, Preview, render};
use ybs_cli::render::style::Painter;

fn bench(c: &mut Criterion) {
    let before: String = (0..10_000)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    let after = before.replacen("line 5000 of", "LINE 5000 of", 1);
    let edit = Preview::File {
        path: "big.txt".into(),
        before: Some(before),
        after,
    };
    c.bench_function("diff_view/one_line_of_10k", |b| {
        b.iter(|| render(&edit, Painter { color: true }, FOLD_LINES));
    });
    let old: String = (0..2_000).map(|i| format!("old {i}\n")).collect();
    let new: String = (0..2_000).map(|i| format!("new {}\n", i * 7)).collect();
    let rewrite = Preview::File {
        path: "rewrite.txt".into(),
        before: Some(old),
        after: new,
    };
    c.bench_function("diff_view/rewrite_of_2k", |b| {
        b.iter(|| render(&rewrite, Painter { color: true }, FOLD_LINES));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
