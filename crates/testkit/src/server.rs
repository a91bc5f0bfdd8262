//! The HTTP server: routing, request recording, the turn queue, and fault injection.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::Error;
use crate::anthropic::Anthropic;
use crate::ollama::Ollama;
use crate::openai::OpenAi;
use crate::script::{Credits, Fault, Model, Script, Turn};
use crate::wire::{CREATED, CREATED_AT, Ctx, Frame, Wire};

/// One request the server received (control endpoints under `/_fake/` are not recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path without the query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Headers, names lowercased; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON; `null` when empty, a JSON string when it is not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// State shared by the handlers and the [`FakeLlm`] handle.
#[derive(Debug, Default)]
struct Inner {
    turns: VecDeque<Turn>,
    requests: Vec<RecordedRequest>,
    models: Vec<Model>,
    models_delay_ms: u64,
    credits: Credits,
    chats: u64,
}

#[derive(Debug, Default)]
struct Shared {
    inner: Mutex<Inner>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave `Inner` half-updated in a way that
        // matters to a test double, so recover from poisoning.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running fake LLM server on `127.0.0.1`, serving every wire format at once.
///
/// It runs on its own thread with its own tokio runtime, so it works from plain `#[test]`s
/// and from `#[tokio::test]`s alike. Dropping it stops the server and drops open connections.
#[derive(Debug)]
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Starts a server on an ephemeral port.
    pub fn start(script: Script) -> Result<Self, Error> {
        Self::start_on(script, 0)
    }

    /// Starts a server on this port (0 for an ephemeral one).
    pub fn start_on(script: Script, port: u16) -> Result<Self, Error> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .map_err(|source| Error::Bind { port, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| Error::Bind { port, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| Error::Bind { port, source })?;
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                turns: script.turns.into(),
                requests: Vec::new(),
                models: script.models,
                models_delay_ms: script.models_delay_ms,
                credits: script.credits,
                chats: 0,
            }),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let (shutdown, stop) = oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<io::Result<()>>();
        let app = router(Arc::clone(&shared));
        let thread = std::thread::Builder::new()
            .name(format!("fake-llm-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => {
                            let _ = ready_tx.send(Ok(()));
                            listener
                        }
                        Err(err) => {
                            let _ = ready_tx.send(Err(err));
                            return;
                        }
                    };
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stop => {}
                    }
                });
            })
            .map_err(Error::Runtime)?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => return Err(Error::Bind { port, source }),
            Err(_) => {
                return Err(Error::Runtime(io::Error::other(
                    "the server thread ended before it started listening",
                )));
            }
        }
        Ok(Self {
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL joined with a path, e.g. `url("/v1/chat/completions")`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url(), path)
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The last request received, if any.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.shared.lock().requests.last().cloned()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// Appends a turn to the queue.
    pub fn push_turn(&self, turn: Turn) {
        self.shared.lock().turns.push_back(turn);
    }

    /// Appends turns to the queue.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = Turn>) {
        self.shared.lock().turns.extend(turns);
    }

    /// How many scripted turns are left.
    pub fn remaining_turns(&self) -> usize {
        self.shared.lock().turns.len()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(err) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!("fake-llm: cannot read request body: {err}")}),
            );
        }
    };
    let path = parts.uri.path().to_owned();
    let body = parse_body(&bytes);
    if let Some(control) = path.strip_prefix("/_fake/") {
        return control_endpoint(&shared, &parts.method, control, body);
    }
    shared.lock().requests.push(RecordedRequest {
        method: parts.method.to_string(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        headers: header_map(&parts.headers),
        body: body.clone(),
    });
    let method = &parts.method;
    match (method.as_str(), path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            chat(&shared, &OpenAi { openrouter: false }, &path, &body).await
        }
        ("POST", "/api/v1/chat/completions") => {
            chat(&shared, &OpenAi { openrouter: true }, &path, &body).await
        }
        ("POST", "/v1/messages") => chat(&shared, &Anthropic, &path, &body).await,
        ("POST", "/api/chat") => chat(&shared, &Ollama, &path, &body).await,
        ("GET", "/v1/models") => {
            models_delay(&shared).await;
            json_response(StatusCode::OK, &openai_models(&shared))
        }
        ("GET", "/api/v1/models") => {
            models_delay(&shared).await;
            json_response(StatusCode::OK, &openrouter_models(&shared))
        }
        ("GET", "/api/v1/credits") => {
            let credits = shared.lock().credits.clone();
            json_response(
                StatusCode::OK,
                &json!({"data": {
                    "total_credits": credits.total_credits,
                    "total_usage": credits.total_usage,
                }}),
            )
        }
        ("GET", "/api/tags") => json_response(StatusCode::OK, &ollama_tags(&shared)),
        ("POST", "/api/show") => ollama_show(&shared, &body),
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("fake-llm: no route for {method} {path}")}),
        ),
    }
}

fn parse_body(bytes: &Bytes) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|old| {
                old.push_str(", ");
                old.push_str(&value);
            })
            .or_insert(value);
    }
    out
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn control_endpoint(shared: &Shared, method: &Method, control: &str, body: Value) -> Response {
    match (method.as_str(), control) {
        ("GET", "requests") => {
            let requests = shared.lock().requests.clone();
            json_response(StatusCode::OK, &json!(requests))
        }
        ("DELETE", "requests") => {
            shared.lock().requests.clear();
            json_response(StatusCode::OK, &json!({"cleared": true}))
        }
        ("GET", "turns") => {
            let turns: Vec<Turn> = shared.lock().turns.iter().cloned().collect();
            json_response(
                StatusCode::OK,
                &json!({"remaining": turns.len(), "turns": turns}),
            )
        }
        ("POST", "turns") => match parse_turns(body) {
            Ok(turns) => {
                let mut inner = shared.lock();
                let added = turns.len();
                inner.turns.extend(turns);
                json_response(
                    StatusCode::OK,
                    &json!({"added": added, "remaining": inner.turns.len()}),
                )
            }
            Err(err) => json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!(
                    "fake-llm: POST /_fake/turns wants a turn, an array of turns or \
                     {{\"turns\": [...]}}: {err}"
                )}),
            ),
        },
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!(
                "fake-llm: no control endpoint {method} /_fake/{control} (try GET /_fake/requests, \
                 DELETE /_fake/requests, GET /_fake/turns, POST /_fake/turns)"
            )}),
        ),
    }
}

fn parse_turns(body: Value) -> Result<Vec<Turn>, serde_json::Error> {
    match body {
        Value::Array(_) => serde_json::from_value(body),
        Value::Object(ref map) if map.contains_key("turns") && map.len() == 1 => {
            let script: Script = serde_json::from_value(body)?;
            Ok(script.turns)
        }
        other => Ok(vec![serde_json::from_value(other)?]),
    }
}

/// What the response body streams: bytes, or a dropped connection.
enum Piece {
    Data(String),
    Abort,
}

async fn chat(shared: &Shared, wire: &dyn Wire, path: &str, body: &Value) -> Response {
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
            let text = match body {
                Some(raw) => raw.clone(),
                None => wire
                    .error_body(*status, &format!("fake-llm: scripted HTTP {status}"))
                    .to_string(),
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
    let text = wire.complete(turn, ctx).to_string();
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

fn disconnect() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "fake-llm: scripted disconnect",
    )
}

/// Lets hyper write the headers and the frames before the cut, so the client sees a
/// started reply that breaks off rather than no reply at all.
async fn flush_pause() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Waits as long as the script's `models_delay_ms`.
async fn models_delay(shared: &Shared) {
    let delay = shared.lock().models_delay_ms;
    if delay > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
    }
}

fn openai_models(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let data: Vec<Value> = models
        .iter()
        .map(|m| json!({"id": m.id, "object": "model", "created": CREATED, "owned_by": "fake-llm"}))
        .collect();
    json!({"object": "list", "data": data})
}

fn openrouter_models(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "canonical_slug": m.id,
                "name": m.display_name(),
                "created": CREATED,
                "description": "A scripted fake model for tests.",
                "context_length": m.context_length,
                "architecture": {
                    "modality": "text->text",
                    "input_modalities": ["text"],
                    "output_modalities": ["text"],
                    "tokenizer": "Other",
                    "instruct_type": null,
                },
                "pricing": {
                    "prompt": m.prompt_price,
                    "completion": m.completion_price,
                    "request": "0",
                    "image": "0",
                    "web_search": "0",
                    "internal_reasoning": "0",
                },
                "top_provider": {
                    "context_length": m.context_length,
                    "max_completion_tokens": null,
                    "is_moderated": false,
                },
                "per_request_limits": null,
                "supported_parameters": m.supported_parameters,
            })
        })
        .collect();
    json!({"data": data})
}

const FAKE_DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn ollama_details(model: &Model) -> Value {
    json!({
        "parent_model": "",
        "format": "gguf",
        "family": model.architecture,
        "families": [model.architecture],
        "parameter_size": "1B",
        "quantization_level": "Q4_K_M",
    })
}

fn ollama_tags(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "name": m.id,
                "model": m.id,
                "modified_at": CREATED_AT,
                "size": 1_000_000_000u64,
                "digest": FAKE_DIGEST,
                "details": ollama_details(m),
            })
        })
        .collect();
    json!({"models": data})
}

fn ollama_show(shared: &Shared, body: &Value) -> Response {
    let wanted = body
        .get("model")
        .or_else(|| body.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let models = shared.lock().models.clone();
    let strip = |name: &str| name.strip_suffix(":latest").unwrap_or(name).to_owned();
    let Some(model) = models.iter().find(|m| strip(&m.id) == strip(wanted)) else {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("model '{wanted}' not found")}),
        );
    };
    let mut info = serde_json::Map::new();
    info.insert("general.architecture".to_owned(), json!(model.architecture));
    info.insert(
        "general.parameter_count".to_owned(),
        json!(1_000_000_000u64),
    );
    info.insert(
        format!("{}.context_length", model.architecture),
        json!(model.context_length),
    );
    json_response(
        StatusCode::OK,
        &json!({
            "modelfile": format!("# Modelfile generated by fake-llm\nFROM {}\n", model.id),
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": ollama_details(model),
            "model_info": Value::Object(info),
            "capabilities": ["completion", "tools"],
            "modified_at": CREATED_AT,
        }),
    )
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

    #[test]
    fn control_turns_accept_three_shapes() {
        assert_eq!(parse_turns(json!({"text": ["a"]})).unwrap().len(), 1);
        assert_eq!(parse_turns(json!([{"text": ["a"]}, {}])).unwrap().len(), 2);
        assert_eq!(parse_turns(json!({"turns": [{}]})).unwrap().len(), 1);
        assert!(parse_turns(json!({"nope": 1})).is_err());
    }
}
