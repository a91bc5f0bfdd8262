//! The OAuth 2.1 authorization code flow with PKCE for an MCP server reached over HTTP:
//! discovery (the server's `WWW-Authenticate` → its protected resource metadata, RFC 9728 →
//! its authorization server's metadata, RFC 8414 or OpenID), dynamic client registration
//! (RFC 7591), the user's approval in a browser with the answer on a loopback redirect
//! (127.0.0.1, a random port), the state checked, the code exchanged with the verifier; and
//! refreshing a stored token.

use std::time::Duration;

use base64::Engine as _;
use reqwest::{StatusCode, Url, header};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::error::OAuthError;
use super::store::{StoredToken, now};

/// How long the user has to approve in the browser.
const APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long one request to the servers may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The authorization server's endpoints.
#[derive(Debug, Deserialize)]
struct ServerMetadata {
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    #[serde(default)]
    code_challenge_methods_supported: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct ResourceMetadata {
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
}

fn client() -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| OAuthError::Http(error.to_string()))
}

/// Logs in to the server at `url`: `show` gets the line with the URL to open, then the
/// browser is asked to open it. Returns the token to store.
pub(super) async fn login(
    url: &str,
    show: &mut dyn FnMut(&str),
) -> Result<StoredToken, OAuthError> {
    let http = client()?;
    let (metadata, scopes) = discover(&http, url).await?;
    if !metadata.code_challenge_methods_supported.is_empty()
        && !metadata
            .code_challenge_methods_supported
            .iter()
            .any(|m| m == "S256")
    {
        return Err(OAuthError::Refused(
            "the authorization server does not offer PKCE with S256".into(),
        ));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|error| OAuthError::Http(format!("cannot listen on 127.0.0.1: {error}")))?;
    let port = listener
        .local_addr()
        .map_err(|error| OAuthError::Http(error.to_string()))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    // Before anything is sent to them: every endpoint must be one a login may use.
    endpoint("token endpoint", &metadata.token_endpoint)?;
    if let Some(registration) = &metadata.registration_endpoint {
        endpoint("registration endpoint", registration)?;
    }
    let client_id = register(&http, &metadata, &redirect).await?;
    let verifier = random_text()?;
    let state = random_text()?;
    let authorize = authorize_url(
        &metadata,
        &Approval {
            client_id: &client_id,
            redirect: &redirect,
            verifier: &verifier,
            state: &state,
            resource: url,
            scopes: &scopes,
        },
    )?;
    show(&format!(
        "Open this URL to log in (ybs tries to open it in your browser):\n{authorize}"
    ));
    open_browser(authorize.as_str());
    let answer = tokio::time::timeout(APPROVAL_TIMEOUT, callback(&listener, &state))
        .await
        .map_err(|_| OAuthError::Refused("no answer from the browser within 5 minutes".into()))??;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", answer.as_str()),
        ("redirect_uri", redirect.as_str()),
        ("client_id", client_id.as_str()),
        ("code_verifier", verifier.as_str()),
        ("resource", url),
    ];
    let tokens = token_request(&http, &metadata.token_endpoint, &form).await?;
    Ok(stored(
        url,
        &client_id,
        &metadata.token_endpoint,
        tokens,
        None,
    ))
}

/// What the authorization URL carries besides the endpoint.
struct Approval<'a> {
    client_id: &'a str,
    redirect: &'a str,
    verifier: &'a str,
    state: &'a str,
    resource: &'a str,
    scopes: &'a [String],
}

/// The URL the user opens to approve: the metadata's authorization endpoint (checked by
/// [`endpoint`], since it goes to the desktop's opener) with the request in its query.
fn authorize_url(metadata: &ServerMetadata, approval: &Approval<'_>) -> Result<Url, OAuthError> {
    let mut authorize = endpoint("authorization endpoint", &metadata.authorization_endpoint)?;
    {
        let mut query = authorize.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", approval.client_id)
            .append_pair("redirect_uri", approval.redirect)
            .append_pair("code_challenge", &s256(approval.verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", approval.state)
            .append_pair("resource", approval.resource);
        if !approval.scopes.is_empty() {
            query.append_pair("scope", &approval.scopes.join(" "));
        }
    }
    Ok(authorize)
}

/// An endpoint named by the authorization server's metadata, which the MCP server chose: HTTPS,
/// or plain HTTP to this machine only (as OAuth 2.1 allows). Anything else is refused before
/// it is opened or sent anything: a `file:` URL or a custom scheme would make the desktop's
/// opener run its handler, and plain HTTP elsewhere would carry the code in the clear.
fn endpoint(what: &str, text: &str) -> Result<Url, OAuthError> {
    let url =
        Url::parse(text).map_err(|_| OAuthError::Discovery(format!("its {what} is not a URL")))?;
    let host = url.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || (host.trim_start_matches('[').trim_end_matches(']'))
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" if !host.is_empty() => Ok(url),
        "http" if loopback => Ok(url),
        scheme => Err(OAuthError::Refused(format!(
            "the authorization server's {what} is a `{scheme}:` URL{}; only HTTPS (or HTTP to \
             this machine) is used, so nothing was opened or sent",
            if scheme == "http" {
                " to another host"
            } else {
                ""
            }
        ))),
    }
}

/// A new access token for `token` with its refresh token.
pub(super) async fn refresh(token: &StoredToken) -> Result<StoredToken, OAuthError> {
    let Some(refresh_token) = &token.refresh_token else {
        return Err(OAuthError::Refused("the token has no refresh token".into()));
    };
    let http = client()?;
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token.as_str()),
        ("client_id", token.client_id.as_str()),
        ("resource", token.url.as_str()),
    ];
    let answer = token_request(&http, &token.token_endpoint, &form).await?;
    Ok(stored(
        &token.url,
        &token.client_id,
        &token.token_endpoint,
        answer,
        token.refresh_token.clone(),
    ))
}

fn stored(
    url: &str,
    client_id: &str,
    token_endpoint: &str,
    answer: TokenAnswer,
    old_refresh: Option<String>,
) -> StoredToken {
    StoredToken {
        url: url.to_owned(),
        client_id: client_id.to_owned(),
        token_endpoint: token_endpoint.to_owned(),
        access_token: answer.access_token,
        // A server that does not rotate refresh tokens sends none with a refresh.
        refresh_token: answer.refresh_token.or(old_refresh),
        expires_at: answer
            .expires_in
            .map(|seconds| now().saturating_add(seconds)),
    }
}

/// The authorization server's metadata and the scopes the resource asks for.
async fn discover(
    http: &reqwest::Client,
    url: &str,
) -> Result<(ServerMetadata, Vec<String>), OAuthError> {
    let resource =
        Url::parse(url).map_err(|_| OAuthError::Discovery(format!("{url} is not a URL")))?;
    let origin = resource.origin().ascii_serialization();
    let probe = http
        .post(url)
        .header(header::ACCEPT, "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ybs", "version": env!("CARGO_PKG_VERSION")}}}),
        )
        .send()
        .await
        .map_err(|error| OAuthError::Http(error.to_string()))?;
    let challenged = (probe.headers().get(header::WWW_AUTHENTICATE))
        .and_then(|value| value.to_str().ok())
        .and_then(resource_metadata_url);
    let path = resource.path().trim_end_matches('/');
    let mut candidates: Vec<String> = challenged.into_iter().collect();
    candidates.push(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ));
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    let mut resource_metadata = None;
    for candidate in candidates {
        if let Some(found) = get_json::<ResourceMetadata>(http, &candidate).await {
            resource_metadata = Some(found);
            break;
        }
    }
    let (issuer, scopes) = match resource_metadata {
        Some(found) => (
            found
                .authorization_servers
                .first()
                .cloned()
                .unwrap_or_else(|| origin.clone()),
            found.scopes_supported,
        ),
        None => (origin.clone(), Vec::new()),
    };
    let issuer_url =
        Url::parse(&issuer).map_err(|_| OAuthError::Discovery(format!("{issuer} is not a URL")))?;
    let issuer_origin = issuer_url.origin().ascii_serialization();
    let issuer_path = issuer_url.path().trim_end_matches('/');
    let candidates = [
        format!("{issuer_origin}/.well-known/oauth-authorization-server{issuer_path}"),
        format!("{issuer_origin}/.well-known/openid-configuration{issuer_path}"),
        format!("{issuer_origin}{issuer_path}/.well-known/openid-configuration"),
    ];
    for candidate in candidates {
        if let Some(metadata) = get_json::<ServerMetadata>(http, &candidate).await {
            return Ok((metadata, scopes));
        }
    }
    Err(OAuthError::Discovery(format!(
        "{issuer} publishes no authorization server metadata"
    )))
}

/// `resource_metadata="URL"` of a `WWW-Authenticate: Bearer ...` challenge.
fn resource_metadata_url(challenge: &str) -> Option<String> {
    let start = challenge.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &challenge[start..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_owned())
}

async fn get_json<T: serde::de::DeserializeOwned>(http: &reqwest::Client, url: &str) -> Option<T> {
    let answer = http.get(url).send().await.ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().await.ok()
}

async fn register(
    http: &reqwest::Client,
    metadata: &ServerMetadata,
    redirect: &str,
) -> Result<String, OAuthError> {
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(OAuthError::Discovery(
            "the authorization server offers no dynamic client registration".into(),
        ));
    };
    let answer = http
        .post(endpoint)
        .json(&json!({
            "client_name": "ybs",
            "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }))
        .send()
        .await
        .map_err(|error| OAuthError::Http(error.to_string()))?;
    let status = answer.status();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    match body["client_id"].as_str() {
        Some(id) if status.is_success() => Ok(id.to_owned()),
        _ => Err(OAuthError::Refused(format!(
            "the client registration was refused ({status})"
        ))),
    }
}

async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, &str)],
) -> Result<TokenAnswer, OAuthError> {
    let mut body = Url::parse("http://form/").map_err(|e| OAuthError::Http(e.to_string()))?;
    body.query_pairs_mut().extend_pairs(form.iter());
    let answer = http
        .post(endpoint)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json")
        .body(body.query().unwrap_or_default().to_owned())
        .send()
        .await
        .map_err(|error| OAuthError::Http(error.to_string()))?;
    let status = answer.status();
    if status != StatusCode::OK {
        let body: Value = answer.json().await.unwrap_or(Value::Null);
        let why = (body["error_description"].as_str())
            .or(body["error"].as_str())
            .unwrap_or("no reason given");
        return Err(OAuthError::Refused(format!(
            "the token endpoint refused ({status}): {}",
            crate::inert::inert(why)
        )));
    }
    answer
        .json()
        .await
        .map_err(|_| OAuthError::Refused("the token endpoint's answer is not a token".into()))
}

/// Waits for the browser's redirect to `/callback` (a browser's other requests, such as its
/// icon, get a 404); the code when its state is ours.
async fn callback(listener: &tokio::net::TcpListener, state: &str) -> Result<String, OAuthError> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|error| OAuthError::Http(error.to_string()))?;
        let Some(request) = request_head(&mut stream).await else {
            continue;
        };
        let target = request.split_whitespace().nth(1).unwrap_or_default();
        if !target.starts_with("/callback") {
            let _ = (stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            ))
            .await;
            continue;
        }
        return answer(stream, target, state).await;
    }
}

/// The request line and headers of a browser's request (a request may come in pieces); at
/// most 8 KiB, within a few seconds. `None` when the connection ends or stalls first.
async fn request_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < 8192 {
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// Reads the redirect's answer and tells the browser the outcome.
async fn answer(
    mut stream: tokio::net::TcpStream,
    target: &str,
    state: &str,
) -> Result<String, OAuthError> {
    let query = Url::parse(&format!("http://127.0.0.1{target}")).ok();
    let param = |name: &str| {
        (query.as_ref()).and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        })
    };
    let outcome = match (param("state"), param("code"), param("error")) {
        (Some(given), Some(code), _) if given == state => Ok(code),
        (_, _, Some(error)) => Err(OAuthError::Refused(format!(
            "the authorization server said: {}",
            crate::inert::inert(&error)
        ))),
        (Some(_), Some(_), _) => Err(OAuthError::Refused(
            "the answer's state is not the one ybs sent: refused (another site may have \
             tried to log you in)"
                .into(),
        )),
        _ => Err(OAuthError::Refused("the answer has no code".into())),
    };
    let page = match &outcome {
        Ok(_) => "ybs: logged in. You can close this window.",
        Err(_) => "ybs: the login was refused; see the terminal.",
    };
    let status = if outcome.is_ok() {
        "200 OK"
    } else {
        "400 Bad Request"
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    outcome
}

/// Asks the desktop to open `url`, without a shell: the program `$BROWSER` names (split into
/// words; `none` or empty: do not open), else `xdg-open` (`open` on macOS). Nothing happens
/// where there is none: the URL was printed.
fn open_browser(url: &str) {
    let words = match std::env::var("BROWSER") {
        Ok(browser) => shell_words::split(&browser).unwrap_or_default(),
        Err(_) if cfg!(target_os = "macos") => vec!["open".to_owned()],
        Err(_) => vec!["xdg-open".to_owned()],
    };
    let Some((program, args)) = words.split_first() else {
        return;
    };
    if program == "none" {
        return;
    }
    let _ = std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// 32 random bytes as base64url: a PKCE verifier or a state.
fn random_text() -> Result<String, OAuthError> {
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(|error| OAuthError::Http(format!("cannot read /dev/urandom: {error}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The S256 challenge of `verifier`.
fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_challenge_names_the_metadata_and_s256_is_rfc_7636s() {
        assert_eq!(
            resource_metadata_url(
                "Bearer error=\"invalid_token\", resource_metadata=\"http://h/.well-known/x\""
            )
            .as_deref(),
            Some("http://h/.well-known/x")
        );
        assert_eq!(resource_metadata_url("Bearer realm=x"), None);
        // BASE64URL(SHA256("a-verifier")), computed apart.
        assert_eq!(
            s256("a-verifier"),
            "NORfwpEYKakZsuYgaey8PFmACPx5Ikq_PyZGYQ7p8NI"
        );
    }

    fn metadata(authorization: &str) -> ServerMetadata {
        ServerMetadata {
            authorization_endpoint: authorization.to_owned(),
            token_endpoint: "https://auth.example/token".to_owned(),
            registration_endpoint: None,
            code_challenge_methods_supported: Vec::new(),
        }
    }

    fn approval() -> Approval<'static> {
        Approval {
            client_id: "c",
            redirect: "http://127.0.0.1:9/callback",
            verifier: "v",
            state: "s",
            resource: "https://mcp.example/mcp",
            scopes: &[],
        }
    }

    /// The attack: a server's metadata names an authorization "endpoint" that the desktop's
    /// opener would hand to a local program (a file, a custom scheme) or plain HTTP elsewhere.
    #[test]
    fn attack_an_authorization_endpoint_that_is_not_https_is_never_opened() {
        for bad in [
            "file:///etc/passwd",
            "x-terminal-emulator://run?cmd=id",
            "javascript:alert(1)",
            "http://auth.example/authorize",
        ] {
            let refused = authorize_url(&metadata(bad), &approval()).unwrap_err();
            let said = refused.to_string();
            assert!(said.contains("nothing was opened or sent"), "{bad}: {said}");
            assert!(
                !said.contains("passwd") && !said.contains("cmd=id"),
                "{said}"
            );
        }
        for good in [
            "https://auth.example/authorize",
            "http://127.0.0.1:8080/authorize",
            "http://localhost/authorize",
            "http://[::1]:1/authorize",
        ] {
            let url = authorize_url(&metadata(good), &approval()).unwrap();
            assert!(url.as_str().contains("code_challenge_method=S256"), "{url}");
        }
        assert!(endpoint("token endpoint", "http://auth.example/token").is_err());
    }
}
