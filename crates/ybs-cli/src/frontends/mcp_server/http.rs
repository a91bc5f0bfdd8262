//! `ybs mcp-server --http`: streamable HTTP at `http://127.0.0.1:PORT/mcp`, every request
//! refused without `Authorization: Bearer TOKEN`. The token is `YBS_MCP_TOKEN` when set, else
//! a random one told on stderr; the URL is the first line on stdout.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::YbsServer;
use crate::startup::host::Host;

/// The variable that sets the token.
pub const TOKEN_VAR: &str = "YBS_MCP_TOKEN";

/// Serves until interrupted (Ctrl-C) or the listener fails.
pub async fn serve(
    server: YbsServer,
    port: u16,
    host: &Host,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let token = match host.env.get(TOKEN_VAR).filter(|token| !token.is_empty()) {
        Some(token) => token.clone(),
        None => {
            let token = random_token()?;
            let _ = writeln!(
                err,
                "ybs mcp-server: send `Authorization: Bearer {token}` with every request (set \
                 {TOKEN_VAR} to choose the token)"
            );
            token
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let bound = listener
        .local_addr()
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let service: StreamableHttpService<YbsServer, LocalSessionManager> = StreamableHttpService::new(
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
