//! Benchmarks: counting adversarial shapes (a run of digits, one long word, a run of
//! whitespace, one repeated character) at 100 KB and 1 MB under cl100k and o200k, on one
//! thread. Counting is linear when the throughput (MB/s) of a shape is about the same at both
//! sizes. The `vs_tiktoken` group counts ordinary prose and code with ours and encodes it with
//! `tiktoken-rs`, the reference the counts are equal to.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// criterion_group! generates an undocumented pub function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ybs_context_budget::{Bpe, TokenCounter};

/// A deterministic pseudo-random byte from `seed`.
fn pick(seed: &mut u64, from: &[u8]) -> u8 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    from[(*seed >> 33) as usize % from.len()]
}

/// The shape named `name`, `bytes` long.
fn shape(name: &str, bytes: usize) -> String {
    let mut seed = 7;
    let random = |seed: &mut u64, from: &[u8]| -> String {
        (0..bytes).map(|_| char::from(pick(seed, from))).collect()
    };
    match name {
        "digits" => random(&mut seed, b"0123456789"),
        "long_word" => random(&mut seed, b"abcdefghijklmnopqrstuvwxyz"),
        "whitespace" => {
            let mut text = random(&mut seed, b"  \t\n");
            text.push('x');
            text
        }
        "one_char" => "a".repeat(bytes),
        _ => unreachable!("unknown shape {name}"),
    }
}

fn adversarial(c: &mut Criterion) {
    Bpe::cl100k().count("warm up");
    Bpe::o200k().count("warm up");
    for bpe in [Bpe::cl100k(), Bpe::o200k()] {
        let mut group = c.benchmark_group(format!("adversarial_{}", bpe.encoding()));
        group.sample_size(10);
        for name in ["digits", "long_word", "whitespace", "one_char"] {
            for bytes in [100_000usize, 1_000_000] {
                let text = shape(name, bytes);
                group.throughput(Throughput::Bytes(text.len() as u64));
                group.bench_with_input(
                    BenchmarkId::new(name, format!("{}KB", bytes / 1000)),
                    &text,
                    |b, text| b.iter(|| bpe.count_on_threads(black_box(text), 1)),
                );
            }
        }
        group.finish();
    }
}

/// Prose and code, about `bytes` long.
fn ordinary_text(bytes: usize) -> String {
    let chunk = "The quick brown fox jumps over the lazy dog. fn main() { let x = vec![1, 2, 3]; \
                 println!(\"{x:?}\"); } // Ünïcödé and 日本語 text too.\n    indented(code);\n";
    let mut text = chunk.repeat(bytes / chunk.len() + 1);
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

fn vs_tiktoken(c: &mut Criterion) {
    let text = ordinary_text(1 << 20);
    let mut group = c.benchmark_group("vs_tiktoken");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    for bpe in [Bpe::cl100k(), Bpe::o200k()] {
        bpe.count("warm up");
        bpe.encode("warm up");
        let name = bpe.encoding().name();
        group.bench_function(format!("{name}_count_one_thread"), |b| {
            b.iter(|| bpe.count_on_threads(black_box(&text), 1))
        });
        group.bench_function(format!("{name}_tiktoken_rs_encode"), |b| {
            b.iter(|| bpe.encode(black_box(&text)).len())
        });
    }
    group.finish();
}

criterion_group!(benches, adversarial, vs_tiktoken);
criterion_main!(benches);
