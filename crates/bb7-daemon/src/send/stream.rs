//! One streamed request: `chunk` and `thinking` lines go to the client as they arrive (unless
//! the request is the hidden repair), the events are accumulated into the reply. With the
//! debug log on (`BB7_DEBUG=1` or `~/.bb7/debug`, as in the first bb7) the whole request and
//! reply are logged under the target [`LLM_LOG`].

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use ybs_core::{Accumulator, ChatRequest, LlmError, Reply as LlmReply, StreamEvent};
use ybs_providers::Provider;

use crate::send::shared::Shared;
use crate::wire::replies::{Chunk, Thinking};
use crate::wire::reply::Reply;

/// The log target of the full requests and replies (at `debug`).
pub const LLM_LOG: &str = "bb7::llm";

/// What one streamed request gave.
pub(super) struct Streamed {
    /// What arrived, also when the stream failed or was cancelled.
    pub(super) reply: LlmReply,
    /// Why the stream ended early (cancelled: `ErrorKind::Cancelled`).
    pub(super) error: Option<LlmError>,
    /// Whether any content arrived (then an error cannot be retried).
    pub(super) delivered: bool,
}

/// Streams `request`, sending its text and thinking as `chunk` and `thinking` lines when
/// `visible`.
pub(super) async fn stream_once(
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
    shared: &Shared,
    request_id: Option<&str>,
    visible: bool,
) -> Streamed {
    log_request(request);
    let streamed = stream_events(provider, request, cancel, shared, request_id, visible).await;
    log_reply(&streamed);
    streamed
}

async fn stream_events(
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
    shared: &Shared,
    request_id: Option<&str>,
    visible: bool,
) -> Streamed {
    let mut stream = provider.stream(request, cancel.clone());
    let mut accumulator = Accumulator::new();
    let mut delivered = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => {
                match &event {
                    StreamEvent::TextDelta { text } if !text.is_empty() => {
                        delivered = true;
                        if visible {
                            shared.send(&chunk(text, request_id));
                        }
                    }
                    StreamEvent::ThinkingDelta { text, .. } if !text.is_empty() => {
                        delivered = true;
                        if visible {
                            shared.send(
                                &Reply::new(&Thinking { content: text }).for_request(request_id),
                            );
                        }
                    }
                    StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {
                        delivered = true;
                    }
                    _ => {}
                }
                accumulator.push(event);
            }
            Err(error) => {
                return Streamed {
                    reply: accumulator.finish(),
                    error: Some(error),
                    delivered,
                };
            }
        }
    }
    if cancel.is_cancelled() {
        return Streamed {
            reply: accumulator.finish(),
            error: Some(LlmError::new(ybs_core::ErrorKind::Cancelled, "cancelled")),
            delivered,
        };
    }
    Streamed {
        reply: accumulator.finish(),
        error: None,
        delivered,
    }
}

/// The system message and the messages of `request`, whole.
fn log_request(request: &ChatRequest) {
    if !tracing::enabled!(target: LLM_LOG, tracing::Level::DEBUG) {
        return;
    }
    let messages: Vec<String> = request
        .messages
        .iter()
        .map(|message| format!("[{}]\n{}", message.role.as_str(), message.text_content()))
        .collect();
    tracing::debug!(
        target: LLM_LOG,
        model = %request.model,
        reasoning = ?request.reasoning_effort,
        "request\n[system]\n{}\n{}",
        request.system.as_deref().unwrap_or(""),
        messages.join("\n")
    );
}

/// What came back: reasoning, text, tool calls and the error, whole.
fn log_reply(streamed: &Streamed) {
    if !tracing::enabled!(target: LLM_LOG, tracing::Level::DEBUG) {
        return;
    }
    let message = &streamed.reply.message;
    let thinking: String = message
        .parts
        .iter()
        .filter_map(|part| match part {
            ybs_core::Part::Thinking(thinking) => Some(thinking.content.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<String> = message
        .tool_calls()
        .map(|call| format!("{} {}", call.name, call.arguments))
        .collect();
    tracing::debug!(
        target: LLM_LOG,
        error = ?streamed.error.as_ref().map(ToString::to_string),
        "reply\n[reasoning]\n{thinking}\n[text]\n{}\n[tool calls]\n{}",
        message.text_content(),
        calls.join("\n")
    );
}

/// A `chunk` line.
pub(super) fn chunk(content: &str, request_id: Option<&str>) -> Reply {
    Reply::new(&Chunk { content }).for_request(request_id)
}
