//! Prints the token count of each file and the total.
//!
//! ```text
//! cargo run -p ybs-context-budget --example count -- [--encoding cl100k|o200k|chars] FILE...
//! ```
//!
//! `cl100k` (the default) and `o200k` count with tiktoken's BPE encodings; `chars` uses the
//! chars-per-token heuristic (3.5 characters per token).

use std::process::ExitCode;

use ybs_context_budget::{Bpe, CharsPerToken, Encoding, TokenCounter};

const USAGE: &str = "usage: count [--encoding cl100k|o200k|chars] FILE...";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("count: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut encoding = String::from("cl100k");
    let mut files = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--encoding" | "-e" => {
                encoding = args
                    .next()
                    .ok_or_else(|| format!("--encoding needs a value\n{USAGE}"))?;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => match arg.strip_prefix("--encoding=") {
                Some(value) => encoding = value.to_owned(),
                None => files.push(arg),
            },
        }
    }
    if files.is_empty() {
        return Err(format!("no files given\n{USAGE}"));
    }
    let counter: &dyn TokenCounter = if encoding == "chars" {
        &CharsPerToken {
            chars_per_token: ybs_context_budget::DEFAULT_CHARS_PER_TOKEN,
        }
    } else {
        let encoding: Encoding = encoding.parse().map_err(|err| format!("{err}, or chars"))?;
        Bpe::get(encoding)
    };
    let mut total = 0usize;
    for path in &files {
        let bytes = std::fs::read(path).map_err(|err| format!("cannot read {path}: {err}"))?;
        let text = String::from_utf8_lossy(&bytes);
        let tokens = counter.count(&text);
        total += tokens;
        println!("{tokens}\t{path}");
    }
    println!("{total}\ttotal");
    Ok(())
}
