//! Streams one reply from any provider: the reply to stdout, reasoning to stderr, tool calls
//! as JSON lines on stdout once complete.
//!
//! ```text
//! cargo run -p ybs-providers --example chat -- --provider ollama --model qwen3:14b "Hi"
//! cargo run -p ybs-providers --example chat -- --provider openai-compatible \
//!     --endpoint http://127.0.0.1:8080/v1 --model m --tools tools.json "Read a.txt"
//! ```
//!
//! `--tools FILE` reads a JSON array of tool specs (`name`, `description`, `parameters`). API
//! keys come from the usual environment variables (`OPENAI_API_KEY`, ...).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use ybs_core::{Accumulator, ChatRequest, Message, ReasoningEffort, StreamEvent, ToolSpec};
use ybs_providers::{ProviderConfig, ProviderKind, build};

#[derive(Debug, Parser)]
#[command(about = "Stream one reply from an LLM provider")]
struct Args {
    /// openai, openrouter, anthropic, ollama, deepseek, lmstudio, localai, vllm, llamacpp,
    /// openai-compatible.
    #[arg(long, short)]
    provider: ProviderKind,
    /// Base URL (the provider's default when left out).
    #[arg(long)]
    endpoint: Option<String>,
    /// Model id.
    #[arg(long, short)]
    model: String,
    /// A JSON file with an array of tool specs.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// A system prompt.
    #[arg(long)]
    system: Option<String>,
    /// minimal, low, medium or high.
    #[arg(long)]
    reasoning_effort: Option<ReasoningEffort>,
    /// The prompt.
    prompt: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let mut config = ProviderConfig::new(args.provider, args.model.clone());
    config.endpoint = args.endpoint;
    let provider = build(&config).map_err(|err| err.to_string())?;
    let mut request = ChatRequest::new(args.model, vec![Message::user(args.prompt)]);
    request.system = args.system;
    request.reasoning_effort = args.reasoning_effort;
    if let Some(path) = &args.tools {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        request.tools = serde_json::from_str::<Vec<ToolSpec>>(&text).map_err(|err| {
            format!(
                "{} is not a JSON array of tool specs: {err}",
                path.display()
            )
        })?;
    }

    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });

    let mut stream = provider.stream(&request, cancel);
    let mut accumulator = Accumulator::new();
    let mut stdout = std::io::stdout();
    let mut failure = None;
    let mut received = false;
    let mut thinking = false;
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => {
                received = true;
                match &event {
                    StreamEvent::ThinkingDelta { text, .. } => {
                        eprint!("{text}");
                        thinking = true;
                    }
                    StreamEvent::TextDelta { text } => {
                        if std::mem::take(&mut thinking) {
                            eprintln!();
                        }
                        print!("{text}");
                        stdout.flush().ok();
                    }
                    _ => {}
                }
                accumulator.push(event);
            }
            Err(err) => failure = Some(err),
        }
    }
    if failure.is_some() && !received {
        return Err(failure.map(|err| err.to_string()).unwrap_or_default());
    }
    let reply = accumulator.finish();
    if thinking {
        eprintln!();
    }
    println!();
    for call in reply.message.tool_calls() {
        println!(
            "{}",
            serde_json::to_string(call).map_err(|err| err.to_string())?
        );
    }
    let usage = reply.usage;
    eprintln!(
        "[{} prompt + {} reply tokens{}{}]",
        usage.prompt_tokens,
        usage.completion_tokens,
        match usage.cached_tokens {
            0 => String::new(),
            cached => format!(", {cached} cached"),
        },
        usage
            .cost
            .map(|cost| format!(", cost {cost}"))
            .unwrap_or_default()
    );
    match failure {
        Some(err) => Err(format!("{err} (the reply above is partial)")),
        None => Ok(()),
    }
}
