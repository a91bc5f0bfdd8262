//! Scripted fake LLM servers for tests: one HTTP server on `127.0.0.1` that speaks the
//! OpenAI, OpenRouter, Anthropic, Gemini, Azure OpenAI, Vertex AI and Ollama wire formats, replies from a queue of scripted
//! turns, injects faults, and records every request for assertions.
//!
//! Every provider, ybs and bb7 test runs against it instead of the network, in process with
//! [`FakeLlm`] or as a separate process with the `fake-llm` binary.
//!
//! # Layout
//!
//! - `script`: what a test scripts ([`Script`], [`Turn`], [`Fault`], the models), also the
//!   JSON format of `fake-llm`.
//! - `openai`, `responses`, `anthropic`, `gemini`, `azure`, `ollama`: each renders a turn in its wire format, behind the
//!   `Wire` trait of `wire`.
//! - `server/`: the HTTP server ([`FakeLlm`]): routing and recording, chat replies with their
//!   faults, model lists, the `/_fake/` control endpoints.
//! - `mcp` and `bin/`: the fake MCP server, and the `fake-llm` and `fake-mcp` binaries.
//! - `web`: a fake web site ([`FakeWeb`]) for tools that fetch pages.
//!
//! ```
//! use ybs_testkit::{FakeLlm, Fault, Script, ToolCall, Turn, Usage};
//!
//! let server = FakeLlm::start(Script::new([
//!     Turn::text(["Hel", "lo"]).with_usage(Usage::new(12, 2)),
//!     Turn::default()
//!         .with_thinking(["Let me ", "look."])
//!         .with_signature("sig-1")
//!         .with_tool_call(ToolCall::new("call_1", "read_file", serde_json::json!({"path": "a.txt"})).in_fragments(3)),
//!     Turn::fault(Fault::rate_limited(2)),
//! ]))?;
//! let base = server.base_url(); // http://127.0.0.1:PORT
//! assert!(base.starts_with("http://127.0.0.1:"));
//! // ... point a client at `base`, then assert on what it sent:
//! assert!(server.requests().is_empty());
//! assert_eq!(server.remaining_turns(), 3);
//! server.push_turn(Turn::text(["one more"]));
//! # Ok::<(), ybs_testkit::Error>(())
//! ```
//!
//! # Endpoints
//!
//! | endpoint | wire format |
//! |---|---|
//! | `POST /v1/chat/completions` | OpenAI chat completions; SSE when `"stream": true`, usage chunk when `stream_options.include_usage` |
//! | `POST /api/v1/chat/completions` | the same as OpenRouter: `: OPENROUTER PROCESSING` comment first, usage with `cost` always in the last chunk |
//! | `GET /v1/models` | OpenAI model list |
//! | `GET /api/v1/models` | OpenRouter model list (`id`, `name`, `context_length`, `pricing` as strings, `supported_parameters`) |
//! | `GET /api/v1/credits` | OpenRouter `{"data":{"total_credits":..,"total_usage":..}}` |
//! | `POST /v1/responses` | OpenAI Responses; SSE with `event:` lines when `"stream": true`, ids `resp_fake_N`, a turn's web searches as `web_search_call` items |
//! | `POST /v1/messages` | Anthropic Messages; SSE with `event:` lines when `"stream": true` |
//! | `POST /api/chat` | Ollama chat; NDJSON unless `"stream": false` |
//! | `POST /v1beta/models/{model}:streamGenerateContent` (`?alt=sse`), `:generateContent` | Gemini API; SSE `data:` lines each a whole response, no terminator; function calls whole and without ids; errors `{"error":{"code","message","status"}}`, a rate limit's wait as a `RetryInfo` detail |
//! | `GET /v1beta/models` | Gemini model list (`models/ID`, `inputTokenLimit`, `outputTokenLimit`, `supportedGenerationMethods`) |
//! | `POST /openai/deployments/{name}/chat/completions?api-version=V`, `POST /openai/v1/chat/completions` | Azure OpenAI chat: OpenAI's stream after a `prompt_filter_results` chunk; 404 without `api-version` at a deployment, 401 without `api-key` or bearer token; Azure's errors `{"error":{"code":"429","message"}}` |
//! | `POST /openai/v1/responses`, `GET /openai/v1/models`, `GET /openai/models?api-version=V` | Azure OpenAI Responses (OpenAI's) and model list |
//! | `POST /v1/projects/{p}/locations/{r}/publishers/google/models/{model}:streamGenerateContent`, `.../publishers/anthropic/models/{model}:streamRawPredict` | Vertex AI: Gemini's and Anthropic's wire formats; 401 `UNAUTHENTICATED` without a bearer token from `/token` |
//! | `POST /token` | Google's OAuth token endpoint: a service account's JWT (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) or a refresh token for `{"access_token":"ya29.fake-N","expires_in":3599}`; `invalid_grant` otherwise |
//! | `GET /api/tags`, `POST /api/show` | Ollama model list and details (`model_info["<arch>.context_length"]`) |
//! | `GET /props`, `POST /tokenize` | llama.cpp's window (`default_generation_settings.n_ctx`) and token count, only with a script `window` |
//! | `GET /api/v0/models`, `GET /api/v0/models/{id}` | LM Studio's own model list and entry (`max_context_length`, `loaded_context_length` when loaded), only with a script `lm_studio` |
//!
//! Each chat request takes the next turn from the queue and renders it in the format of the
//! endpoint hit. When the queue is empty the reply is HTTP 500 with the provider's error shape
//! and a message saying the script is exhausted, so tests fail loudly. Unknown routes get 404.
//! Timestamps (`created`, `created_at`) are fixed, so replies are deterministic; ids are
//! `chatcmpl-fake-N` / `msg_fake_N`, N the chat request number. JSON object keys come out
//! sorted (serde_json's default map), which JSON clients must not care about.
//!
//! Thinking is rendered as OpenRouter sends it on both OpenAI paths: `delta.reasoning` plus
//! `delta.reasoning_details: [{"type":"reasoning.text","text":..,"format":..,"index":0}]`, and
//! the signature in a last `reasoning_details` entry. Anthropic sends a `thinking` block
//! (`thinking_delta`s, then a `signature_delta`). Ollama sends `message.thinking` (no
//! signature).
//!
//! # Control endpoints
//!
//! For other processes (end-to-end tests that spawn `bb7`/`ybs` against `fake-llm`):
//!
//! - `GET /_fake/requests`: the recorded requests, a JSON array of [`RecordedRequest`]
//!   (`method`, `path`, `query`, `headers` with lowercase names, `body` as JSON).
//! - `DELETE /_fake/requests`: forget them.
//! - `GET /_fake/turns`: `{"remaining": n, "turns": [...]}`.
//! - `POST /_fake/turns`: append a turn, an array of turns, or `{"turns": [...]}`; answers
//!   `{"added": n, "remaining": m}`.
//!
//! Requests to `/_fake/` are not recorded.
//!
//! # Script format
//!
//! The JSON format is the serde form of [`Script`] (a bare array of turns is accepted too):
//!
//! ```json
//! {
//!   "models": [{"id": "fake-model", "context_length": 32000}],
//!   "credits": {"total_credits": 10.0, "total_usage": 2.5},
//!   "turns": [
//!     {"text": ["Hel", "lo"], "usage": {"prompt_tokens": 12, "completion_tokens": 2}},
//!     {"thinking": ["Let me ", "look."], "signature": "sig-1",
//!      "tool_calls": [{"id": "call_1", "name": "read_file",
//!                      "arguments": {"path": "a.txt"}, "fragments": 3}],
//!      "usage": {"prompt_tokens": 30, "completion_tokens": 9, "cached_tokens": 10,
//!                "reasoning_tokens": 4, "cost": 0.00012}},
//!     {"text": ["slow"], "delay_ms": 200},
//!     {"fault": {"kind": "status", "status": 429, "retry_after": "2"}},
//!     {"text": ["a", "b", "c"], "fault": {"kind": "disconnect", "after": 2}},
//!     {"text": ["a", "b"], "fault": {"kind": "malformed", "after": 1}},
//!     {"text": ["a"], "fault": {"kind": "stream_error", "after": 1, "message": "Overloaded"}},
//!     {"fault": {"kind": "context_overflow", "prompt_tokens": 140000, "max_tokens": 128000}}
//!   ]
//! }
//! ```
//!
//! Turn fields, all optional: `thinking` (chunks, or one string), `signature`, `text`
//! (chunks, or one string),
//! `tool_calls` (`id`, `name`, `arguments`: an object, or a string sent verbatim, which may
//! be invalid JSON; `fragments`: how many pieces the streamed arguments are split into,
//! default 1), `usage` (`prompt_tokens` including cached ones, `completion_tokens`,
//! `cached_tokens`, `cache_write_tokens` (Anthropic only), `reasoning_tokens`, `cost`), `finish` (`stop`, `length`, `tool_calls`,
//! `content_filter`; default `tool_calls` if there are tool calls, else `stop`), `delay_ms`
//! (before each streamed frame, or once before a non-streamed reply), `fault`.
//!
//! `"window": {"n_ctx": 4096, "bytes_per_token": 4.0}` makes the server a small llama.cpp:
//! `/props` and `/v1/models` (`meta.n_ctx`) announce the window, `/tokenize` counts by it, and
//! a chat request whose JSON body is larger than the window is refused with HTTP 400
//! `{"error":{"code":400,"message":"request (N tokens) exceeds the available context size
//! (M tokens), try increasing it","type":"exceed_context_size_error",..}}` without using a
//! turn.
//!
//! `"lm_studio": true` makes it answer LM Studio's own `/api/v0/models` too: each model's
//! `context_length` as `max_context_length`, and its `loaded_context_length` when it has one.
//!
//! Model fields: `id`, `name`, `context_length`, `max_completion_tokens`, `prompt_price`, `completion_price`
//! (decimal strings, dollars per token), `supported_parameters`, `architecture` (Ollama),
//! `loaded_context_length` (LM Studio).
//!
//! # Faults
//!
//! "Content deltas" are the frames that carry scripted content: each thinking chunk, the
//! signature, each text chunk, each tool call's first frame (OpenAI header delta, Anthropic
//! `tool_use` block start, Ollama's tool-call line) and each arguments fragment. Frames
//! without content (role chunk, block starts/stops, ping, finish, usage, terminators) are
//! not counted but are sent when they come before the cut.
//!
//! - `status`: HTTP `status` with `body` verbatim, or the provider's error shape (OpenAI
//!   `{"error":{"message","type","param","code"}}`, OpenRouter `{"error":{"code","message"}}`,
//!   Anthropic `{"type":"error","error":{"type","message"}}`, Ollama `{"error":".."}`), plus a
//!   `Retry-After` header when `retry_after` is set. Streamed or not.
//! - `context_overflow`: the provider's real overflow error, always HTTP 400:
//!   OpenAI `{"error":{"message":"This model's maximum context length is M tokens. However,
//!   your messages resulted in N tokens. ...","type":"invalid_request_error","param":"messages",
//!   "code":"context_length_exceeded"}}`; OpenRouter `{"error":{"message":"This endpoint's
//!   maximum context length is M tokens. However, you requested about N tokens ...",
//!   "code":400,"metadata":{"provider_name":null}}}`; Anthropic `{"type":"error","error":
//!   {"type":"invalid_request_error","message":"prompt is too long: N tokens > M maximum"}}`;
//!   Ollama (with `"truncate": false`) `{"error":"prompt too long; exceeded max context
//!   length by N-M tokens"}`.
//! - `disconnect` (`after` N deltas): streamed, the frames before the N+1-th delta are sent
//!   and the connection is dropped (no `[DONE]`, no `message_stop`, no `done: true`, and no
//!   final chunk of the chunked body, so the client sees an error). Not streamed, half of the
//!   JSON body is sent, then the connection is dropped.
//! - `malformed` (`after` N deltas): streamed, a frame whose data is invalid JSON is inserted
//!   before the N+1-th delta and the stream goes on to its normal end (`data: {...` for SSE,
//!   an Anthropic `content_block_delta` event with a broken data line, a broken NDJSON line
//!   for Ollama). Not streamed, the body is the first half of the JSON (HTTP 200).
//! - `stream_error` (`after` N deltas): streamed, the provider's in-stream error ends the
//!   stream: OpenRouter a chunk with `"error":{"code":"server_error","message"}` and
//!   `finish_reason: "error"`; OpenAI `data: {"error":{...}}`; Anthropic `event: error` with an
//!   `overloaded_error`; Ollama a `{"error":".."}` line. Not streamed, HTTP 500 with the
//!   provider's error shape.
//!
//! A cut "before the N+1-th delta" falls right after the last delta when the turn has N or
//! fewer deltas (before the finish/usage/terminator frames).
//!
//! # fake-llm
//!
//! `fake-llm [SCRIPT.json] [--port N]` loads the script (an empty queue without one), listens
//! on `127.0.0.1` (an ephemeral port unless `--port`), prints `http://127.0.0.1:PORT` as its
//! first stdout line, flushed, and serves until killed. `examples/hello.json` is a small
//! script.
//!
//! # fake-mcp
//!
//! [`mcp`] is a small deterministic MCP server (tools `echo`, `add`, `fail`, `whoami`) for
//! testing MCP clients, in process or as the `fake-mcp` binary: `fake-mcp [--name NAME]
//! [--record FILE] [--http 127.0.0.1:PORT] [--fail-start]`. Without `--http` it serves one
//! session on stdin/stdout; with it, it prints `listening on http://127.0.0.1:PORT/mcp` as its
//! only stdout line, flushed, and serves streamable HTTP until killed. `--fail-start` exits
//! with status 1 and a message on stderr before speaking MCP.

mod anthropic;
mod azure;
pub mod bedrock;
mod gemini;
mod listing;
pub mod mcp;
pub mod oauth;
mod ollama;
mod openai;
mod responses;
mod script;
mod server;
mod vertex;
pub mod web;
mod wire;

use std::path::{Path, PathBuf};

pub use listing::{Credits, Model};
pub use script::{Fault, FinishReason, Script, ToolCall, Turn, Usage, Window};
pub use server::{FakeLlm, RecordedRequest};
pub use vertex::service_account_file;
pub use web::FakeWeb;
pub use wire::json_text;

/// What can go wrong starting a fake server or loading a script.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listening socket could not be set up.
    #[error("cannot listen on 127.0.0.1:{port}: {source} (pick another port, or 0 for any)")]
    Bind {
        /// The port asked for (0: ephemeral).
        port: u16,
        /// The cause.
        source: std::io::Error,
    },
    /// The server thread or its runtime could not be started.
    #[error("cannot start the fake LLM server thread: {0}")]
    Runtime(std::io::Error),
    /// The script file could not be read.
    #[error("cannot read script {path}: {source}")]
    ReadScript {
        /// The script path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The script file is not a valid script.
    #[error("invalid script {path}: {source} (see the ybs-testkit docs for the format)")]
    ParseScript {
        /// The script path.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

impl Script {
    /// Loads a script from a JSON file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadScript {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text).map_err(|source| Error::ParseScript {
            path: path.to_owned(),
            source,
        })
    }
}

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
