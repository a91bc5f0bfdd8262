//! Why a server reached over HTTP did not answer, in the words a user acts on ("connection
//! refused", "401 Unauthorized"): the MCP library's errors name its transport's Rust types,
//! which say nothing to someone who configured a URL.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The errors of rmcp's HTTP client, which is built on reqwest.
type HttpError = StreamableHttpError<reqwest::Error>;

/// What went wrong reaching the server, found by walking `error`'s causes.
pub(super) fn describe(error: &(dyn Error + 'static)) -> String {
    let mut current: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(error) = current {
        if let Some(http) = error.downcast_ref::<HttpError>() {
            return describe_http(http);
        }
        if let Some(request) = error.downcast_ref::<reqwest::Error>() {
            return describe_request(request);
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return describe_io(io);
        }
        // The handshake's transport error is a field, not a cause: step into it.
        current = match error.downcast_ref::<ClientInitializeError>() {
            Some(ClientInitializeError::TransportError { error, .. }) => {
                Some(error as &(dyn Error + 'static))
            }
            _ => error.source(),
        };
    }
    without_type_names(&error.to_string())
}

fn describe_http(error: &HttpError) -> String {
    match error {
        StreamableHttpError::Client(request) => describe_request(request),
        StreamableHttpError::Io(io) => describe_io(io),
        StreamableHttpError::AuthRequired(_) => status_words(401),
        StreamableHttpError::InsufficientScope(_) => status_words(403),
        StreamableHttpError::HttpStatus(status) => status_words(status.status),
        // "HTTP 401 Unauthorized: <body>": the status line is what matters.
        StreamableHttpError::UnexpectedServerResponse(text) => match text.strip_prefix("HTTP ") {
            Some(rest) => rest.split(':').next().unwrap_or(rest).trim().to_owned(),
            None => text.to_string(),
        },
        other => without_type_names(&other.to_string()),
    }
}

fn describe_request(error: &reqwest::Error) -> String {
    if let Some(status) = error.status() {
        return status_words(status.as_u16());
    }
    let mut cause = error.source();
    while let Some(inner) = cause {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            return describe_io(io);
        }
        cause = inner.source();
    }
    if error.is_timeout() {
        "no answer in time".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        error.to_string()
    }
}

fn describe_io(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
        std::io::ErrorKind::TimedOut => "no answer in time".to_owned(),
        _ => error.to_string(),
    }
}

/// `401 Unauthorized`, `503 Service Unavailable`.
fn status_words(code: u16) -> String {
    match http::StatusCode::from_u16(code)
        .ok()
        .and_then(|status| status.canonical_reason())
    {
        Some(reason) => format!("{code} {reason}"),
        None => format!("HTTP status {code}"),
    }
}

/// `text` without rmcp's `Transport [TYPE<...>] error: ` prefixes.
fn without_type_names(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("Transport [") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match after.find("] error: ") {
            Some(end) => rest = &after[end + "] error: ".len()..],
            None => {
                rest = after;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_type_names_read_as_words() {
        assert_eq!(status_words(401), "401 Unauthorized");
        assert_eq!(status_words(599), "HTTP status 599");
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<\
                   rmcp::X<reqwest::Client>>] error: Client error: boom, when send initialize \
                   request";
        assert_eq!(
            without_type_names(raw),
            "Send message error Client error: boom, when send initialize request"
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(describe(&refused), "connection refused");
        let answer = HttpError::UnexpectedServerResponse("HTTP 401 Unauthorized: no".into());
        assert_eq!(describe(&answer), "401 Unauthorized");
    }
}
