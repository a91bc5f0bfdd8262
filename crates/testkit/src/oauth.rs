//! A fake OAuth 2.1 authorization server guarding the fake MCP server, on one address: the
//! MCP endpoint `/mcp` answers `401` with `WWW-Authenticate: Bearer resource_metadata=...`
//! until a request carries an access token it issued; the protected resource metadata
//! (RFC 9728), the authorization server metadata (RFC 8414), dynamic client registration
//! (RFC 7591), `/authorize` (which approves at once: a test "approves" by fetching the URL
//! the client printed and following the redirect) and `/token` (the authorization code
//! with its PKCE S256 verifier checked, and the refresh token).

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::mcp::{Http, McpConfig, McpError, serve_until};

/// A code waiting to be exchanged.
#[derive(Debug, Clone)]
struct Pending {
    client_id: String,
    redirect_uri: String,
    challenge: String,
}

#[derive(Debug, Default)]
struct Books {
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Pending>,
    access: HashSet<String>,
    refresh: HashSet<String>,
    /// How many requests each access token carried.
    uses: HashMap<String, u64>,
    /// After how many requests an access token is forgotten (0: never).
    max_uses: u64,
}

/// What the server has done, for tests to check.
#[derive(Debug, Default)]
struct Shared {
    base: String,
    books: Mutex<Books>,
    counter: AtomicU64,
    refreshed: AtomicU64,
    refused: Mutex<Vec<String>>,
}

impl Shared {
    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn next(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.counter.fetch_add(1, Ordering::SeqCst) + 1
        )
    }

    fn refuse(&self, why: &str) -> Response {
        (self.refused.lock().unwrap_or_else(|p| p.into_inner())).push(why.to_owned());
        let body = json!({"error": "invalid_grant", "error_description": why});
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    }
}

/// A running fake MCP server behind the fake OAuth server; stops when dropped.
#[derive(Debug)]
pub struct OAuthMcpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl OAuthMcpServer {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// How many times a refresh token was exchanged.
    pub fn refreshed(&self) -> u64 {
        self.shared.refreshed.load(Ordering::SeqCst)
    }

    /// The reasons of the token requests it refused (a wrong PKCE verifier...).
    pub fn refused(&self) -> Vec<String> {
        (self
            .shared
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner()))
        .clone()
    }

    /// Forgets every access token, as if they all expired: only a refresh helps.
    pub fn expire_access_tokens(&self) {
        self.shared.books().access.clear();
    }

    /// Forgets each access token after it carried `requests` requests, as if it expired
    /// during a session.
    pub fn honour_each_token_for(&self, requests: u64) {
        self.shared.books().max_uses = requests;
    }

    /// Whether `token` is an access token it issued and still honours.
    pub fn honours(&self, token: &str) -> bool {
        self.shared.books().access.contains(token)
    }
}

impl Drop for OAuthMcpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Serves the fake MCP server of `config` at `/mcp` behind the fake OAuth server on `addr`.
/// Must run inside a Tokio runtime.
pub async fn serve(config: McpConfig, addr: SocketAddr) -> Result<OAuthMcpServer, McpError> {
    let cancel = CancellationToken::new();
    let Http {
        listener,
        bound,
        service,
    } = Http::bind(&config, addr, &cancel).await?;
    let shared = Arc::new(Shared {
        base: format!("http://{bound}"),
        ..Shared::default()
    });
    let guarded = Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard));
    let router = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(shared.clone())
        .merge(guarded);
    serve_until(listener, router, &cancel);
    Ok(OAuthMcpServer {
        addr: bound,
        shared,
        cancel,
    })
}

async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let token = (request.headers().get(header::AUTHORIZATION))
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::to_owned);
    if let Some(token) = token
        && honour(&mut shared.books(), &token)
    {
        return next.run(request).await;
    }
    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
        shared.base
    );
    let mut response = StatusCode::UNAUTHORIZED.into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Whether `token` is honoured for one more request.
fn honour(books: &mut Books, token: &str) -> bool {
    if !books.access.contains(token) {
        return false;
    }
    let used = books.uses.entry(token.to_owned()).or_default();
    *used += 1;
    if books.max_uses > 0 && *used >= books.max_uses {
        books.access.remove(token);
    }
    true
}

async fn resource_metadata(State(shared): State<Arc<Shared>>) -> Json<serde_json::Value> {
    Json(json!({
        "resource": format!("{}/mcp", shared.base),
        "authorization_servers": [shared.base],
    }))
}

async fn server_metadata(State(shared): State<Arc<Shared>>) -> Json<serde_json::Value> {
    let base = &shared.base;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }))
}

#[derive(Debug, Deserialize)]
struct Registration {
    #[serde(default)]
    redirect_uris: Vec<String>,
}

async fn register(
    State(shared): State<Arc<Shared>>,
    Json(registration): Json<Registration>,
) -> Response {
    if registration.redirect_uris.is_empty() {
        return shared.refuse("a client needs redirect_uris");
    }
    let client_id = shared.next("client");
    (shared.books().clients).insert(client_id.clone(), registration.redirect_uris.clone());
    let body = json!({
        "client_id": client_id,
        "redirect_uris": registration.redirect_uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
    });
    (StatusCode::CREATED, Json(body)).into_response()
}

#[derive(Debug, Deserialize)]
struct Authorize {
    response_type: String,
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    code_challenge_method: String,
    state: String,
}

async fn authorize(State(shared): State<Arc<Shared>>, Query(ask): Query<Authorize>) -> Response {
    let registered = (shared.books().clients.get(&ask.client_id))
        .is_some_and(|uris| uris.contains(&ask.redirect_uri));
    if !registered || ask.response_type != "code" || ask.code_challenge_method != "S256" {
        return shared.refuse("an unknown client, redirect or method");
    }
    let code = shared.next("code");
    shared.books().codes.insert(
        code.clone(),
        Pending {
            client_id: ask.client_id,
            redirect_uri: ask.redirect_uri.clone(),
            challenge: ask.code_challenge,
        },
    );
    let mut location = ask.redirect_uri;
    location.push(if location.contains('?') { '&' } else { '?' });
    location.push_str(&format!("code={code}&state={}", encode(&ask.state)));
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// `text` with what a query value cannot hold percent-encoded.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct TokenRequest {
    grant_type: String,
    code: Option<String>,
    code_verifier: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    refresh_token: Option<String>,
}

async fn token(State(shared): State<Arc<Shared>>, Form(ask): Form<TokenRequest>) -> Response {
    match ask.grant_type.as_str() {
        "authorization_code" => {
            let pending = (ask.code.as_ref()).and_then(|code| shared.books().codes.remove(code));
            let Some(pending) = pending else {
                return shared.refuse("an unknown or used code");
            };
            if ask.client_id.as_deref() != Some(pending.client_id.as_str())
                || ask.redirect_uri.as_deref() != Some(pending.redirect_uri.as_str())
            {
                return shared.refuse("another client or redirect than the code's");
            }
            let verifier = ask.code_verifier.unwrap_or_default();
            if s256(&verifier) != pending.challenge {
                return shared.refuse("the PKCE verifier does not match the challenge");
            }
            issue(&shared)
        }
        "refresh_token" => {
            let known = (ask.refresh_token.as_ref())
                .is_some_and(|token| shared.books().refresh.remove(token));
            if !known {
                return shared.refuse("an unknown refresh token");
            }
            shared.refreshed.fetch_add(1, Ordering::SeqCst);
            issue(&shared)
        }
        _ => shared.refuse("an unsupported grant type"),
    }
}

fn issue(shared: &Shared) -> Response {
    let access = shared.next("access");
    let refresh = shared.next("refresh");
    {
        let mut books = shared.books();
        books.access.insert(access.clone());
        books.refresh.insert(refresh.clone());
    }
    Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": refresh,
    }))
    .into_response()
}

/// The S256 challenge of `verifier`: BASE64URL(SHA256(verifier)) without padding.
pub fn s256(verifier: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}
