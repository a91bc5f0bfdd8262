//! Ollama chat (`POST /api/chat`).
//!
//! Streams are NDJSON: one JSON object per line with `done: false`, then a final object with
//! `done: true`, `done_reason`, token counts and durations. Thinking arrives in
//! `message.thinking`, tool calls whole in `message.tool_calls` with `function.arguments` as
//! an object.

use serde_json::{Map, Value, json};

use crate::script::{FinishReason, ToolCall, Turn};
use crate::wire::{CREATED_AT, Ctx, Frame, Wire};

/// The Ollama wire format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ollama;

fn done_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Length => "length",
        FinishReason::Stop | FinishReason::ToolCalls | FinishReason::ContentFilter => "stop",
    }
}

fn line(value: &Value) -> String {
    format!("{}\n", crate::wire::json_text(value))
}

fn tool_call(index: usize, call: &ToolCall) -> Value {
    let mut function = Map::new();
    if index > 0 {
        function.insert("index".to_owned(), json!(index));
    }
    function.insert("name".to_owned(), json!(call.name));
    function.insert("arguments".to_owned(), call.arguments_value());
    let mut out = Map::new();
    if !call.id.is_empty() {
        out.insert("id".to_owned(), json!(call.id));
    }
    out.insert("function".to_owned(), Value::Object(function));
    Value::Object(out)
}

impl Ollama {
    fn object(ctx: &Ctx, message: Value, done: bool) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("model".to_owned(), json!(ctx.model));
        map.insert("created_at".to_owned(), json!(CREATED_AT));
        map.insert("message".to_owned(), message);
        map.insert("done".to_owned(), json!(done));
        map
    }

    fn finish(turn: &Turn, map: &mut Map<String, Value>) {
        let usage = turn.usage_or_default();
        let fields = [
            ("done_reason", json!(done_reason(turn.finish_reason()))),
            ("total_duration", json!(101_000_000u64)),
            ("load_duration", json!(1_000_000u64)),
            ("prompt_eval_count", json!(usage.prompt_tokens)),
            ("prompt_eval_duration", json!(20_000_000u64)),
            ("eval_count", json!(usage.completion_tokens)),
            ("eval_duration", json!(80_000_000u64)),
        ];
        for (key, value) in fields {
            map.insert(key.to_owned(), value);
        }
    }
}

impl Wire for Ollama {
    fn stream_content_type(&self) -> &'static str {
        "application/x-ndjson"
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let mut frames = Vec::new();
        for chunk in &turn.thinking {
            let message = json!({"role": "assistant", "content": "", "thinking": chunk});
            frames.push(Frame::delta(line(&Value::Object(Self::object(
                ctx, message, false,
            )))));
        }
        for chunk in &turn.text {
            let message = json!({"role": "assistant", "content": chunk});
            frames.push(Frame::delta(line(&Value::Object(Self::object(
                ctx, message, false,
            )))));
        }
        for (index, call) in turn.tool_calls.iter().enumerate() {
            let message = json!({
                "role": "assistant",
                "content": "",
                "tool_calls": [tool_call(index, call)],
            });
            frames.push(Frame::delta(line(&Value::Object(Self::object(
                ctx, message, false,
            )))));
        }
        let mut last = Self::object(ctx, json!({"role": "assistant", "content": ""}), true);
        Self::finish(turn, &mut last);
        frames.push(Frame::other(line(&Value::Object(last))));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        message.insert("content".to_owned(), json!(turn.text.concat()));
        if !turn.thinking.is_empty() {
            message.insert("thinking".to_owned(), json!(turn.thinking.concat()));
        }
        if !turn.tool_calls.is_empty() {
            let calls: Vec<Value> = turn
                .tool_calls
                .iter()
                .enumerate()
                .map(|(index, call)| tool_call(index, call))
                .collect();
            message.insert("tool_calls".to_owned(), json!(calls));
        }
        let mut out = Self::object(ctx, Value::Object(message), true);
        Self::finish(turn, &mut out);
        Value::Object(out)
    }

    fn malformed_frame(&self) -> String {
        "{\"model\":\"fake\",\"message\":{\"role\":\"assistant\",\"content\":\n".to_owned()
    }

    fn stream_error(&self, message: &str, _ctx: &Ctx) -> Vec<String> {
        vec![line(&json!({"error": message}))]
    }

    fn error_body(&self, _status: u16, message: &str) -> Value {
        json!({"error": message})
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        let over = prompt_tokens.saturating_sub(max_tokens);
        (
            400,
            json!({"error": format!("prompt too long; exceeded max context length by {over} tokens")}),
        )
    }
}
