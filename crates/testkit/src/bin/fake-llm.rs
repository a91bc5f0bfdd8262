//! `fake-llm`: serve a scripted fake LLM on 127.0.0.1 and print its base URL.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use ybs_testkit::{FakeLlm, Script};

/// Serve a scripted fake LLM (OpenAI, OpenRouter, Anthropic, Gemini, Azure OpenAI, Vertex AI,
/// Amazon Bedrock and Ollama wire formats) on 127.0.0.1. Prints `http://127.0.0.1:PORT` as the
/// first stdout line, then serves until killed. Inspect it with `GET /_fake/requests`, add turns with
/// `POST /_fake/turns`.
#[derive(Debug, Parser)]
#[command(name = "fake-llm", version)]
struct Args {
    /// Script file (JSON); without one the turn queue starts empty.
    script: Option<PathBuf>,
    /// Port to listen on; an ephemeral one when absent.
    #[arg(long, default_value_t = 0)]
    port: u16,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let script = match &args.script {
        Some(path) => Script::from_file(path)?,
        None => Script::default(),
    };
    let server = FakeLlm::start_on(script, args.port)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.base_url()).context("cannot write the base URL to stdout")?;
    stdout.flush().context("cannot flush stdout")?;
    drop(stdout);
    loop {
        std::thread::park();
    }
}
