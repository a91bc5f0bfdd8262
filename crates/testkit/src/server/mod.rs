//! The HTTP server: the [`FakeLlm`] handle and its thread, routing, and request recording.
//! Below it: the chat replies with their faults (`chat`), the model lists (`models`), the
//! control endpoints (`control`), over the state they share (`state`).

mod bedrock_route;
mod chat;
mod control;
mod models;
mod respond;
mod state;

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::Error;
use crate::anthropic::Anthropic;
use crate::azure::{self, AzureChat};
use crate::gemini::{Gemini, content_path};
use crate::ollama::Ollama;
use crate::openai::OpenAi;
use crate::responses::Responses;
use crate::script::{Script, Turn};
use crate::vertex;
use chat::chat;
use control::control_endpoint;
use models::{
    gemini_models, lm_studio_models, models_delay, ollama_show, ollama_tags, openai_models,
    openrouter_models, props, tokenize,
};
use respond::json_response;
use state::Shared;

pub use state::RecordedRequest;

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
        let shared = Arc::new(Shared::new(script));
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
    // Bedrock checks the signature over the exact bytes before anything else.
    let bedrock_route = crate::bedrock::model_path(&path);
    if bedrock_route.is_some() || (method == "GET" && path == "/foundation-models") {
        let path_and_query = parts
            .uri
            .path_and_query()
            .map_or(path.as_str(), |p| p.as_str());
        if let Some(refusal) =
            bedrock_route::check(method.as_str(), path_and_query, &parts.headers, &bytes)
        {
            return refusal;
        }
        return match bedrock_route {
            Some((_, streams)) => bedrock_route::converse(&shared, &path, streams).await,
            None => bedrock_route::foundation_models(&shared),
        };
    }
    // Gemini names the model and whether to stream in the path, not in the body.
    if method == "POST"
        && let Some((model, streams)) = content_path(&path)
    {
        let mut body = body;
        if let Value::Object(fields) = &mut body {
            fields.insert("model".to_owned(), json!(model));
            fields.insert("stream".to_owned(), json!(streams));
        }
        return chat(&shared, &Gemini, &path, &body).await;
    }
    if method == "POST"
        && let Some(target) = vertex::model_path(&path)
    {
        let bearer = parts
            .headers
            .get("authorization")
            .and_then(|value| value.to_str().ok());
        if !vertex::authorized(bearer) {
            return json_response(StatusCode::UNAUTHORIZED, &vertex::unauthenticated());
        }
        let mut body = body;
        if let Value::Object(fields) = &mut body {
            fields.insert("model".to_owned(), json!(target.model));
            fields.insert("stream".to_owned(), json!(target.streams));
        }
        return match target.publisher.as_str() {
            "google" => chat(&shared, &Gemini, &path, &body).await,
            _ => chat(&shared, &Anthropic, &path, &body).await,
        };
    }
    if method == "GET"
        && let Some(publisher) = vertex::list_path(&path)
    {
        let bearer = (parts.headers.get("authorization")).and_then(|value| value.to_str().ok());
        if !vertex::authorized(bearer) {
            return json_response(StatusCode::UNAUTHORIZED, &vertex::unauthenticated());
        }
        let ids: Vec<String> = (shared.lock().models.iter())
            .map(|model| model.id.clone())
            .collect();
        return json_response(StatusCode::OK, &vertex::publisher_models(publisher, &ids));
    }
    if method == "POST" && path == "/token" {
        let issued = shared.lock().requests.len() as u64;
        let (status, answer) = vertex::token(body.as_str().unwrap_or_default(), issued);
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
        return json_response(status, &answer);
    }
    if let Some(route) = azure::route(&path, parts.uri.query()) {
        return azure_route(&shared, route, &parts.headers, &path, body).await;
    }
    match (method.as_str(), path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            chat(&shared, &OpenAi { openrouter: false }, &path, &body).await
        }
        ("POST", "/api/v1/chat/completions") => {
            chat(&shared, &OpenAi { openrouter: true }, &path, &body).await
        }
        ("POST", "/v1/responses") => chat(&shared, &Responses, &path, &body).await,
        ("POST", "/v1/messages") => chat(&shared, &Anthropic, &path, &body).await,
        ("POST", "/api/chat") => chat(&shared, &Ollama, &path, &body).await,
        ("GET", "/v1/models") => {
            models_delay(&shared).await;
            json_response(StatusCode::OK, &openai_models(&shared))
        }
        ("GET", "/v1beta/models") => {
            models_delay(&shared).await;
            json_response(StatusCode::OK, &gemini_models(&shared))
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
        ("GET", "/props") => props(&shared),
        ("GET", "/api/v0/models") => lm_studio_models(&shared, ""),
        ("GET", lm) if lm.starts_with("/api/v0/models/") => {
            let id = percent_encoding::percent_decode_str(&lm["/api/v0/models/".len()..])
                .decode_utf8_lossy()
                .into_owned();
            lm_studio_models(&shared, &id)
        }
        ("POST", "/tokenize") => tokenize(&shared, &body),
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("fake-llm: no route for {method} {path}")}),
        ),
    }
}

/// A request to an Azure OpenAI route: refused as Azure refuses it (no `api-version` where
/// one is needed, no key), else answered by the chat, Responses or model-list fake.
async fn azure_route(
    shared: &Shared,
    route: Result<azure::Route, (u16, Value)>,
    headers: &HeaderMap,
    path: &str,
    mut body: Value,
) -> Response {
    let refusal = |(status, body): (u16, Value)| {
        json_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            &body,
        )
    };
    let route = match route {
        Ok(route) => route,
        Err(refused) => return refusal(refused),
    };
    if !headers.contains_key("api-key") && !headers.contains_key("authorization") {
        return refusal(azure::unauthenticated());
    }
    match route {
        azure::Route::Chat { deployment } => {
            // A deployment serves its model whatever the body names.
            if let (Some(name), Value::Object(fields)) = (deployment, &mut body) {
                fields.insert("model".to_owned(), json!(name));
            }
            chat(shared, &AzureChat, path, &body).await
        }
        azure::Route::Responses => chat(shared, &Responses, path, &body).await,
        azure::Route::Models => json_response(StatusCode::OK, &openai_models(shared)),
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
