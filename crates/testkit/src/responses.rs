//! OpenAI's Responses API.
//!
//! Streams are SSE frames with `event:` lines: `response.created` (the id `resp_fake_N`),
//! then each output item between `response.output_item.added` and `.done`: the turn's web
//! searches (`web_search_call`), its thinking (a `reasoning` item with summary deltas and the
//! signature as `encrypted_content`), its text (a `message` with `output_text` deltas) and
//! its tool calls (`function_call` with argument deltas); last `response.completed` (or
//! `.incomplete` for a length stop) with the usage.

use serde_json::{Value, json};

use crate::openai::OpenAi;
use crate::script::{FinishReason, Turn, Usage};
use crate::wire::{CREATED, Ctx, Frame, Wire, sse_event};

/// The Responses wire format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Responses;

fn id(ctx: &Ctx) -> String {
    format!("resp_fake_{}", ctx.seq)
}

fn usage(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    })
}

fn event(kind: &str, mut data: Value) -> String {
    if let Some(map) = data.as_object_mut() {
        map.insert("type".to_owned(), json!(kind));
    }
    sse_event(kind, &data)
}

/// The finished output items of a turn, in order.
fn output(turn: &Turn) -> Vec<Value> {
    let mut items = Vec::new();
    for (n, query) in turn.web_searches.iter().enumerate() {
        items.push(json!({
            "type": "web_search_call", "id": format!("ws_{n}"), "status": "completed",
            "action": {"type": "search", "query": query},
        }));
    }
    if !turn.thinking.is_empty() || turn.signature.is_some() {
        let mut item = json!({
            "type": "reasoning", "id": "rs_0",
            "summary": [{"type": "summary_text", "text": turn.thinking.concat()}],
        });
        if let (Some(signature), Some(map)) = (&turn.signature, item.as_object_mut()) {
            map.insert("encrypted_content".to_owned(), json!(signature));
        }
        items.push(item);
    }
    if !turn.text.is_empty() {
        items.push(json!({
            "type": "message", "id": "msg_0", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": turn.text.concat(), "annotations": []}],
        }));
    }
    for (n, call) in turn.tool_calls.iter().enumerate() {
        items.push(json!({
            "type": "function_call", "id": format!("fc_{n}"), "call_id": call.id,
            "name": call.name, "arguments": call.arguments_text(), "status": "completed",
        }));
    }
    items
}

/// The response object, finished.
fn response(turn: &Turn, ctx: &Ctx) -> Value {
    let length = turn.finish_reason() == FinishReason::Length;
    json!({
        "id": id(ctx),
        "object": "response",
        "created_at": CREATED,
        "model": ctx.model,
        "status": if length { "incomplete" } else { "completed" },
        "incomplete_details": if length { json!({"reason": "max_output_tokens"}) } else { Value::Null },
        "output": output(turn),
        "usage": usage(&turn.usage_or_default()),
    })
}

impl Wire for Responses {
    fn stream_content_type(&self) -> &'static str {
        "text/event-stream; charset=utf-8"
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let mut frames = vec![Frame::other(event(
            "response.created",
            json!({"response": {"id": id(ctx), "object": "response", "status": "in_progress",
                                "model": ctx.model, "output": []}}),
        ))];
        let items = output(turn);
        for (index, item) in items.iter().enumerate() {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
            let mut added = item.clone();
            if let Some(map) = added.as_object_mut() {
                match kind {
                    "reasoning" => {
                        map.insert("summary".to_owned(), json!([]));
                        map.remove("encrypted_content");
                    }
                    "message" => {
                        map.insert("content".to_owned(), json!([]));
                    }
                    "function_call" => {
                        map.insert("arguments".to_owned(), json!(""));
                    }
                    _ => {}
                }
                map.insert("status".to_owned(), json!("in_progress"));
            }
            frames.push(Frame::other(event(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            )));
            let item_id = item.get("id").cloned().unwrap_or(Value::Null);
            let delta = |kind: &str, delta: &str| {
                Frame::delta(event(
                    kind,
                    json!({"output_index": index, "item_id": item_id, "delta": delta}),
                ))
            };
            match kind {
                "web_search_call" => frames.push(Frame::other(event(
                    "response.web_search_call.searching",
                    json!({"output_index": index, "item_id": item_id}),
                ))),
                "reasoning" => {
                    for chunk in &turn.thinking {
                        frames.push(delta("response.reasoning_summary_text.delta", chunk));
                    }
                }
                "message" => {
                    for chunk in &turn.text {
                        frames.push(delta("response.output_text.delta", chunk));
                    }
                }
                "function_call" => {
                    let n = index - (items.len() - turn.tool_calls.len());
                    if let Some(call) = turn.tool_calls.get(n) {
                        for fragment in call.argument_fragments() {
                            frames.push(delta("response.function_call_arguments.delta", &fragment));
                        }
                    }
                }
                _ => {}
            }
            frames.push(Frame::other(event(
                "response.output_item.done",
                json!({"output_index": index, "item": item}),
            )));
        }
        let done = if turn.finish_reason() == FinishReason::Length {
            "response.incomplete"
        } else {
            "response.completed"
        };
        frames.push(Frame::other(event(
            done,
            json!({"response": response(turn, ctx)}),
        )));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        response(turn, ctx)
    }

    fn malformed_frame(&self) -> String {
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\n\n"
            .to_owned()
    }

    fn stream_error(&self, message: &str, _ctx: &Ctx) -> Vec<String> {
        vec![event(
            "error",
            json!({"code": "server_error", "message": message, "param": null}),
        )]
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        OpenAi { openrouter: false }.error_body(status, message)
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        OpenAi { openrouter: false }.overflow(prompt_tokens, max_tokens)
    }
}
