//! Turning what went wrong into a core [`LlmError`] with the provider's own message, and the
//! errors of building a provider.

use std::error::Error as _;
use std::time::Duration;

use serde_json::Value;
use ybs_core::{ErrorKind, LlmError, classify};

use crate::config::{ApiKey, ProviderKind};
use crate::retry::UNREACHABLE;

/// Why a provider could not be built from its config.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The kind cannot be used on this platform.
    #[error(
        "{} are not available on this platform (they run only on macOS with Apple Intelligence); \
         use one of: {}",
        kind.display_name(),
        ProviderKind::available_names()
    )]
    Unavailable {
        /// The kind asked for.
        kind: ProviderKind,
    },
    /// A hosted service was chosen without an API key.
    #[error(
        "no API key for {}: set {} or `api_key` in the config",
        kind.display_name(),
        kind.api_key_env().unwrap_or("api_key")
    )]
    MissingApiKey {
        /// The kind asked for.
        kind: ProviderKind,
    },
    /// A kind without a default endpoint (a custom OpenAI-compatible server, an Azure
    /// resource) was chosen without saying where it is.
    #[error(
        "the {kind} provider needs an endpoint: set `endpoint` in the config or pass \
         --endpoint URL (for example {})",
        endpoint_example(*kind)
    )]
    MissingEndpoint {
        /// The kind asked for.
        kind: ProviderKind,
    },
    /// The endpoint is not an http(s) URL.
    #[error("invalid endpoint {endpoint:?}: {reason} (expected something like https://host/v1)")]
    InvalidEndpoint {
        /// The endpoint given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Google credentials for Vertex AI could not be found or read, or name no project.
    #[error("cannot use Google credentials: {0}")]
    Credentials(String),
    /// AWS credentials or the region for Amazon Bedrock could not be found or read.
    #[error("cannot use AWS credentials: {0}")]
    AwsCredentials(String),
    /// The HTTP client could not be created.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

/// What an endpoint of `kind` looks like, for the message of a missing one.
fn endpoint_example(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Azure | ProviderKind::AzureResponses => "https://NAME.openai.azure.com",
        _ => "http://localhost:8080/v1",
    }
}

/// An error of the given parts, classified.
pub(crate) fn llm_error(status: Option<u16>, code: Option<String>, message: String) -> LlmError {
    LlmError {
        kind: classify(status, code.as_deref(), &message),
        message,
        status,
        code,
    }
}

/// An error a provider reported inside a stream; an empty message says just that.
pub(crate) fn stream_error(
    provider: ProviderKind,
    status: Option<u16>,
    code: Option<String>,
    message: String,
) -> LlmError {
    let message = if message.is_empty() {
        format!("{} reported an error mid-stream", provider.display_name())
    } else {
        message
    };
    llm_error(status, code, message)
}

/// The error of a non-success HTTP response, from its status, body and `Retry-After`.
///
/// Understands the error shapes of OpenAI (`{"error":{"message","type","code"}}`), OpenRouter
/// (`{"error":{"code":429,"message","metadata":{"raw"}}}`), Anthropic
/// (`{"type":"error","error":{"type","message"}}`), Google
/// (`{"error":{"code":429,"message","status","details":[...]}}`) and Ollama
/// (`{"error":"..."}`); any other body is quoted (shortened).
pub(crate) fn from_response(
    status: u16,
    body: &str,
    retry_after: Option<Duration>,
    key: Option<&ApiKey>,
) -> LlmError {
    let (message, code) = match serde_json::from_str::<Value>(body) {
        Ok(value) => value
            .get("error")
            .map_or_else(|| (shorten(body), None), error_parts),
        Err(_) => (shorten(body), None),
    };
    let message = if message.trim().is_empty() {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .unwrap_or("no message")
            .to_owned()
    } else {
        message
    };
    let mut error = llm_error(Some(status), code, scrub(message, key));
    let google = serde_json::from_str::<Value>(body).ok().and_then(|value| {
        let error = value.get("error")?;
        Some((google_kind(error), google_retry_delay(error)))
    });
    let (google_kind, google_delay) = google.unwrap_or_default();
    if let Some(kind) = google_kind
        && error.kind != ErrorKind::ContextOverflow
    {
        error.kind = kind;
    }
    if let ErrorKind::RateLimit { retry_after: after } = &mut error.kind {
        *after = retry_after.or(google_delay);
    }
    error
}

/// What Google's error details (`google.rpc.ErrorInfo`) say when the status does not: an
/// invalid or expired key is a 400 there, and a 429 that says when to retry is a rate limit
/// however its message speaks of quota.
fn google_kind(error: &Value) -> Option<ErrorKind> {
    let details = error.get("details")?.as_array()?;
    let reason = (details.iter()).find_map(|detail| detail.get("reason")?.as_str());
    if matches!(
        reason,
        Some(
            "API_KEY_INVALID"
                | "API_KEY_EXPIRED"
                | "ACCESS_TOKEN_EXPIRED"
                | "ACCESS_TOKEN_TYPE_UNSUPPORTED"
        )
    ) {
        return Some(ErrorKind::Auth);
    }
    google_retry_delay(error).map(|after| ErrorKind::RateLimit {
        retry_after: Some(after),
    })
}

/// The wait a Google error names in its `google.rpc.RetryInfo` detail (`"retryDelay": "34s"`).
fn google_retry_delay(error: &Value) -> Option<Duration> {
    let details = error.get("details")?.as_array()?;
    let delay = (details.iter()).find_map(|detail| detail.get("retryDelay")?.as_str())?;
    let seconds: f64 = delay.strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The message and code of an error object (the value of a body's `"error"`), in any of the
/// shapes above.
pub(crate) fn error_parts(error: &Value) -> (String, Option<String>) {
    if let Some(text) = error.as_str() {
        return (text.to_owned(), None);
    }
    let mut message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Some(raw) = error.pointer("/metadata/raw") {
        let raw = raw.as_str().map(str::to_owned).unwrap_or(raw.to_string());
        let upstream = error
            .pointer("/metadata/provider_name")
            .and_then(Value::as_str)
            .unwrap_or("upstream");
        message = format!("{message} ({upstream}: {})", shorten(&raw));
    }
    // Google's errors name their kind in `status` (`RESOURCE_EXHAUSTED`) beside a numeric
    // `code`.
    let code = match error.get("code") {
        Some(Value::String(code)) => Some(code.clone()),
        _ => (error.get("type").or_else(|| error.get("status")))
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    (message, code)
}

/// The HTTP status an error object names in its numeric `code` (OpenRouter), if any.
pub(crate) fn error_status(error: &Value) -> Option<u16> {
    error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
}

/// Failures without a response (connect, read, timeouts), with the whole cause chain.
pub(crate) fn from_transport(
    what: &str,
    provider: ProviderKind,
    url: &str,
    error: &reqwest::Error,
) -> LlmError {
    // reqwest's own text repeats the URL; the innermost cause says what went wrong.
    let mut cause = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        cause = inner.to_string();
        source = inner.source();
    }
    let kind = if error.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Network
    };
    let mut message = format!("{what} {} at {url}: {cause}", named(provider, url));
    if provider == ProviderKind::Ollama && error.is_connect() {
        message = format!(
            "cannot reach Ollama at {url}: {cause}; Ollama is not running there: start it \
             with `ollama serve`, or set the endpoint to where it runs"
        );
    }
    let mut failure = LlmError::new(kind, message);
    if error.is_connect() {
        failure.code = Some(UNREACHABLE.to_owned());
    }
    failure
}

/// How `provider` at `url` is named in messages: by the service's name at its own address,
/// as "the server" elsewhere (a base URL may point a hosted service's API at a proxy or a
/// local server; bb7 speaks OpenRouter's API to whatever `base_url` says).
fn named(provider: ProviderKind, url: &str) -> &'static str {
    let host = |url: &str| {
        reqwest::Url::parse(url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
    };
    match provider.default_endpoint() {
        Some(own) if own.starts_with("https://") && host(own) != host(url) => "the server",
        _ => provider.display_name(),
    }
}

/// A frame that is not what the protocol promises.
pub(crate) fn malformed(provider: ProviderKind, detail: &str, data: &str) -> LlmError {
    LlmError {
        kind: ErrorKind::Server,
        message: format!(
            "malformed stream frame from {}: {detail} (frame: {})",
            provider.display_name(),
            shorten(data)
        ),
        status: None,
        code: Some("malformed_frame".to_owned()),
    }
}

/// An answer (not a stream frame) that is not what the API promises.
pub(crate) fn unexpected(provider: ProviderKind, what: &str, detail: &str, data: &str) -> LlmError {
    LlmError {
        kind: ErrorKind::Server,
        message: format!(
            "unexpected {what} from {}: {detail} (got: {})",
            provider.display_name(),
            shorten(data)
        ),
        status: None,
        code: Some("unexpected_response".to_owned()),
    }
}

/// Replaces the API key wherever a provider echoed it.
pub(crate) fn scrub(message: String, key: Option<&ApiKey>) -> String {
    match key {
        Some(key) if key.expose().len() >= 8 && message.contains(key.expose()) => {
            message.replace(key.expose(), "***")
        }
        _ => message,
    }
}

/// At most 500 characters of `text`.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 500;
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosted_service_is_named_only_at_its_own_address() {
        let openrouter = ProviderKind::OpenRouter;
        assert_eq!(
            named(openrouter, "https://openrouter.ai/api/v1/chat/completions"),
            "OpenRouter"
        );
        assert_eq!(
            named(openrouter, "http://127.0.0.1:9/v1/chat/completions"),
            "the server"
        );
        assert_eq!(
            named(ProviderKind::Anthropic, "https://proxy.example/v1/messages"),
            "the server"
        );
        assert_eq!(
            named(ProviderKind::Ollama, "http://box:11434/api/chat"),
            "Ollama"
        );
        assert_eq!(
            named(ProviderKind::LlamaCpp, "http://box:1/v1"),
            "llama.cpp"
        );
    }

    #[test]
    fn reads_every_error_shape() {
        let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
        let err = from_response(401, openai, None, None);
        assert_eq!(err.kind, ErrorKind::Auth);
        assert_eq!(err.message, "Incorrect API key provided");
        assert_eq!(err.code.as_deref(), Some("invalid_api_key"));

        let openrouter = r#"{"error":{"code":429,"message":"Provider returned error","metadata":{"raw":"slow down","provider_name":"Anthropic"}}}"#;
        let err = from_response(429, openrouter, Some(Duration::from_secs(2)), None);
        assert_eq!(
            err.kind,
            ErrorKind::RateLimit {
                retry_after: Some(Duration::from_secs(2))
            }
        );
        assert_eq!(
            err.message,
            "Provider returned error (Anthropic: slow down)"
        );

        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
        let err = from_response(400, anthropic, None, None);
        assert_eq!(err.kind, ErrorKind::ContextOverflow);
        assert_eq!(err.code.as_deref(), Some("invalid_request_error"));

        let ollama = r#"{"error":"prompt too long; exceeded max context length by 12 tokens"}"#;
        assert_eq!(
            from_response(400, ollama, None, None).kind,
            ErrorKind::ContextOverflow
        );
        let ollama = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
        let err = from_response(404, ollama, None, None);
        assert_eq!(err.kind, ErrorKind::ModelNotFound);
        assert_eq!(
            err.message,
            "model \"llama9\" not found, try pulling it first"
        );
    }

    #[test]
    fn reads_googles_error_details() {
        let invalid_key = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#;
        let err = from_response(400, invalid_key, None, None);
        assert_eq!(err.kind, ErrorKind::Auth);
        assert_eq!(err.code.as_deref(), Some("INVALID_ARGUMENT"));

        let rate = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}"#;
        let err = from_response(429, rate, None, None);
        assert_eq!(
            err.kind,
            ErrorKind::RateLimit {
                retry_after: Some(Duration::from_secs(34))
            }
        );
        let err = from_response(429, rate, Some(Duration::from_secs(2)), None);
        assert_eq!(
            err.kind,
            ErrorKind::RateLimit {
                retry_after: Some(Duration::from_secs(2))
            }
        );

        let overflow = r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(
            from_response(400, overflow, None, None).kind,
            ErrorKind::ContextOverflow
        );
    }

    #[test]
    fn other_bodies_are_quoted_or_named_by_status() {
        let err = from_response(502, "<html>Bad Gateway</html>", None, None);
        assert_eq!(err.kind, ErrorKind::Server);
        assert_eq!(err.message, "<html>Bad Gateway</html>");
        assert_eq!(
            from_response(503, "", None, None).message,
            "Service Unavailable"
        );
        let long = "x".repeat(900);
        assert_eq!(from_response(500, &long, None, None).message.len(), 503);
    }

    #[test]
    fn echoed_keys_are_scrubbed() {
        let key = ApiKey::new("sk-verysecret123");
        let body = r#"{"error":{"message":"key sk-verysecret123 is revoked"}}"#;
        let err = from_response(401, body, None, Some(&key));
        assert_eq!(err.message, "key *** is revoked");
    }

    #[test]
    fn unavailable_names_the_alternatives() {
        let err = ConfigError::Unavailable {
            kind: ProviderKind::Apple,
        };
        assert_eq!(
            err.to_string(),
            "Apple Foundation Models are not available on this platform (they run only on macOS with \
             Apple Intelligence); use one of: openai, openrouter, anthropic, ollama, deepseek, \
             lmstudio, localai, vllm, llamacpp, openai-compatible, responses, gemini, azure, \
             azure-responses, vertex, vertex-anthropic, bedrock"
        );
        assert_eq!(
            ConfigError::MissingApiKey {
                kind: ProviderKind::Anthropic
            }
            .to_string(),
            "no API key for Anthropic: set ANTHROPIC_API_KEY or `api_key` in the config"
        );
    }
}
