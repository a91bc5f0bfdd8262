//! What a session of N turns over a growing context costs with and without prompt caching,
//! priced from the built-in table.
//!
//! ```sh
//! cargo run -p ybs-providers --example session_cost -- [MODEL] [TURNS] [CONTEXT] [GROWTH] [OUT]
//! cargo run -p ybs-providers --example session_cost -- claude-sonnet-4-5 20 50000 1500 500
//! ```
//!
//! Each turn sends the whole conversation: `CONTEXT` tokens to start with, `GROWTH` more per
//! turn (the last reply and the new message), and gets `OUT` tokens back. With caching, each
//! request reads the previous request's prefix from the cache and writes what is new, as
//! `ybs`'s breakpoints on the newest two user turns make Anthropic do.

use std::process::ExitCode;

use ybs_core::Usage;
use ybs_providers::PriceTable;

fn arg(args: &[String], index: usize, default: u64) -> Result<u64, String> {
    match args.get(index) {
        Some(text) => text.parse().map_err(|_| format!("not a number: {text}")),
        None => Ok(default),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = args.first().map_or("claude-sonnet-4-5", String::as_str);
    let numbers = (|| -> Result<[u64; 4], String> {
        Ok([
            arg(&args, 1, 20)?,
            arg(&args, 2, 50_000)?,
            arg(&args, 3, 1_500)?,
            arg(&args, 4, 500)?,
        ])
    })();
    let [turns, context, growth, out] = match numbers {
        Ok(numbers) => numbers,
        Err(error) => {
            eprintln!("session_cost: {error}");
            return ExitCode::from(2);
        }
    };
    let table = match PriceTable::builtin() {
        Ok(table) => table,
        Err(error) => {
            eprintln!("session_cost: {error}");
            return ExitCode::FAILURE;
        }
    };
    let Some(price) = table.lookup(model) else {
        eprintln!("session_cost: no price for {model}");
        return ExitCode::FAILURE;
    };
    let (mut plain, mut cached, mut saved) = (0.0, 0.0, 0.0);
    for turn in 0..turns {
        let prompt = context + turn * growth;
        let base = Usage {
            prompt_tokens: prompt,
            completion_tokens: out,
            ..Usage::default()
        };
        plain += price.cost(&base).total;
        let read = if turn == 0 { 0 } else { prompt - growth };
        let with_cache = Usage {
            cached_tokens: read,
            cache_write_tokens: prompt - read,
            ..base
        };
        let cost = price.cost(&with_cache);
        cached += cost.total;
        saved += cost.saved_by_cache;
    }
    println!(
        "{model}: {turns} turns, context {context} tokens growing {growth} per turn, {out} out per turn"
    );
    println!("without caching: ${plain:.4}");
    println!(
        "with caching:    ${cached:.4} (saved ${saved:.4}, {:.0}%)",
        100.0 * saved / plain
    );
    ExitCode::SUCCESS
}
