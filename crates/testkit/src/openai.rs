//! OpenAI chat completions, and OpenRouter's flavour of it.
//!
//! Streams are `data: {chunk}\n\n` frames ending with `data: [DONE]\n\n`. Tool calls stream
//! as indexed deltas: the first has `id`, `type` and `function.name` (with empty
//! `arguments`), later ones only `index` and an `arguments` fragment. Thinking streams as
//! OpenRouter sends it: `delta.reasoning` plus `delta.reasoning_details`.

use serde_json::{Map, Value, json};

use crate::script::{FinishReason, Turn, Usage};
use crate::wire::{CREATED, Ctx, Frame, Wire, sse_data};

/// The OpenAI wire format; `openrouter` switches on OpenRouter's differences.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenAi {
    /// OpenRouter: a `: OPENROUTER PROCESSING` comment first, usage (with `cost`) always
    /// sent, a `provider` field, and OpenRouter's error shapes.
    pub openrouter: bool,
}

fn finish_word(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
    }
}

impl OpenAi {
    fn id(ctx: &Ctx) -> String {
        format!("chatcmpl-fake-{}", ctx.seq)
    }

    fn usage(&self, usage: &Usage) -> Value {
        let mut out = json!({
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        });
        let cost = if self.openrouter {
            Some(usage.cost.unwrap_or(0.0))
        } else {
            usage.cost
        };
        if let (Some(cost), Some(map)) = (cost, out.as_object_mut()) {
            map.insert("cost".to_owned(), json!(cost));
        }
        out
    }

    fn reasoning_format(turn: &Turn) -> &'static str {
        if turn.signature.is_some() {
            "anthropic-claude-v1"
        } else {
            "unknown"
        }
    }

    /// A `chat.completion.chunk` with these choices.
    fn chunk(&self, ctx: &Ctx, choices: Value, usage: Option<Value>) -> Value {
        let mut map = Map::new();
        map.insert("id".to_owned(), json!(Self::id(ctx)));
        if self.openrouter {
            map.insert("provider".to_owned(), json!("Fake"));
        }
        map.insert("object".to_owned(), json!("chat.completion.chunk"));
        map.insert("created".to_owned(), json!(CREATED));
        map.insert("model".to_owned(), json!(ctx.model));
        map.insert("choices".to_owned(), choices);
        match usage {
            Some(usage) => {
                map.insert("usage".to_owned(), usage);
            }
            None if ctx.include_usage && !self.openrouter => {
                map.insert("usage".to_owned(), Value::Null);
            }
            None => {}
        }
        Value::Object(map)
    }

    fn delta_chunk(&self, ctx: &Ctx, delta: Value, finish: Option<&str>) -> String {
        let choice = json!([{
            "index": 0,
            "delta": delta,
            "logprobs": null,
            "finish_reason": finish,
        }]);
        sse_data(&self.chunk(ctx, choice, None))
    }
}

impl Wire for OpenAi {
    fn stream_content_type(&self) -> &'static str {
        "text/event-stream; charset=utf-8"
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let mut frames = Vec::new();
        if self.openrouter {
            frames.push(Frame::other(": OPENROUTER PROCESSING\n\n".to_owned()));
        }
        frames.push(Frame::other(self.delta_chunk(
            ctx,
            json!({"role": "assistant", "content": ""}),
            None,
        )));
        let format = Self::reasoning_format(turn);
        for chunk in &turn.thinking {
            frames.push(Frame::delta(self.delta_chunk(
                ctx,
                json!({
                    "reasoning": chunk,
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": chunk, "format": format, "index": 0}
                    ],
                }),
                None,
            )));
        }
        if let Some(signature) = &turn.signature {
            frames.push(Frame::delta(self.delta_chunk(
                ctx,
                json!({
                    "reasoning": "",
                    "reasoning_details": [{
                        "type": "reasoning.text",
                        "text": "",
                        "signature": signature,
                        "format": format,
                        "index": 0,
                    }],
                }),
                None,
            )));
        }
        for chunk in &turn.text {
            frames.push(Frame::delta(self.delta_chunk(
                ctx,
                json!({"content": chunk}),
                None,
            )));
        }
        for (index, call) in turn.tool_calls.iter().enumerate() {
            frames.push(Frame::delta(self.delta_chunk(
                ctx,
                json!({"tool_calls": [{
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }]}),
                None,
            )));
            for fragment in call.argument_fragments() {
                frames.push(Frame::delta(self.delta_chunk(
                    ctx,
                    json!({"tool_calls": [{
                        "index": index,
                        "function": {"arguments": fragment},
                    }]}),
                    None,
                )));
            }
        }
        frames.push(Frame::other(self.delta_chunk(
            ctx,
            json!({}),
            Some(finish_word(turn.finish_reason())),
        )));
        if ctx.include_usage || self.openrouter {
            let usage = self.usage(&turn.usage_or_default());
            frames.push(Frame::other(sse_data(&self.chunk(
                ctx,
                json!([]),
                Some(usage),
            ))));
        }
        frames.push(Frame::other("data: [DONE]\n\n".to_owned()));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        let content = if turn.text.is_empty() && !turn.tool_calls.is_empty() {
            Value::Null
        } else {
            json!(turn.text.concat())
        };
        message.insert("content".to_owned(), content);
        if !self.openrouter {
            message.insert("refusal".to_owned(), Value::Null);
        }
        if !turn.thinking.is_empty() || turn.signature.is_some() {
            let text = turn.thinking.concat();
            message.insert("reasoning".to_owned(), json!(text));
            let mut detail = json!({
                "type": "reasoning.text",
                "text": text,
                "format": Self::reasoning_format(turn),
                "index": 0,
            });
            if let (Some(signature), Some(map)) = (&turn.signature, detail.as_object_mut()) {
                map.insert("signature".to_owned(), json!(signature));
            }
            message.insert("reasoning_details".to_owned(), json!([detail]));
        }
        if !turn.tool_calls.is_empty() {
            let calls: Vec<Value> = turn
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_text()},
                    })
                })
                .collect();
            message.insert("tool_calls".to_owned(), json!(calls));
        }
        let mut body = Map::new();
        body.insert("id".to_owned(), json!(Self::id(ctx)));
        if self.openrouter {
            body.insert("provider".to_owned(), json!("Fake"));
        }
        body.insert("object".to_owned(), json!("chat.completion"));
        body.insert("created".to_owned(), json!(CREATED));
        body.insert("model".to_owned(), json!(ctx.model));
        body.insert(
            "choices".to_owned(),
            json!([{
                "index": 0,
                "message": Value::Object(message),
                "logprobs": null,
                "finish_reason": finish_word(turn.finish_reason()),
            }]),
        );
        body.insert("usage".to_owned(), self.usage(&turn.usage_or_default()));
        Value::Object(body)
    }

    fn malformed_frame(&self) -> String {
        "data: {\"id\":\"chatcmpl-fake\",\"choices\":[{\"delta\":{\"content\":\n\n".to_owned()
    }

    fn stream_error(&self, message: &str, ctx: &Ctx) -> Vec<String> {
        if self.openrouter {
            // OpenRouter: an error chunk with `finish_reason: "error"`, then the stream ends.
            let mut chunk = self.chunk(
                ctx,
                json!([{
                    "index": 0,
                    "delta": {"content": ""},
                    "finish_reason": "error",
                }]),
                None,
            );
            if let Some(map) = chunk.as_object_mut() {
                map.insert(
                    "error".to_owned(),
                    json!({"code": "server_error", "message": message}),
                );
            }
            vec![sse_data(&chunk)]
        } else {
            vec![sse_data(&json!({"error": {
                "message": message,
                "type": "server_error",
                "param": null,
                "code": null,
            }}))]
        }
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        if self.openrouter {
            return json!({"error": {"code": status, "message": message}});
        }
        let (kind, code) = match status {
            401 => ("invalid_request_error", json!("invalid_api_key")),
            404 => ("invalid_request_error", json!("model_not_found")),
            429 => ("requests", json!("rate_limit_exceeded")),
            500..=599 => ("server_error", Value::Null),
            _ => ("invalid_request_error", Value::Null),
        };
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        if self.openrouter {
            let message = format!(
                "This endpoint's maximum context length is {max_tokens} tokens. However, you \
                 requested about {prompt_tokens} tokens ({prompt_tokens} of text input, 0 in \
                 the output). Please reduce the length of either one, or use the \
                 \"middle-out\" transform to compress your prompt automatically."
            );
            (
                400,
                json!({"error": {
                    "message": message,
                    "code": 400,
                    "metadata": {"provider_name": null},
                }}),
            )
        } else {
            let message = format!(
                "This model's maximum context length is {max_tokens} tokens. However, your \
                 messages resulted in {prompt_tokens} tokens. Please reduce the length of the \
                 messages."
            );
            (
                400,
                json!({"error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }}),
            )
        }
    }
}
