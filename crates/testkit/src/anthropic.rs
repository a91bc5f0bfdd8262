//! Anthropic Messages (`POST /v1/messages`).
//!
//! Streams are `event: name\ndata: {json}\n\n` frames: `message_start`, then per content
//! block `content_block_start` / `content_block_delta`* / `content_block_stop` (thinking with
//! `thinking_delta` then `signature_delta`, text with `text_delta`, tool use with
//! `input_json_delta`), a `ping` after the first block start, `message_delta` with the stop
//! reason and output usage, and `message_stop`.

use serde_json::{Value, json};

use crate::script::{FinishReason, Turn, Usage};
use crate::wire::{Ctx, Frame, Wire, sse_event};

/// The Anthropic Messages wire format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anthropic;

fn stop_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop => "end_turn",
        FinishReason::Length => "max_tokens",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::ContentFilter => "refusal",
    }
}

fn full_usage(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage
            .prompt_tokens
            .saturating_sub(usage.cached_tokens + usage.cache_write_tokens),
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "output_tokens": usage.completion_tokens,
    })
}

fn error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

fn has_thinking(turn: &Turn) -> bool {
    !turn.thinking.is_empty() || turn.signature.is_some()
}

impl Wire for Anthropic {
    fn stream_content_type(&self) -> &'static str {
        "text/event-stream; charset=utf-8"
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let usage = turn.usage_or_default();
        let mut start_usage = full_usage(&usage);
        if let Some(map) = start_usage.as_object_mut() {
            map.insert("output_tokens".to_owned(), json!(1));
        }
        let mut frames = vec![Frame::other(sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{}", ctx.seq),
                "type": "message",
                "role": "assistant",
                "model": ctx.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": start_usage,
            }}),
        ))];
        let ping = || Frame::other(sse_event("ping", &json!({"type": "ping"})));
        let mut index = 0usize;
        let mut pinged = false;
        let mut start_block = |frames: &mut Vec<Frame>, index: usize, block: Value, delta: bool| {
            let text = sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            );
            frames.push(Frame { text, delta });
            if !pinged {
                frames.push(ping());
                pinged = true;
            }
        };
        let delta = |index: usize, delta: Value| {
            Frame::delta(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ))
        };
        let stop = |index: usize| {
            Frame::other(sse_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            ))
        };
        if has_thinking(turn) {
            start_block(
                &mut frames,
                index,
                json!({"type": "thinking", "thinking": ""}),
                false,
            );
            for chunk in &turn.thinking {
                frames.push(delta(
                    index,
                    json!({"type": "thinking_delta", "thinking": chunk}),
                ));
            }
            if let Some(signature) = &turn.signature {
                frames.push(delta(
                    index,
                    json!({"type": "signature_delta", "signature": signature}),
                ));
            }
            frames.push(stop(index));
            index += 1;
        }
        if !turn.text.is_empty() {
            start_block(
                &mut frames,
                index,
                json!({"type": "text", "text": ""}),
                false,
            );
            for chunk in &turn.text {
                frames.push(delta(index, json!({"type": "text_delta", "text": chunk})));
            }
            frames.push(stop(index));
            index += 1;
        }
        for call in &turn.tool_calls {
            start_block(
                &mut frames,
                index,
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                true,
            );
            for fragment in call.argument_fragments() {
                frames.push(delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": fragment}),
                ));
            }
            frames.push(stop(index));
            index += 1;
        }
        if !pinged {
            frames.push(ping());
        }
        frames.push(Frame::other(sse_event(
            "message_delta",
            &json!({
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason(turn.finish_reason()), "stop_sequence": null},
                "usage": {"output_tokens": usage.completion_tokens},
            }),
        )));
        frames.push(Frame::other(sse_event(
            "message_stop",
            &json!({"type": "message_stop"}),
        )));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        let mut content = Vec::new();
        if has_thinking(turn) {
            content.push(json!({
                "type": "thinking",
                "thinking": turn.thinking.concat(),
                "signature": turn.signature.clone().unwrap_or_default(),
            }));
        }
        if !turn.text.is_empty() {
            content.push(json!({"type": "text", "text": turn.text.concat()}));
        }
        for call in &turn.tool_calls {
            content.push(json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": call.arguments_value(),
            }));
        }
        json!({
            "id": format!("msg_fake_{}", ctx.seq),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": content,
            "stop_reason": stop_reason(turn.finish_reason()),
            "stop_sequence": null,
            "usage": full_usage(&turn.usage_or_default()),
        })
    }

    fn malformed_frame(&self) -> String {
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
         \"delta\":{\"type\":\"text_delta\",\"text\":\n\n"
            .to_owned()
    }

    fn stream_error(&self, message: &str, _ctx: &Ctx) -> Vec<String> {
        vec![sse_event(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": message}}),
        )]
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        json!({"type": "error", "error": {"type": error_type(status), "message": message}})
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        (
            400,
            self.error_body(
                400,
                &format!("prompt is too long: {prompt_tokens} tokens > {max_tokens} maximum"),
            ),
        )
    }
}
