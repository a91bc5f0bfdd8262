//! Times parsing and printing a chat file: `chatbench FILE [ROUNDS]`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use std::time::Instant;
use ybs_chatfile::{parse, print};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("file");
    let rounds: usize = args.next().map_or(1, |n| n.parse().expect("rounds"));
    let text = std::fs::read_to_string(&path).expect("read");
    let mb = text.len() as f64 / 1e6;
    let start = Instant::now();
    let mut messages = Vec::new();
    for _ in 0..rounds {
        messages = parse(std::hint::black_box(&text));
    }
    let parse_s = start.elapsed().as_secs_f64() / rounds as f64;
    let plain: Vec<_> = messages.iter().map(|m| m.to_message()).collect();
    let start = Instant::now();
    let mut out = String::new();
    for _ in 0..rounds {
        out = print(std::hint::black_box(&plain)).expect("print");
    }
    let print_s = start.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "{} messages, {:.1} MB: parse {:.1} MB/s, print {:.1} MB/s ({} bytes out)",
        messages.len(),
        mb,
        mb / parse_s,
        out.len() as f64 / 1e6 / print_s,
        out.len()
    );
}
