//! Times parsing and printing a chat file, in MB/s (whole runs, for callgrind or a quick look;
//! the criterion bench is `benches/parse.rs`).
//!
//! `cargo run --release -p ybs-chatfile --example chatbench -- FILE [ROUNDS]`

use std::process::ExitCode;
use std::time::Instant;

use ybs_chatfile::{ParsedMessage, parse, parse_each, print};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("chatbench: {message}\nusage: chatbench FILE [ROUNDS]");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("no file given")?;
    let rounds = match args.next() {
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or(format!("ROUNDS is a number of at least 1, not {n:?}"))?,
        None => 1,
    };
    let text =
        std::fs::read_to_string(&path).map_err(|err| format!("cannot read {path}: {err}"))?;
    let start = Instant::now();
    let mut messages = Vec::new();
    for _ in 0..rounds {
        messages = parse(std::hint::black_box(&text));
    }
    let parse_secs = start.elapsed().as_secs_f64() / rounds as f64;
    // The same reading without owned copies: the messages streamed and dropped.
    let start = Instant::now();
    for _ in 0..rounds {
        let mut count = 0;
        parse_each(std::hint::black_box(&text), |message| {
            count += std::hint::black_box(message).content.len()
        });
        std::hint::black_box(count);
    }
    let stream_secs = start.elapsed().as_secs_f64() / rounds as f64;
    let plain: Vec<_> = messages.iter().map(ParsedMessage::to_message).collect();
    let start = Instant::now();
    let mut out = String::new();
    for _ in 0..rounds {
        out = print(std::hint::black_box(&plain)).map_err(|err| err.to_string())?;
    }
    let print_secs = start.elapsed().as_secs_f64() / rounds as f64;
    let mb = |bytes: usize| bytes as f64 / 1e6;
    println!(
        "{} messages: parse {:.1} MB at {:.1} MB/s (streamed: {:.1} MB/s), print {:.1} MB at {:.1} MB/s",
        messages.len(),
        mb(text.len()),
        mb(text.len()) / parse_secs,
        mb(text.len()) / stream_secs,
        mb(out.len()),
        mb(out.len()) / print_secs,
    );
    Ok(())
}
