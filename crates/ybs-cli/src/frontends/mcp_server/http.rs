//! `ybs mcp-server --http`: streamable HTTP at `http://127.0.0.1:PORT/mcp`, every request
//! refused without `Authorization: Bearer TOKEN`. The token is the first line of
//! `--token-file` when given, else a random one told on stderr; the URL is the first line on
//! stdout.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use ybs_agent::host::Host;

/// How `--http` serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http {
    /// The port on 127.0.0.1 (any free one when 0).
    pub port: u16,
    /// Where the bearer token is read from (a random one when absent).
    pub token_file: Option<std::path::PathBuf>,
}

/// Serves until interrupted (Ctrl-C) or the listener fails.
pub async fn serve<S: rmcp::ServerHandler + Clone + Send + Sync + 'static>(
    server: S,
    options: &Http,
    host: &Host,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let token = match &options.token_file {
        Some(file) => read_token(&host.locations.cwd.join(file))?,
        None => {
            let token = random_token()?;
            let _ = writeln!(
                err,
                "ybs mcp-server: send `Authorization: Bearer {token}` with every request \
                 (--token-file FILE chooses the token)"
            );
            token
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let bound = listener
        .local_addr()
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let service: StreamableHttpService<S, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::default(),
        StreamableHttpServerConfig::default(),
    );
    let expected = Arc::new(format!("Bearer {token}"));
    let router =
        axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let expected = Arc::clone(&expected);
                    async move { authorized(request, next, &expected).await }
                },
            ));
    let _ = writeln!(out, "http://{bound}/mcp");
    let _ = out.flush();
    let _ = writeln!(err, "ybs mcp-server: listening on http://{bound}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|error| format!("the MCP HTTP server failed: {error}"))
}

/// Passes a request that carries the token; refuses any other with 401.
async fn authorized(request: Request, next: Next, expected: &str) -> Response {
    let given = (request.headers().get(header::AUTHORIZATION))
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if same(given.as_bytes(), expected.as_bytes()) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "ybs mcp-server: missing or wrong bearer token",
        )
            .into_response()
    }
}

/// Compares without stopping at the first difference.
fn same(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && (given.iter().zip(expected)).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

/// The first line of `file`, which must not be empty.
fn read_token(file: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| format!("cannot read the token file {}: {error}", file.display()))?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", file.display()));
    }
    Ok(token.to_owned())
}

/// 32 hex digits from the system's random source.
fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .map_err(|error| format!("cannot read /dev/urandom for a token: {error}"))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tokens_are_random_hex_and_compared_whole() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(same(b"Bearer x", b"Bearer x"));
        assert!(!same(b"Bearer y", b"Bearer x"));
        assert!(!same(b"Bearer x2", b"Bearer x"));
        assert!(!same(b"", b"Bearer x"));
    }
}
