//! Benchmarks: prediction over 100,000 pairs with cached counts (linear in the number of
//! pairs), cl100k and o200k throughput in MB/s, and the content-hash cache on a hit.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// criterion_group! generates an undocumented pub function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ybs_context_budget::{Bpe, Budget, CachedCounter, TokenCounter, predict};

/// A deterministic mix of prose and code, about `bytes` long.
fn sample_text(bytes: usize) -> String {
    let chunk = "The quick brown fox jumps over the lazy dog. fn main() { let x = vec![1, 2, 3]; \
                 println!(\"{x:?}\"); } // Ünïcödé and 日本語 text too.\n";
    chunk.repeat(bytes / chunk.len() + 1)[..bytes].to_owned()
}

fn sample_text_on_boundary(bytes: usize) -> String {
    let mut text = sample_text(bytes);
    while !text.is_char_boundary(text.len()) {
        text.pop();
    }
    text
}

fn prediction(c: &mut Criterion) {
    let mut group = c.benchmark_group("predict");
    for pairs in [1_000usize, 10_000, 100_000] {
        // Pseudo-random counts; ML large enough that every pair is included (worst case).
        let tokens: Vec<usize> = (0..pairs).map(|i| 50 + (i * 7919) % 950).collect();
        let budget = Budget::new(usize::MAX / 2, None);
        group.throughput(Throughput::Elements(pairs as u64));
        group.bench_with_input(BenchmarkId::from_parameter(pairs), &tokens, |b, tokens| {
            b.iter(|| predict(black_box(tokens), &budget))
        });
    }
    group.finish();
}

fn bpe_throughput(c: &mut Criterion) {
    let text = sample_text_on_boundary(1 << 20);
    let mut group = c.benchmark_group("bpe");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    Bpe::cl100k().count("warm up");
    Bpe::o200k().count("warm up");
    group.bench_function("cl100k_1MiB", |b| {
        b.iter(|| Bpe::cl100k().count(black_box(&text)))
    });
    group.bench_function("o200k_1MiB", |b| {
        b.iter(|| Bpe::o200k().count(black_box(&text)))
    });
    group.bench_function("cl100k_1MiB_one_thread", |b| {
        b.iter(|| Bpe::cl100k().count_on_threads(black_box(&text), 1))
    });
    group.bench_function("o200k_1MiB_one_thread", |b| {
        b.iter(|| Bpe::o200k().count_on_threads(black_box(&text), 1))
    });
    let cached = CachedCounter::new(Bpe::cl100k());
    cached.count(&text);
    group.bench_function("cached_cl100k_1MiB_hit", |b| {
        b.iter(|| cached.count(black_box(&text)))
    });
    group.finish();
}

criterion_group!(benches, prediction, bpe_throughput);
criterion_main!(benches);
