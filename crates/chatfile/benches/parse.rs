//! Parsing and printing speed: a realistic 10 MB chat file (MB/s; parsed into owned messages,
//! streamed with `parse_each`, and read from a file a window at a time with `parse_reader`),
//! and pathological files of
//! unclosed `[[`, fence lines and far closing tags at growing sizes, whose MB/s stays flat
//! (linear time).

#![allow(clippy::unwrap_used, clippy::expect_used)]
// criterion_group! generates an undocumented pub function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::io::{Cursor, Seek, SeekFrom, Write};
use ybs_chatfile::{parse, parse_each, parse_reader, print};

/// A chat file of about `size` bytes mixing everything the parser meets: block and inline
/// headers, prose, fenced code, `[[` blocks, XML file blocks, command output and tool traces.
fn realistic(size: usize) -> String {
    let turn = r#"user:

endpoint: nano
option: temperature 0.2

Please review the function below and explain what: it does.
It has colons: everywhere, http://example.com links and <b>bold</b> tags.

```rust
fn main() {
    let x: u32 = 1; // user: not a header
    println!("{x}");
}
```

[[
note: this block protects role-looking lines
system: too
]]

<file name="src/lib.rs">
pub fn add(a: i32, b: i32) -> i32 { a + b }
assistant: inside a file
</file>

function_call: {"name":"read_file","arguments":{"path":"src/lib.rs"},"id":"call_1"}
function_call_output: {"id":"call_1","content":"pub fn add(a: i32, b: i32) -> i32 { a + b }"}

shell:-- cargo test {{{
running 3 tests
test result: ok. 3 passed
shell:-- cargo test }}}

assistant:

The function adds two numbers. Nothing surprising: it is a plain sum, and the tests pass.
\user: an escaped header in the answer

previous_response_id: resp_0123456789

"#;
    let mut text = String::with_capacity(size + turn.len());
    while text.len() < size {
        text.push_str(turn);
    }
    text
}

fn bench_realistic(c: &mut Criterion) {
    let text = realistic(10 * 1024 * 1024);
    let mut group = c.benchmark_group("parse_10mb");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("realistic", |b| b.iter(|| parse(black_box(&text))));
    // The same reading, the messages handed out one by one and dropped (no owned copies).
    group.bench_function("streamed", |b| {
        b.iter(|| {
            let mut bytes = 0;
            parse_each(black_box(&text), |message| bytes += message.content.len());
            bytes
        })
    });
    // The same reading from a file, a window at a time (what `chat2json` does).
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    group.bench_function("file_in_windows", |b| {
        b.iter(|| {
            file.seek(SeekFrom::Start(0)).unwrap();
            let mut bytes = 0;
            parse_reader(&mut file, |message| bytes += message.content.len()).unwrap();
            bytes
        })
    });
    group.finish();

    let messages: Vec<_> = parse(&text).iter().map(|m| m.to_message()).collect();
    let mut group = c.benchmark_group("print_10mb");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("realistic", |b| {
        b.iter(|| print(black_box(&messages)).unwrap())
    });
    group.finish();
}

fn bench_pathological(c: &mut Criterion) {
    let mut group = c.benchmark_group("pathological");
    group.sample_size(10);
    for lines in [25_000usize, 50_000, 100_000] {
        // Unclosed `[[` lines, each followed by a header it swallows.
        let squares = "[[\nuser: x\n".repeat(lines / 2);
        // Fence lines alternating with `[[`: every fence opens or sits in an unclosed block.
        let fences = "```\n[[ user:\n".repeat(lines / 2);
        // XML openers whose only closer is at the very end.
        let tags = "<a>\nuser: x\n".repeat(lines / 2) + "</a>\n";
        // Bytes per second: a flat rate across sizes is linear time.
        for (name, text) in [
            ("unclosed_squares", &squares),
            ("fences_and_squares", &fences),
            ("late_closing_tag", &tags),
        ] {
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::new(name, lines), text, |b, t| {
                b.iter(|| parse(black_box(t)))
            });
            // Read a window at a time: one message as long as the file makes the window
            // grow, and the walk start over, a bounded number of times.
            let windowed = format!("{name}_in_windows");
            group.bench_with_input(BenchmarkId::new(windowed, lines), text, |b, t| {
                b.iter(|| {
                    let mut count = 0;
                    parse_reader(Cursor::new(black_box(t)), |_| count += 1).unwrap();
                    count
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_realistic, bench_pathological);
criterion_main!(benches);
