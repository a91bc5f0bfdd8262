//! Bedrock's errors: the exception named by the `x-amzn-errortype` header (or by an
//! exception message's `:exception-type` mid-stream), with `{"message": ...}` as the body.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;
use ybs_core::{ErrorKind, LlmError};

use crate::config::ApiKey;
use crate::error::{llm_error, scrub, shorten};

/// The header AWS services name the exception of an error response in.
const ERROR_TYPE: &str = "x-amzn-errortype";

/// The kind of an AWS exception (`ThrottlingException`, or `throttlingException` as a
/// stream names it), when its name decides it; `message` tells a too-long prompt among the
/// validation errors.
pub(crate) fn kind_of(
    exception: &str,
    message: &str,
    retry_after: Option<Duration>,
) -> Option<ErrorKind> {
    let name = exception.to_ascii_lowercase();
    let message = message.to_ascii_lowercase();
    Some(match name.as_str() {
        "throttlingexception" | "toomanyrequestsexception" => ErrorKind::RateLimit { retry_after },
        "validationexception"
            if [
                "too long",
                "too many input tokens",
                "context window",
                "prompt is too long",
            ]
            .iter()
            .any(|phrase| message.contains(phrase)) =>
        {
            ErrorKind::ContextOverflow
        }
        "validationexception" => ErrorKind::BadRequest,
        "accessdeniedexception"
        | "unrecognizedclientexception"
        | "invalidsignatureexception"
        | "expiredtokenexception"
        | "incompletesignatureexception"
        | "missingauthenticationtokenexception" => ErrorKind::Auth,
        "resourcenotfoundexception" => ErrorKind::ModelNotFound,
        "servicequotaexceededexception" => ErrorKind::Quota,
        "modeltimeoutexception" => ErrorKind::Timeout,
        "internalserverexception"
        | "serviceunavailableexception"
        | "modelnotreadyexception"
        | "modelstreamerrorexception"
        | "modelerrorexception" => ErrorKind::Server,
        _ => return None,
    })
}

/// The error of a response that names its exception in `x-amzn-errortype`, `None` for
/// any other (it is read as the other services' errors are).
pub(crate) fn from_aws_response(
    status: u16,
    headers: &HeaderMap,
    body: &str,
    retry_after: Option<Duration>,
    key: Option<&ApiKey>,
) -> Option<LlmError> {
    let header = headers.get(ERROR_TYPE)?.to_str().ok()?;
    // `ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/`.
    let exception = header.split(':').next().unwrap_or(header).trim();
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = (value.get("message").or_else(|| value.get("Message")))
        .and_then(Value::as_str)
        .map_or_else(|| shorten(body), str::to_owned);
    let message = if message.trim().is_empty() {
        exception.to_owned()
    } else {
        format!("{message} ({exception})")
    };
    let mut error = llm_error(
        Some(status),
        Some(exception.to_owned()),
        scrub(message, key),
    );
    if let Some(kind) = kind_of(exception, &error.message, retry_after) {
        error.kind = kind;
    } else if let ErrorKind::RateLimit { retry_after: after } = &mut error.kind {
        *after = retry_after;
    }
    Some(error)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use reqwest::header::HeaderValue;

    fn error(exception: &str, status: u16, message: &str) -> LlmError {
        let mut headers = HeaderMap::new();
        headers.insert(
            ERROR_TYPE,
            HeaderValue::from_str(&format!(
                "{exception}:http://internal.amazon.com/coral/com.amazon.bedrock/"
            ))
            .unwrap(),
        );
        let body = serde_json::json!({"message": message}).to_string();
        from_aws_response(status, &headers, &body, Some(Duration::from_secs(3)), None).unwrap()
    }

    #[test]
    fn exceptions_are_classified_by_name() {
        let throttled = error(
            "ThrottlingException",
            429,
            "Too many requests, please wait before trying again.",
        );
        assert_eq!(
            throttled.kind,
            ErrorKind::RateLimit {
                retry_after: Some(Duration::from_secs(3))
            }
        );
        assert_eq!(
            throttled.message,
            "Too many requests, please wait before trying again. (ThrottlingException)"
        );
        let long = error(
            "ValidationException",
            400,
            "Input is too long for requested model.",
        );
        assert_eq!(long.kind, ErrorKind::ContextOverflow);
        let bad = error(
            "ValidationException",
            400,
            "The provided model identifier is invalid.",
        );
        assert_eq!(bad.kind, ErrorKind::BadRequest);
        for (exception, status) in [
            ("AccessDeniedException", 403),
            ("UnrecognizedClientException", 403),
            ("InvalidSignatureException", 403),
        ] {
            assert_eq!(
                error(exception, status, "no").kind,
                ErrorKind::Auth,
                "{exception}"
            );
        }
        assert_eq!(
            error("ResourceNotFoundException", 404, "Model not found").kind,
            ErrorKind::ModelNotFound
        );
        assert_eq!(
            error("ServiceUnavailableException", 503, "busy").kind,
            ErrorKind::Server
        );
        assert!(from_aws_response(400, &HeaderMap::new(), "{}", None, None).is_none());
    }
}
