//! Prints the map of a directory as ybs builds it, then how many files it names and how long
//! it took: `cargo run --release -p ybs-repo-map --example show_map -- DIR [TOKENS] [NEAR]`.
//! `NEAR` is a folder of DIR (as the working directory of a session started there) whose
//! files are ranked first. Used to compare with aider's `--show-repo-map`.

use std::path::PathBuf;
use std::time::Instant;

use ybs_context_budget::CharsPerToken;
use ybs_repo_map::{Mapper, scan};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: show_map DIR [TOKENS] [NEAR]");
        std::process::exit(2);
    };
    let tokens = args.next().and_then(|t| t.parse().ok()).unwrap_or(1024);
    let near = args.next().unwrap_or_default();
    let started = Instant::now();
    let files = scan(&dir, |_| false);
    let map = Mapper::new()
        .near(&near)
        .map(&dir, &files, &[], tokens, &CharsPerToken::default());
    let took = started.elapsed();
    print!("{}", map.text);
    eprintln!(
        "{} of {} files named, {} tokens, {:.3} s",
        map.files_shown,
        map.files_total,
        map.tokens,
        took.as_secs_f64()
    );
}
