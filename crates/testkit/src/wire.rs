//! What every wire format renders, and the pieces they share.

use serde_json::Value;

use crate::script::Turn;

/// Fixed `created` timestamp (seconds) so replies are deterministic.
pub(crate) const CREATED: u64 = 1_700_000_000;
/// The same instant as RFC 3339, for Ollama's `created_at`.
pub(crate) const CREATED_AT: &str = "2023-11-14T22:13:20Z";

/// Per-request facts a renderer needs.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// The `model` of the request, or `fake-model`.
    pub model: String,
    /// 1-based number of the chat request, used in ids.
    pub seq: u64,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
}

/// One streamed frame: its exact bytes, and whether it carries scripted content (faults
/// count those).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub text: String,
    pub delta: bool,
}

impl Frame {
    pub(crate) fn delta(text: String) -> Self {
        Self { text, delta: true }
    }

    pub(crate) fn other(text: String) -> Self {
        Self { text, delta: false }
    }
}

/// `value` as compact JSON with the keys of every object sorted: the same bytes whether or
/// not serde_json keeps insertion order in this build (its `preserve_order` feature, turned
/// on by some crates built along), so recordings and snapshots hold in every build.
pub fn json_text(value: &Value) -> String {
    let mut sorted = value.clone();
    sorted.sort_all_objects();
    sorted.to_string()
}

/// An SSE frame with only a data line.
pub(crate) fn sse_data(data: &Value) -> String {
    format!("data: {}\n\n", json_text(data))
}

/// An SSE frame with an event line and a data line.
pub(crate) fn sse_event(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {}\n\n", json_text(data))
}

/// A wire format: how a scripted turn and its faults look on one API.
pub(crate) trait Wire: Send + Sync {
    /// Content type of a streamed reply.
    fn stream_content_type(&self) -> &'static str;
    /// All frames of a streamed reply, terminator included.
    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame>;
    /// The body of a non-streamed reply.
    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value;
    /// A frame whose payload is invalid JSON.
    fn malformed_frame(&self) -> String;
    /// The frames of an in-stream error (the stream ends after them).
    fn stream_error(&self, message: &str, ctx: &Ctx) -> Vec<String>;
    /// The error body this API sends with an HTTP error status.
    fn error_body(&self, status: u16, message: &str) -> Value;
    /// `body` saying when to retry, for an API that says it in the error body (Google's
    /// `RetryInfo`) rather than in a `Retry-After` header; `None` for the others.
    fn with_retry_info(&self, _body: Value, _retry_after: &str) -> Option<Value> {
        None
    }
    /// The status and body of this API's context-overflow error.
    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value);
}
