//! One streamed request: `chunk` and `thinking` lines go to the client as they arrive (unless
//! the request is the hidden repair), the events are accumulated into the reply.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use ybs_core::{Accumulator, ChatRequest, LlmError, Reply as LlmReply, StreamEvent};
use ybs_providers::Provider;

use crate::protocol::replies::{Chunk, Reply, Thinking};
use crate::protocol::shared::Shared;

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

/// A `chunk` line.
pub(super) fn chunk(content: &str, request_id: Option<&str>) -> Reply {
    Reply::new(&Chunk { content }).for_request(request_id)
}
