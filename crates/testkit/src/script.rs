//! The script: scripted turns and faults, and what the fake servers report besides (the
//! models and credits are in `listing.rs`).
//!
//! These types are the JSON file format of `fake-llm` too (see the crate docs).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::listing::{Credits, Model};

/// A whole script: the queue of replies plus what the listing endpoints report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Script {
    /// Replies, consumed one per chat request, in order.
    pub turns: Vec<Turn>,
    /// Models reported by `GET /v1/models`, `GET /api/v1/models`, `GET /api/tags` and
    /// `POST /api/show`.
    pub models: Vec<Model>,
    /// What `GET /api/v1/credits` reports.
    pub credits: Credits,
    /// How long the model-list endpoints wait before answering (a slow backend).
    pub models_delay_ms: u64,
    /// A context window the server enforces as llama.cpp's `llama-server` does: announced
    /// by `GET /props` and in `GET /v1/models` (`meta.n_ctx`), counted by `POST /tokenize`,
    /// and a chat request whose body is larger is refused with llama.cpp's error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Answer LM Studio's own `GET /api/v0/models` and `GET /api/v0/models/{id}`
    /// (`max_context_length`, and `loaded_context_length` for a model with
    /// [`Model::loaded_context_length`]); off, they are 404 as on other servers.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lm_studio: bool,
}

/// The window of [`Script::window`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Window {
    /// The window in tokens (`llama-server -c`).
    pub n_ctx: u64,
    /// How many bytes of a request's JSON body make one token (the whole body is counted,
    /// which is more than the prompt the model sees, so the check errs on the strict side).
    pub bytes_per_token: f64,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            n_ctx: 4096,
            bytes_per_token: 4.0,
        }
    }
}

impl Window {
    /// The tokens of `bytes` bytes.
    pub fn tokens(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.bytes_per_token.max(0.01)).ceil() as u64
    }
}

impl Default for Script {
    fn default() -> Self {
        Self {
            turns: Vec::new(),
            models: vec![Model::default()],
            credits: Credits::default(),
            models_delay_ms: 0,
            window: None,
            lm_studio: false,
        }
    }
}

impl Script {
    /// A script with these turns and the default model list.
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self {
            turns: turns.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Enforces a context window as llama.cpp does (see [`Script::window`]).
    #[must_use]
    pub fn with_window(mut self, window: Window) -> Self {
        self.window = Some(window);
        self
    }

    /// Answers LM Studio's `/api/v0/models` (see [`Script::lm_studio`]).
    #[must_use]
    pub fn with_lm_studio(mut self) -> Self {
        self.lm_studio = true;
        self
    }

    /// Replaces the model list.
    #[must_use]
    pub fn with_models(mut self, models: impl IntoIterator<Item = Model>) -> Self {
        self.models = models.into_iter().collect();
        self
    }

    /// Makes the model-list endpoints answer only after `delay_ms`.
    #[must_use]
    pub fn with_models_delay_ms(mut self, delay_ms: u64) -> Self {
        self.models_delay_ms = delay_ms;
        self
    }

    /// Replaces the credits.
    #[must_use]
    pub fn with_credits(mut self, total_credits: f64, total_usage: f64) -> Self {
        self.credits = Credits {
            total_credits,
            total_usage,
        };
        self
    }

    /// Parses a script from JSON: either a script object or a bare array of turns.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        if text.trim_start().starts_with('[') {
            let turns: Vec<Turn> = serde_json::from_str(text)?;
            Ok(Self::new(turns))
        } else {
            serde_json::from_str(text)
        }
    }
}

/// One scripted reply. It is rendered in the wire format of whichever endpoint was hit.
///
/// Parts are emitted in this order: thinking chunks (then the signature), text chunks, tool
/// calls. A turn with a [`Fault`] of kind `status` or `context_overflow` sends only the error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Turn {
    /// Reasoning ("thinking") chunks, one delta each (a single string is one chunk).
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub thinking: Vec<String>,
    /// Signature of the thinking (Anthropic `signature_delta`, OpenRouter
    /// `reasoning_details[].signature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Text chunks, one delta each (a single string is one chunk).
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub text: Vec<String>,
    /// Tool calls, after the text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Queries of hosted web searches the server runs before replying (OpenAI Responses
    /// `web_search_call` items; the other wire formats have none and leave them out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub web_searches: Vec<String>,
    /// Token usage and cost; zeros when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the reply ended; `tool_calls` when there are tool calls, else `stop`, when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<FinishReason>,
    /// Milliseconds to wait before each streamed frame (once before a non-streamed reply).
    #[serde(skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Something to go wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

/// Accepts `"text"` as well as `["te", "xt"]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Turn {
    /// A reply made of these text chunks.
    pub fn text<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        Self {
            text: chunks.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// A reply that is only this fault.
    pub fn fault(fault: Fault) -> Self {
        Self {
            fault: Some(fault),
            ..Self::default()
        }
    }

    /// A reply that is only one tool call (arguments in one fragment).
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::default().with_tool_call(ToolCall::new(id, name, arguments))
    }

    /// Adds thinking chunks (emitted before the text).
    #[must_use]
    pub fn with_thinking<S: Into<String>>(mut self, chunks: impl IntoIterator<Item = S>) -> Self {
        self.thinking.extend(chunks.into_iter().map(Into::into));
        self
    }

    /// Adds a hosted web search with this query (Responses wire format only).
    #[must_use]
    pub fn with_web_search(mut self, query: impl Into<String>) -> Self {
        self.web_searches.push(query.into());
        self
    }

    /// Sets the thinking signature.
    #[must_use]
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Adds text chunks.
    #[must_use]
    pub fn with_text<S: Into<String>>(mut self, chunks: impl IntoIterator<Item = S>) -> Self {
        self.text.extend(chunks.into_iter().map(Into::into));
        self
    }

    /// Adds a tool call.
    #[must_use]
    pub fn with_tool_call(mut self, call: ToolCall) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// Sets the usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Sets the finish reason.
    #[must_use]
    pub fn with_finish(mut self, finish: FinishReason) -> Self {
        self.finish = Some(finish);
        self
    }

    /// Sets the delay before each streamed frame.
    #[must_use]
    pub fn with_delay_ms(mut self, delay_ms: u64) -> Self {
        self.delay_ms = delay_ms;
        self
    }

    /// Sets the fault.
    #[must_use]
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// The finish reason, defaulted from the content.
    pub fn finish_reason(&self) -> FinishReason {
        self.finish.unwrap_or(if self.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        })
    }

    /// The usage, zeros when absent.
    pub fn usage_or_default(&self) -> Usage {
        self.usage.clone().unwrap_or_default()
    }
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Call id (`call_...` for OpenAI, `toolu_...` for Anthropic; anything goes). Ollama
    /// omits it when empty.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments. A JSON string is sent verbatim as the arguments text (so it can be
    /// invalid JSON); any other value is serialized compactly.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// How many fragments the arguments text is split into when streamed (at least 1).
    #[serde(default = "one")]
    pub fragments: usize,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn one() -> usize {
    1
}

impl ToolCall {
    /// A tool call whose arguments are streamed in one fragment.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            fragments: 1,
        }
    }

    /// Splits the streamed arguments into `n` fragments.
    #[must_use]
    pub fn in_fragments(mut self, n: usize) -> Self {
        self.fragments = n;
        self
    }

    /// The arguments as the text that goes on the wire.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }

    /// The arguments as a JSON value (for wire formats that send an object). Raw text that
    /// does not parse is sent as a JSON string.
    pub fn arguments_value(&self) -> Value {
        match &self.arguments {
            Value::String(raw) => {
                serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
            }
            other => other.clone(),
        }
    }

    /// The arguments text split into the configured number of fragments, on char
    /// boundaries, as evenly as possible. Never empty.
    pub fn argument_fragments(&self) -> Vec<String> {
        split_even(&self.arguments_text(), self.fragments.max(1))
    }
}

/// Splits `text` into at most `n` non-empty pieces of nearly equal char counts (one empty
/// piece when `text` is empty).
pub(crate) fn split_even(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = n.clamp(1, chars.len());
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[start..start + len].iter().collect());
        start += len;
    }
    out
}

/// Token usage of a turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    /// Prompt tokens, including cached ones (OpenAI semantics; Anthropic's `input_tokens`
    /// is rendered as `prompt_tokens - cached_tokens`).
    pub prompt_tokens: u64,
    /// Completion tokens, including reasoning tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from a cache.
    pub cached_tokens: u64,
    /// Prompt tokens written to the cache (Anthropic's `cache_creation_input_tokens`).
    pub cache_write_tokens: u64,
    /// Reasoning tokens among the completion tokens.
    pub reasoning_tokens: u64,
    /// Cost in credits (OpenRouter's `usage.cost`); omitted from the wire when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl Usage {
    /// Usage with these prompt and completion token counts.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            ..Self::default()
        }
    }

    /// Sets the cached prompt tokens.
    #[must_use]
    pub fn with_cached(mut self, cached_tokens: u64) -> Self {
        self.cached_tokens = cached_tokens;
        self
    }

    /// Sets the prompt tokens written to the cache.
    #[must_use]
    pub fn with_cache_write(mut self, cache_write_tokens: u64) -> Self {
        self.cache_write_tokens = cache_write_tokens;
        self
    }

    /// Sets the reasoning tokens.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning_tokens: u64) -> Self {
        self.reasoning_tokens = reasoning_tokens;
        self
    }

    /// Sets the cost.
    #[must_use]
    pub fn with_cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }
}

/// Why a reply ended, mapped to each wire format's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// Natural end: OpenAI `stop`, Anthropic `end_turn`, Ollama `stop`.
    Stop,
    /// Output token limit: OpenAI `length`, Anthropic `max_tokens`, Ollama `length`.
    Length,
    /// Tool calls: OpenAI `tool_calls`, Anthropic `tool_use`, Ollama `stop`.
    ToolCalls,
    /// Refused: OpenAI `content_filter`, Anthropic `refusal`, Ollama `stop`.
    ContentFilter,
}

/// Something that goes wrong with a turn. See the crate docs for how each is rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Reply with this HTTP status instead of the content.
    Status {
        /// HTTP status code.
        status: u16,
        /// Raw response body; when absent, the provider's own error shape for this status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        /// Value of a `Retry-After` header, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// Drop the connection after this many content deltas (no terminator).
    Disconnect {
        /// Content deltas sent before the drop.
        after: usize,
    },
    /// Send a frame whose data is invalid JSON after this many content deltas, then go on.
    Malformed {
        /// Content deltas sent before the bad frame.
        after: usize,
    },
    /// Send the provider's in-stream error event after this many content deltas and end
    /// the stream there.
    StreamError {
        /// Content deltas sent before the error.
        after: usize,
        /// Error message.
        #[serde(default = "overloaded")]
        message: String,
    },
    /// Reply with the provider's real context-overflow error.
    ContextOverflow {
        /// Tokens the request supposedly had.
        #[serde(default = "default_prompt_tokens")]
        prompt_tokens: u64,
        /// The model's supposed context window.
        #[serde(default = "default_max_tokens")]
        max_tokens: u64,
    },
}

fn overloaded() -> String {
    "Overloaded".to_owned()
}

fn default_prompt_tokens() -> u64 {
    140_000
}

fn default_max_tokens() -> u64 {
    128_000
}

impl Fault {
    /// An HTTP error with the provider's error body.
    pub fn status(status: u16) -> Self {
        Self::Status {
            status,
            body: None,
            retry_after: None,
        }
    }

    /// A 429 with the provider's error body and `Retry-After: seconds`.
    pub fn rate_limited(retry_after_seconds: u64) -> Self {
        Self::Status {
            status: 429,
            body: None,
            retry_after: Some(retry_after_seconds.to_string()),
        }
    }

    /// A context-overflow error with these token counts.
    pub fn context_overflow(prompt_tokens: u64, max_tokens: u64) -> Self {
        Self::ContextOverflow {
            prompt_tokens,
            max_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_even_keeps_all_chars() {
        assert_eq!(split_even("abcdefg", 3), vec!["abc", "de", "fg"]);
        assert_eq!(split_even("ab", 5), vec!["a", "b"]);
        assert_eq!(split_even("", 3), vec![""]);
        assert_eq!(split_even("héllo", 2), vec!["hél", "lo"]);
    }

    #[test]
    fn script_accepts_bare_array() {
        let script = Script::from_json(r#"[{"text":["a"]}]"#).unwrap();
        assert_eq!(script.turns, vec![Turn::text(["a"])]);
        assert_eq!(script.models, vec![Model::default()]);
    }

    #[test]
    fn text_may_be_one_string() {
        let turn: Turn = serde_json::from_str(r#"{"text":"hi","thinking":"hm"}"#).unwrap();
        assert_eq!(turn, Turn::text(["hi"]).with_thinking(["hm"]));
    }

    #[test]
    fn fault_json_is_tagged_by_kind() {
        let fault: Fault = serde_json::from_str(r#"{"kind":"disconnect","after":2}"#).unwrap();
        assert_eq!(fault, Fault::Disconnect { after: 2 });
        let json = serde_json::to_value(Fault::rate_limited(3)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind":"status","status":429,"retry_after":"3"})
        );
    }
}
