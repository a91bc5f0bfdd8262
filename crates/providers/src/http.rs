//! The HTTP side shared by every adapter: one client with a connect timeout, streamed calls
//! with retries before the first event, idle and overall timeouts and cancellation, and plain
//! JSON calls with retries and a per-request timeout.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use ybs_core::{ErrorKind, LlmError};

use crate::config::{ApiKey, ProviderKind, Timeouts};
use crate::decode::feed;
use crate::decoders::{decoder_for, framing_for};
use crate::error::{
    ConfigError, error_parts, error_status, from_response, from_transport, llm_error, scrub,
    unexpected,
};
use crate::framing::{Framing, frames};
use crate::provider::ChatStream;
use crate::retry::{RetryPolicy, jitter, retry_after};

/// A client for one backend.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub kind: ProviderKind,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pub key: Option<ApiKey>,
}

/// A header value holding a secret: marked sensitive so it is never printed.
pub(crate) fn secret_header(value: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

impl Transport {
    pub fn new(
        kind: ProviderKind,
        timeouts: Timeouts,
        retry: RetryPolicy,
        key: Option<ApiKey>,
    ) -> Result<Self, ConfigError> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .user_agent(concat!("ybs/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| ConfigError::Client(err.to_string()))?;
        Ok(Transport {
            client,
            kind,
            timeouts,
            retry,
            key,
        })
    }

    /// Streams a chat: `body` (JSON already encoded, or the error of encoding it) is posted
    /// to `url`, and the response is framed and decoded by the kind's decoder.
    pub fn stream(
        &self,
        url: String,
        headers: HeaderMap,
        body: Result<Vec<u8>, LlmError>,
        cancel: CancellationToken,
    ) -> ChatStream {
        let this = self.clone();
        let events = async_stream::stream! {
            let body = match body {
                Ok(body) => Bytes::from(body),
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let deadline = Instant::now() + this.timeouts.overall;
            let mut attempt = 0u32;
            loop {
                let sent = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(cancelled()),
                    _ = tokio::time::sleep_until(deadline) => Err(this.overall_timeout()),
                    sent = tokio::time::timeout(
                        this.timeouts.idle,
                        this.post(&url, &headers, body.clone()),
                    ) => sent.unwrap_or_else(|_| Err(idle_timeout(this.kind, &url, this.timeouts.idle))),
                };
                let error = match sent {
                    Err(error) => error,
                    Ok(response) => {
                        let mut decoder = decoder_for(this.kind);
                        let bytes = body_bytes(response, this.timeouts.idle, this.kind, url.clone());
                        let mut frames = frames(framing_for(this.kind), this.kind, bytes);
                        let mut delivered = false;
                        let mut out = Vec::new();
                        let failure = loop {
                            let next = tokio::select! {
                                biased;
                                _ = cancel.cancelled() => Some(Err(cancelled())),
                                _ = tokio::time::sleep_until(deadline) => {
                                    Some(Err(this.overall_timeout()))
                                }
                                next = frames.next() => next,
                            };
                            let result = feed(decoder.as_mut(), next, &mut out);
                            for event in out.drain(..) {
                                delivered = true;
                                yield Ok(event);
                            }
                            match result {
                                // Decoders read errors the server put inside the stream,
                                // which may quote the key back.
                                Err(mut error) => {
                                    error.message = scrub(error.message, this.key.as_ref());
                                    break Some(error);
                                }
                                Ok(true) => break None,
                                Ok(false) => {}
                            }
                        };
                        match failure {
                            None => return,
                            Some(error) if delivered => {
                                yield Err(error);
                                return;
                            }
                            Some(error) => error,
                        }
                    }
                };
                let wait = this
                    .retry
                    .delay(attempt, &error, jitter())
                    .filter(|wait| Instant::now() + *wait < deadline);
                let Some(wait) = wait else {
                    yield Err(error);
                    return;
                };
                tracing::warn!(
                    provider = this.kind.name(),
                    attempt = attempt + 1,
                    wait_ms = wait.as_millis() as u64,
                    error = %error,
                    "retrying a failed model request"
                );
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        yield Err(cancelled());
                        return;
                    }
                    _ = tokio::time::sleep(wait) => {}
                }
                attempt += 1;
            }
        };
        events.boxed()
    }

    /// GETs JSON, retrying as the policy says; each attempt times out after
    /// `timeouts.request`.
    pub async fn get_json(&self, url: &str, headers: &HeaderMap) -> Result<Value, LlmError> {
        self.call_json(reqwest::Method::GET, url, headers, None)
            .await
    }

    /// POSTs JSON and reads JSON back, like [`get_json`](Transport::get_json).
    pub async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, LlmError> {
        self.call_json(reqwest::Method::POST, url, headers, Some(body.to_string()))
            .await
    }

    /// POSTs a form (`application/x-www-form-urlencoded`, already encoded) and reads JSON
    /// back, like [`get_json`](Transport::get_json): OAuth token endpoints take only forms.
    pub async fn post_form(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: String,
    ) -> Result<Value, LlmError> {
        let mut headers = headers.clone();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        self.call_json(reqwest::Method::POST, url, &headers, Some(body))
            .await
    }

    async fn call_json(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &HeaderMap,
        body: Option<String>,
    ) -> Result<Value, LlmError> {
        let mut attempt = 0u32;
        loop {
            let error = match self
                .call_once(method.clone(), url, headers, body.clone())
                .await
            {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let Some(wait) = self.retry.delay(attempt, &error, jitter()) else {
                return Err(error);
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn call_once(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &HeaderMap,
        body: Option<String>,
    ) -> Result<Value, LlmError> {
        let mut request = self
            .client
            .request(method, url)
            .headers(headers.clone())
            .timeout(self.timeouts.request);
        if let Some(body) = body {
            if !headers.contains_key(CONTENT_TYPE) {
                request = request.header(CONTENT_TYPE, "application/json");
            }
            request = request.body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|error| from_transport("cannot reach", self.kind, url, &error))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = response
            .text()
            .await
            .map_err(|error| from_transport("cannot read the answer of", self.kind, url, &error))?;
        if !status.is_success() {
            return Err(self.error_of(status.as_u16(), &headers, &text));
        }
        serde_json::from_str(&text)
            .map_err(|error| unexpected(self.kind, "answer", &format!("not JSON: {error}"), &text))
    }

    async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<reqwest::Response, LlmError> {
        let response = self
            .client
            .post(url)
            .headers(headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|error| from_transport("cannot reach", self.kind, url, &error))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = response.text().await.unwrap_or_default();
            return Err(self.error_of(status.as_u16(), &headers, &text));
        }
        if !self.json_instead_of_sse(&response) {
            return Ok(response);
        }
        // A server that ignored `"stream": true`, or reports an error with status 200.
        let text = response.text().await.unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        Err(match value.get("error") {
            Some(error) => {
                let (message, code) = error_parts(error);
                llm_error(error_status(error), code, scrub(message, self.key.as_ref()))
            }
            None => unexpected(
                self.kind,
                "answer",
                "a JSON body where a stream (text/event-stream) was asked for",
                &text,
            ),
        })
    }

    /// The error of a response with a failure `status`: AWS's named by its
    /// `x-amzn-errortype`, the others' read from their bodies.
    fn error_of(&self, status: u16, headers: &HeaderMap, body: &str) -> LlmError {
        let after = retry_after(headers);
        let key = self.key.as_ref();
        crate::bedrock::errors::from_aws_response(status, headers, body, after, key)
            .unwrap_or_else(|| from_response(status, body, after, key))
    }

    /// Whether a response that should be server-sent events is plain JSON instead.
    fn json_instead_of_sse(&self, response: &reqwest::Response) -> bool {
        let sse = framing_for(self.kind) == Framing::Sse;
        let json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        sse && json
    }

    fn overall_timeout(&self) -> LlmError {
        LlmError::new(
            ErrorKind::Timeout,
            format!(
                "{} did not finish the reply within {} (overall timeout)",
                self.kind.display_name(),
                seconds(self.timeouts.overall)
            ),
        )
    }
}

fn idle_timeout(kind: ProviderKind, url: &str, idle: Duration) -> LlmError {
    LlmError::new(
        ErrorKind::Timeout,
        format!(
            "{} at {url} sent nothing for {} (idle timeout)",
            kind.display_name(),
            seconds(idle)
        ),
    )
}

fn seconds(duration: Duration) -> String {
    let text = format!("{:.3}", duration.as_secs_f64());
    format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
}

pub(crate) fn cancelled() -> LlmError {
    LlmError::new(ErrorKind::Cancelled, "request cancelled")
}

/// The body of a streamed response, failing when nothing arrives for `idle`.
fn body_bytes(
    mut response: reqwest::Response,
    idle: Duration,
    kind: ProviderKind,
    url: String,
) -> impl Stream<Item = Result<Bytes, LlmError>> + Send + 'static {
    async_stream::stream! {
        loop {
            match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => {
                    yield Err(idle_timeout(kind, &url, idle));
                    return;
                }
                Ok(Ok(Some(chunk))) => yield Ok(chunk),
                Ok(Ok(None)) => return,
                Ok(Err(error)) => {
                    let mut error = from_transport(
                        "the stream broke off from",
                        kind,
                        &url,
                        &error,
                    );
                    if error.kind != ErrorKind::Timeout {
                        error.kind = ErrorKind::Network;
                    }
                    yield Err(error);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(seconds(Duration::from_secs(120)), "120s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5s");
    }
}
