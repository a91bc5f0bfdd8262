//! Chat replies: the next scripted turn rendered in the wire format of the endpoint hit,
//! streamed or whole, with the turn's fault injected.

use std::io;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

use super::respond::json_response;
use super::state::Shared;
use crate::script::{Fault, Turn};
use crate::wire::{Ctx, Frame, Wire};

/// What the response body streams: bytes, or a dropped connection.
enum Piece {
    Data(String),
    Abort,
}

/// A chat request: the next turn rendered in `wire`'s format, streamed or not, with its fault.
pub(super) async fn chat(shared: &Shared, wire: &dyn Wire, path: &str, body: &Value) -> Response {
    if let Some(refusal) = super::models::over_window(shared, body) {
        return refusal;
    }
    let (turn, seq) = {
        let mut inner = shared.lock();
        inner.chats += 1;
        (inner.turns.pop_front(), inner.chats)
    };
    let Some(turn) = turn else {
        let message = format!(
            "fake-llm: script exhausted: no scripted turn left for POST {path} (chat request \
             #{seq}); queue more with FakeLlm::push_turn or POST /_fake/turns"
        );
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &wire.error_body(500, &message),
        );
    };
    let ctx = Ctx {
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake-model")
            .to_owned(),
        seq,
        include_usage: body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let stream = match body.get("stream").and_then(Value::as_bool) {
        Some(stream) => stream,
        // Ollama streams unless told not to; the others only when asked.
        None => wire.stream_content_type() == "application/x-ndjson",
    };
    let delay = Duration::from_millis(turn.delay_ms);

    match &turn.fault {
        Some(Fault::Status {
            status,
            body,
            retry_after,
        }) => {
            sleep(delay).await;
            let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut retry_after = retry_after.as_ref();
            let text = match body {
                Some(raw) => raw.clone(),
                None => {
                    let body =
                        wire.error_body(*status, &format!("fake-llm: scripted HTTP {status}"));
                    let in_body =
                        retry_after.and_then(|after| wire.with_retry_info(body.clone(), after));
                    if in_body.is_some() {
                        retry_after = None;
                    }
                    crate::wire::json_text(&in_body.unwrap_or(body))
                }
            };
            let mut response = Response::new(Body::from(text));
            *response.status_mut() = code;
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if let Some(retry_after) = retry_after
                && let Ok(value) = HeaderValue::from_str(retry_after)
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return response;
        }
        Some(Fault::ContextOverflow {
            prompt_tokens,
            max_tokens,
        }) => {
            sleep(delay).await;
            let (status, body) = wire.overflow(*prompt_tokens, *max_tokens);
            let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
            return json_response(code, &body);
        }
        _ => {}
    }

    if !stream {
        sleep(delay).await;
        return complete(wire, &turn, &ctx);
    }

    let frames = wire.stream(&turn, &ctx);
    let pieces = apply_fault(wire, frames, turn.fault.as_ref(), &ctx);
    let body = futures::stream::iter(pieces).then(move |piece| async move {
        sleep(delay).await;
        match piece {
            Piece::Data(text) => Ok(Bytes::from(text)),
            Piece::Abort => {
                flush_pause().await;
                Err(disconnect())
            }
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(wire.stream_content_type()),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A non-streamed reply, with the stream faults' non-streamed meaning.
fn complete(wire: &dyn Wire, turn: &Turn, ctx: &Ctx) -> Response {
    let text = crate::wire::json_text(&wire.complete(turn, ctx));
    let half: String = text.chars().take(text.chars().count() / 2).collect();
    let mut response = match &turn.fault {
        Some(Fault::Disconnect { .. }) => {
            let pieces = vec![Some(Bytes::from(half)), None];
            let body = futures::stream::iter(pieces).then(|piece| async move {
                match piece {
                    Some(bytes) => Ok(bytes),
                    None => {
                        flush_pause().await;
                        Err(disconnect())
                    }
                }
            });
            Response::new(Body::from_stream(body))
        }
        Some(Fault::Malformed { .. }) => Response::new(Body::from(half)),
        Some(Fault::StreamError { message, .. }) => {
            return json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &wire.error_body(500, message),
            );
        }
        _ => Response::new(Body::from(text)),
    };
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Where a fault counting `after` content deltas cuts the frames: just before the
/// `after + 1`-th delta, or right after the last delta when there are no more.
fn cut_point(frames: &[Frame], after: usize) -> usize {
    let mut seen = 0;
    let mut after_last = None;
    for (index, frame) in frames.iter().enumerate() {
        if frame.delta {
            if seen == after {
                return index;
            }
            seen += 1;
            after_last = Some(index + 1);
        }
    }
    after_last.unwrap_or_else(|| frames.len().saturating_sub(1))
}

fn apply_fault(
    wire: &dyn Wire,
    frames: Vec<Frame>,
    fault: Option<&Fault>,
    ctx: &Ctx,
) -> Vec<Piece> {
    let mut texts: Vec<Piece> = Vec::with_capacity(frames.len() + 2);
    match fault {
        Some(Fault::Disconnect { after }) => {
            let cut = cut_point(&frames, *after);
            texts.extend(frames.into_iter().take(cut).map(|f| Piece::Data(f.text)));
            texts.push(Piece::Abort);
        }
        Some(Fault::Malformed { after }) => {
            let cut = cut_point(&frames, *after);
            for (index, frame) in frames.into_iter().enumerate() {
                if index == cut {
                    texts.push(Piece::Data(wire.malformed_frame()));
                }
                texts.push(Piece::Data(frame.text));
            }
        }
        Some(Fault::StreamError { after, message }) => {
            let cut = cut_point(&frames, *after);
            texts.extend(frames.into_iter().take(cut).map(|f| Piece::Data(f.text)));
            texts.extend(wire.stream_error(message, ctx).into_iter().map(Piece::Data));
        }
        _ => texts.extend(frames.into_iter().map(|f| Piece::Data(f.text))),
    }
    texts
}

pub(super) fn disconnect() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "fake-llm: scripted disconnect",
    )
}

/// Lets hyper write the headers and the frames before the cut, so the client sees a
/// started reply that breaks off rather than no reply at all.
pub(super) async fn flush_pause() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

pub(super) async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(flags: &[bool]) -> Vec<Frame> {
        flags
            .iter()
            .enumerate()
            .map(|(i, &delta)| Frame {
                text: i.to_string(),
                delta,
            })
            .collect()
    }

    #[test]
    fn cut_point_counts_deltas() {
        let f = frames(&[false, true, true, false, true, false, false]);
        assert_eq!(cut_point(&f, 0), 1);
        assert_eq!(cut_point(&f, 1), 2);
        assert_eq!(cut_point(&f, 2), 4);
        assert_eq!(cut_point(&f, 3), 5);
        assert_eq!(cut_point(&f, 9), 5);
        assert_eq!(cut_point(&frames(&[false, false]), 0), 1);
    }
}
