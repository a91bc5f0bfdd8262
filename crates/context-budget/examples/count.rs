//! Prints the token count of each file, the total, the encoding and the time it took.
//!
//! ```text
//! cargo run --release -p ybs-context-budget --example count -- \
//!     [--encoding cl100k|o200k|chars] [--threads N] [--bench] FILE...
//! ```
//!
//! `cl100k` (the default) and `o200k` count with tiktoken's BPE encodings; `chars` uses the
//! chars-per-token heuristic (3.5 characters per token). `--threads N` counts each file on at
//! most N threads (default: every core, for files of a megabyte or more). `--bench` counts
//! every file five more times after loading the vocabulary and prints the median speed in MB/s.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ybs_context_budget::{Bpe, CharsPerToken, Encoding, TokenCounter};

const USAGE: &str = "usage: count [--encoding cl100k|o200k|chars] [--threads N] [--bench] FILE...";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("count: {message}");
            ExitCode::FAILURE
        }
    }
}

struct Args {
    encoding: String,
    threads: Option<usize>,
    bench: bool,
    files: Vec<String>,
}

fn parse_args(args: Vec<String>) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        encoding: String::from("cl100k"),
        threads: None,
        bench: false,
        files: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--encoding" | "-e" => {
                parsed.encoding = args
                    .next()
                    .ok_or_else(|| format!("--encoding needs a value\n{USAGE}"))?;
            }
            "--threads" => {
                let value = args
                    .next()
                    .ok_or_else(|| format!("--threads needs a value\n{USAGE}"))?;
                let threads = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        format!("--threads wants a number of at least 1, not {value:?}")
                    })?;
                parsed.threads = Some(threads);
            }
            "--bench" => parsed.bench = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(None);
            }
            _ => match arg.strip_prefix("--encoding=") {
                Some(value) => parsed.encoding = value.to_owned(),
                None => parsed.files.push(arg),
            },
        }
    }
    if parsed.files.is_empty() {
        return Err(format!("no files given\n{USAGE}"));
    }
    Ok(Some(parsed))
}

fn run(args: Vec<String>) -> Result<(), String> {
    let Some(args) = parse_args(args)? else {
        return Ok(());
    };
    let started = Instant::now();
    let heuristic = CharsPerToken::default();
    let bpe = if args.encoding == "chars" {
        None
    } else {
        let encoding: Encoding = args
            .encoding
            .parse()
            .map_err(|err| format!("{err}, or chars"))?;
        Some(Bpe::get(encoding))
    };
    let count = |text: &str| match (bpe, args.threads) {
        (Some(bpe), Some(threads)) => bpe.count_on_threads(text, threads),
        (Some(bpe), None) => bpe.count(text),
        (None, _) => heuristic.count(text),
    };
    let mut texts = Vec::with_capacity(args.files.len());
    let mut total = 0usize;
    for path in &args.files {
        let bytes = std::fs::read(path).map_err(|err| format!("cannot read {path}: {err}"))?;
        // Valid UTF-8 (the common case) is taken as it is, without a copy.
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned());
        let tokens = count(&text);
        total += tokens;
        println!("{tokens}\t{path}");
        texts.push(text);
    }
    println!("{total}\ttotal");
    let name = bpe.map_or("chars", |bpe| bpe.encoding().name());
    println!(
        "{name}: {total} tokens in {:.3} s",
        started.elapsed().as_secs_f64()
    );
    if args.bench {
        let bytes: usize = texts.iter().map(String::len).sum();
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let tokens: usize = texts.iter().map(|text| count(text)).sum();
                std::hint::black_box(tokens);
                start.elapsed()
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2].as_secs_f64();
        println!(
            "{name}: {:.1} MB/s (median of 5 counts of {bytes} bytes, {median:.3} s each)",
            bytes as f64 / 1e6 / median
        );
    }
    Ok(())
}
