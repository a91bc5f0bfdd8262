//! Amazon Bedrock's routes: the signature checked first, then the next scripted turn as a
//! Converse reply or a ConverseStream event stream, with its fault.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;

use super::chat::{disconnect, flush_pause, sleep};
use super::state::Shared;
use crate::bedrock::{self, Received};
use crate::script::Fault;

/// A Bedrock error: the exception in `x-amzn-errortype`, `{"message"}` as the body.
fn error(status: u16, exception: &str, message: &str, retry_after: Option<&str>) -> Response {
    let body = crate::wire::json_text(&bedrock::error_body(message));
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(value) = HeaderValue::from_str(&bedrock::error_type(exception)) {
        headers.insert("x-amzn-errortype", value);
    }
    if let Some(value) = retry_after.and_then(|after| HeaderValue::from_str(after).ok()) {
        headers.insert(header::RETRY_AFTER, value);
    }
    response
}

/// Whether the request is signed by the fake's keys; the refusal when not.
pub(super) fn check(
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let received = Received {
        method,
        path_and_query,
        header: &header,
        body,
    };
    let (status, exception, message) = bedrock::refusal(&received)?;
    Some(error(status, exception, &message, None))
}

/// `POST /model/{model}/converse` or `/converse-stream`.
pub(super) async fn converse(shared: &Shared, path: &str, streams: bool) -> Response {
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
        return error(500, "InternalServerException", &message, None);
    };
    let delay = Duration::from_millis(turn.delay_ms);
    match &turn.fault {
        Some(Fault::Status {
            status,
            body,
            retry_after,
        }) => {
            sleep(delay).await;
            let exception = bedrock::exception(*status);
            let message = match body {
                Some(raw) => raw.clone(),
                None => format!("fake-llm: scripted HTTP {status}"),
            };
            return error(*status, exception, &message, retry_after.as_deref());
        }
        Some(Fault::ContextOverflow { .. }) => {
            sleep(delay).await;
            return error(400, "ValidationException", bedrock::TOO_LONG, None);
        }
        _ => {}
    }
    if !streams {
        sleep(delay).await;
        let text = crate::wire::json_text(&bedrock::complete(&turn));
        let mut response = Response::new(Body::from(text));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return response;
    }
    let frames = bedrock::stream(&turn);
    // Where a fault counting `after` content frames cuts the stream.
    let cut = |after: usize| {
        let mut seen = 0;
        (frames.iter().position(|(_, content)| {
            seen += usize::from(*content);
            *content && seen > after
        }))
        .unwrap_or(frames.len().saturating_sub(2))
    };
    let mut pieces: Vec<Option<Vec<u8>>> = Vec::new();
    match &turn.fault {
        Some(Fault::Disconnect { after }) => {
            let at = cut(*after);
            pieces.extend(frames[..at].iter().map(|(bytes, _)| Some(bytes.clone())));
            pieces.push(None);
        }
        Some(Fault::Malformed { after }) => {
            let at = cut(*after);
            pieces.extend(frames[..at].iter().map(|(bytes, _)| Some(bytes.clone())));
            // A message whose CRC does not match its bytes.
            let mut broken = frames[at].0.clone();
            if let Some(last) = broken.last_mut() {
                *last ^= 0xff;
            }
            pieces.push(Some(broken));
        }
        Some(Fault::StreamError { after, message }) => {
            let at = cut(*after);
            pieces.extend(frames[..at].iter().map(|(bytes, _)| Some(bytes.clone())));
            pieces.push(Some(bedrock::exception_event(
                "modelStreamErrorException",
                message,
            )));
        }
        _ => pieces.extend(frames.into_iter().map(|(bytes, _)| Some(bytes))),
    }
    let body = futures::stream::iter(pieces).then(move |piece| async move {
        sleep(delay).await;
        match piece {
            Some(bytes) => Ok(Bytes::from(bytes)),
            None => {
                flush_pause().await;
                Err(disconnect())
            }
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/vnd.amazon.eventstream"),
    );
    response
}

/// `GET /foundation-models`: the script's models.
pub(super) fn foundation_models(shared: &Shared) -> Response {
    let ids: Vec<String> = (shared.lock().models.iter())
        .map(|model| model.id.clone())
        .collect();
    super::respond::json_response(StatusCode::OK, &bedrock::foundation_models(&ids))
}
