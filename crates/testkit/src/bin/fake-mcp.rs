//! `fake-mcp`: a small deterministic MCP server (tools `echo`, `add`, `fail`, `whoami`) over
//! stdio or streamable HTTP, for testing MCP clients; `--extras` adds resources, a prompt and
//! a tool list that changes, `--oauth` guards HTTP with the fake authorization server.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ybs_testkit::mcp::{self, DEFAULT_NAME, McpConfig};

/// Serve a fake MCP server with the tools `echo`, `add`, `fail` and `whoami`. Without
/// `--http` it serves one session on stdin/stdout until stdin closes. With `--http` it prints
/// `listening on http://ADDR/mcp` as its only stdout line and serves until killed.
#[derive(Debug, Parser)]
#[command(name = "fake-mcp", version)]
struct Args {
    /// Server name, reported in `serverInfo` and by the `whoami` tool.
    #[arg(long, default_value = DEFAULT_NAME)]
    name: String,
    /// Append every tool call to this file as a JSON line `{"arguments":..,"tool":..}`.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Serve streamable HTTP at `/mcp` on this address (port 0 for any) instead of stdio.
    #[arg(long, value_name = "127.0.0.1:PORT")]
    http: Option<SocketAddr>,
    /// Also offer resources (fake://readme, fake://escape), the prompt `review` and the tool
    /// `grow` (which adds the tool `shout` and sends tools/list_changed)
    #[arg(long)]
    extras: bool,
    /// With --http: guard the tools with a fake OAuth 2.1 authorization server on the same
    /// address (metadata, client registration, /authorize that approves at once, /token
    /// checking the PKCE verifier, refresh)
    #[arg(long, requires = "http")]
    oauth: bool,
    /// Exit at once with status 1 and a message on stderr, before speaking MCP.
    #[arg(long)]
    fail_start: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.fail_start {
        eprintln!(
            "fake-mcp {}: failing to start as asked (--fail-start)",
            args.name
        );
        return ExitCode::FAILURE;
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Each error message already includes its cause.
            eprintln!("fake-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn run(args: Args) -> anyhow::Result<()> {
    let config = McpConfig {
        name: args.name,
        record: args.record,
        token: None,
        extras: args.extras,
    };
    let Some(addr) = args.http else {
        return Ok(mcp::serve_stdio(config).await?);
    };
    let (url, _server, _guarded) = if args.oauth {
        let guarded = ybs_testkit::oauth::serve(config, addr).await?;
        (guarded.url(), None, Some(guarded))
    } else {
        let server = mcp::serve_http(config, addr).await?;
        (server.url(), Some(server), None)
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {url}")
        .and_then(|()| stdout.flush())
        .map_err(|e| anyhow::anyhow!("cannot write the URL to stdout: {e}"))?;
    drop(stdout);
    std::future::pending::<()>().await;
    Ok(())
}
