//! The error taxonomy of model calls and the one classifier every adapter uses.

use std::fmt;
use std::time::Duration;

/// What kind of failure a model call met. The kind decides whether a call is retried, whether
/// the context-budget trim loop takes over, and which short label the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The API key is missing, wrong, or lacks permission (401, 403).
    Auth,
    /// Too many requests for now (429); retry after the given time when the server said.
    RateLimit {
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },
    /// Out of credits or quota (402, `insufficient_quota`); retrying will not help.
    Quota,
    /// The prompt does not fit the model's context window (or tokens-per-minute limit).
    ContextOverflow,
    /// The model does not exist or is not available.
    ModelNotFound,
    /// The request was rejected as malformed (400, 422).
    BadRequest,
    /// The provider failed (5xx, overloaded).
    Server,
    /// The provider could not be reached or the connection broke.
    Network,
    /// The provider did not answer in time.
    Timeout,
    /// The caller cancelled the request.
    Cancelled,
    /// Nothing above matched.
    Unknown,
}

impl ErrorKind {
    /// The snake_case name of the kind (`rate_limit`, `context_overflow`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimit { .. } => "rate_limit",
            ErrorKind::Quota => "quota",
            ErrorKind::ContextOverflow => "context_overflow",
            ErrorKind::ModelNotFound => "model_not_found",
            ErrorKind::BadRequest => "bad_request",
            ErrorKind::Server => "server",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unknown => "unknown",
        }
    }

    /// The short UI label of the WYSIWYG workflow: `auth`, `quota`, `net`,
    /// `model` or `unknown`. Rate limits and context overflow are both `quota` there.
    pub fn label(&self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimit { .. } | ErrorKind::Quota | ErrorKind::ContextOverflow => "quota",
            ErrorKind::Network | ErrorKind::Timeout => "net",
            ErrorKind::ModelNotFound => "model",
            ErrorKind::BadRequest
            | ErrorKind::Server
            | ErrorKind::Cancelled
            | ErrorKind::Unknown => "unknown",
        }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimit { .. }
                | ErrorKind::Server
                | ErrorKind::Network
                | ErrorKind::Timeout
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed model call: its kind plus what the provider said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct LlmError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The provider's own message (or ours, for transport failures).
    pub message: String,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The provider's error code or type (`context_length_exceeded`, `rate_limit_error`...).
    pub code: Option<String>,
}

impl LlmError {
    /// An error of the given kind with a message and nothing else.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            message: message.into(),
            status: None,
            code: None,
        }
    }

    /// Classifies an HTTP error response with [`classify`].
    pub fn from_response(status: u16, code: Option<&str>, message: impl Into<String>) -> Self {
        let message = message.into();
        LlmError {
            kind: classify(Some(status), code, &message),
            message,
            status: Some(status),
            code: code.map(str::to_owned),
        }
    }
}

/// Phrases that mean the prompt overflowed the context.
const OVERFLOW_PHRASES: [&str; 7] = [
    "context_length",
    "maximum context length",
    "too many tokens",
    "context too long",
    "exceeds context window",
    "request too large",
    "too large for",
];
/// Overflow wording of real providers that the spec's list misses: Anthropic's `prompt is too
/// long: N tokens > M maximum`, Ollama's `prompt too long; exceeded max context length by N
/// tokens`, llama.cpp's `request (N tokens) exceeds the available context size (M tokens)`,
/// Gemini's `The input token count (N) exceeds the maximum number of tokens allowed (M)`,
/// and variants seen from OpenAI-compatible servers.
const PROVIDER_OVERFLOW_PHRASES: [&str; 7] = [
    "exceeds the available context size",
    "prompt is too long",
    "prompt too long",
    "exceeded max context length",
    "exceed context limit",
    "exceeds the context window",
    "exceeds the maximum number of tokens allowed",
];
const QUOTA_PHRASES: [&str; 6] = [
    "insufficient_quota",
    "insufficient quota",
    "exceeded your current quota",
    "insufficient credits",
    "credit balance",
    "billing",
];
const RATE_PHRASES: [&str; 7] = [
    "rate limit",
    "rate_limit",
    "ratelimit",
    "too many requests",
    "quota",
    "tpm",
    "rpm",
];
const MODEL_PHRASES: [&str; 8] = [
    "model not found",
    "model_not_found",
    "unknown model",
    "invalid model",
    "not a valid model",
    "no endpoints found",
    "deprecated",
    "decommissioned",
];
const AUTH_PHRASES: [&str; 5] = [
    "api key",
    "api_key",
    "unauthorized",
    "authentication",
    "permission denied",
];
const TIMEOUT_PHRASES: [&str; 3] = ["timed out", "timeout", "deadline"];
const NETWORK_PHRASES: [&str; 10] = [
    "connection refused",
    "connection reset",
    "connection closed",
    "broken pipe",
    "network",
    "dns",
    "fetch failed",
    "unreachable",
    "error sending request",
    "unexpected eof",
];

/// Classifies a failed model call from its HTTP status (if any), the provider's error code or
/// type (if any) and its message.
///
/// Context overflow is decided first, as the WYSIWYG workflow orders it: the
/// code `context_length_exceeded`, or any of its phrases in the message, case-insensitively
/// (plus the wording Anthropic and Ollama actually use).
/// Then provider codes, then the status, then phrases of the message for failures without a
/// response.
pub fn classify(http_status: Option<u16>, provider_code: Option<&str>, message: &str) -> ErrorKind {
    let message = message.to_lowercase();
    let code = provider_code.map(str::to_lowercase).unwrap_or_default();
    let says = |phrases: &[&str]| phrases.iter().any(|phrase| message.contains(phrase));

    if code == "context_length_exceeded"
        || says(&OVERFLOW_PHRASES)
        || says(&PROVIDER_OVERFLOW_PHRASES)
    {
        return ErrorKind::ContextOverflow;
    }
    if let Some(kind) = classify_code(&code) {
        return kind;
    }
    match http_status {
        Some(401 | 403) => ErrorKind::Auth,
        Some(402) => ErrorKind::Quota,
        Some(404) => ErrorKind::ModelNotFound,
        Some(408 | 504) => ErrorKind::Timeout,
        Some(429) if says(&QUOTA_PHRASES) => ErrorKind::Quota,
        Some(429) => ErrorKind::RateLimit { retry_after: None },
        Some(500..=599) => ErrorKind::Server,
        Some(_) if says(&MODEL_PHRASES) => ErrorKind::ModelNotFound,
        Some(_) if says(&QUOTA_PHRASES) => ErrorKind::Quota,
        Some(_) if says(&RATE_PHRASES) => ErrorKind::RateLimit { retry_after: None },
        Some(400..=499) => ErrorKind::BadRequest,
        Some(_) => ErrorKind::Unknown,
        None if message.contains("cancel") => ErrorKind::Cancelled,
        None if says(&TIMEOUT_PHRASES) => ErrorKind::Timeout,
        None if says(&NETWORK_PHRASES) => ErrorKind::Network,
        None if says(&AUTH_PHRASES) => ErrorKind::Auth,
        None if says(&MODEL_PHRASES) => ErrorKind::ModelNotFound,
        None if says(&QUOTA_PHRASES) => ErrorKind::Quota,
        None if says(&RATE_PHRASES) => ErrorKind::RateLimit { retry_after: None },
        None => ErrorKind::Unknown,
    }
}

/// Error codes and types of OpenAI, OpenRouter and Anthropic that decide the kind by
/// themselves.
fn classify_code(code: &str) -> Option<ErrorKind> {
    Some(match code {
        "invalid_api_key" | "authentication_error" | "permission_error" => ErrorKind::Auth,
        "insufficient_quota" | "billing_error" => ErrorKind::Quota,
        "rate_limit_exceeded" | "rate_limit_error" => ErrorKind::RateLimit { retry_after: None },
        "model_not_found" => ErrorKind::ModelNotFound,
        "overloaded_error" | "api_error" | "server_error" => ErrorKind::Server,
        "timeout_error" => ErrorKind::Timeout,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: ErrorKind = ErrorKind::RateLimit { retry_after: None };

    #[test]
    fn overflow_phrases_of_the_spec_win_over_status() {
        let cases = [
            "This model's context_length is 8192 tokens",
            "This model's maximum context length is 128000 tokens. However, you requested 130000",
            "Too many tokens in the prompt",
            "Context too long for this model",
            "Input exceeds context window of the model",
            "Request too large for gpt-4o in organization org-x on tokens per min (TPM)",
            "prompt is too large for model",
            "CONTEXT_LENGTH exceeded",
            "prompt is too long: 208310 tokens > 200000 maximum",
            "prompt too long; exceeded max context length by 12 tokens",
        ];
        for message in cases {
            for status in [None, Some(400), Some(413), Some(429), Some(500)] {
                assert_eq!(
                    classify(status, None, message),
                    ErrorKind::ContextOverflow,
                    "{status:?} {message}"
                );
            }
        }
        assert_eq!(
            classify(Some(400), Some("context_length_exceeded"), "bad"),
            ErrorKind::ContextOverflow
        );
        assert_eq!(
            classify(Some(400), Some("CONTEXT_LENGTH_EXCEEDED"), ""),
            ErrorKind::ContextOverflow
        );
    }

    #[test]
    fn statuses() {
        let cases: [(u16, &str, ErrorKind); 16] = [
            (401, "Incorrect API key provided", ErrorKind::Auth),
            (403, "forbidden", ErrorKind::Auth),
            (402, "Payment required", ErrorKind::Quota),
            (404, "No such thing", ErrorKind::ModelNotFound),
            (408, "request timeout", ErrorKind::Timeout),
            (504, "gateway timeout", ErrorKind::Timeout),
            (429, "Rate limit reached for requests", RATE),
            (
                429,
                "You exceeded your current quota, check billing",
                ErrorKind::Quota,
            ),
            (500, "internal error", ErrorKind::Server),
            (502, "bad gateway", ErrorKind::Server),
            (503, "unavailable", ErrorKind::Server),
            (529, "Overloaded", ErrorKind::Server),
            (
                400,
                "anthropic/claude-x is not a valid model ID",
                ErrorKind::ModelNotFound,
            ),
            (400, "messages: field required", ErrorKind::BadRequest),
            (422, "unprocessable", ErrorKind::BadRequest),
            (400, "rate limit: 10 rpm", RATE),
        ];
        for (status, message, kind) in cases {
            assert_eq!(
                classify(Some(status), None, message),
                kind,
                "{status} {message}"
            );
        }
    }

    #[test]
    fn provider_codes() {
        let cases: [(&str, ErrorKind); 9] = [
            ("invalid_api_key", ErrorKind::Auth),
            ("authentication_error", ErrorKind::Auth),
            ("permission_error", ErrorKind::Auth),
            ("insufficient_quota", ErrorKind::Quota),
            ("rate_limit_exceeded", RATE),
            ("rate_limit_error", RATE),
            ("model_not_found", ErrorKind::ModelNotFound),
            ("overloaded_error", ErrorKind::Server),
            ("api_error", ErrorKind::Server),
        ];
        for (code, kind) in cases {
            assert_eq!(classify(Some(400), Some(code), "x"), kind, "{code}");
        }
    }

    #[test]
    fn failures_without_a_response() {
        let cases: [(&str, ErrorKind); 10] = [
            ("request cancelled by user", ErrorKind::Cancelled),
            ("operation timed out", ErrorKind::Timeout),
            ("idle timeout between stream events", ErrorKind::Timeout),
            (
                "tcp connect error: Connection refused (os error 111)",
                ErrorKind::Network,
            ),
            ("connection reset by peer", ErrorKind::Network),
            ("dns error: failed to lookup address", ErrorKind::Network),
            ("missing API key", ErrorKind::Auth),
            ("unknown model llama9", ErrorKind::ModelNotFound),
            ("TPM limit hit", RATE),
            ("something odd", ErrorKind::Unknown),
        ];
        for (message, kind) in cases {
            assert_eq!(classify(None, None, message), kind, "{message}");
        }
    }

    #[test]
    fn labels_of_section_8() {
        let cases: [(ErrorKind, &str); 11] = [
            (ErrorKind::Auth, "auth"),
            (RATE, "quota"),
            (ErrorKind::Quota, "quota"),
            (ErrorKind::ContextOverflow, "quota"),
            (ErrorKind::Network, "net"),
            (ErrorKind::Timeout, "net"),
            (ErrorKind::ModelNotFound, "model"),
            (ErrorKind::BadRequest, "unknown"),
            (ErrorKind::Server, "unknown"),
            (ErrorKind::Cancelled, "unknown"),
            (ErrorKind::Unknown, "unknown"),
        ];
        for (kind, label) in cases {
            assert_eq!(kind.label(), label, "{kind}");
        }
    }

    #[test]
    fn retryable_kinds() {
        assert!(RATE.is_retryable());
        assert!(ErrorKind::Server.is_retryable());
        assert!(ErrorKind::Network.is_retryable());
        assert!(ErrorKind::Timeout.is_retryable());
        assert!(!ErrorKind::ContextOverflow.is_retryable());
        assert!(!ErrorKind::Auth.is_retryable());
        assert!(!ErrorKind::BadRequest.is_retryable());
    }

    #[test]
    fn error_carries_the_provider_message() {
        let err = LlmError::from_response(429, Some("rate_limit_exceeded"), "slow down");
        assert_eq!(err.kind, RATE);
        assert_eq!(err.to_string(), "rate_limit: slow down");
        assert_eq!(err.status, Some(429));
    }
}
