//! Decoding speed of long recorded streams (framing + decoding, events per second), for the
//! OpenAI/OpenRouter, Anthropic and Ollama wire formats.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_main};
use serde_json::json;
use ybs_providers::{ProviderKind, replay};

const DELTAS: usize = 5000;

/// A body cut into 1 KiB chunks, as a network would deliver it.
fn chunks(body: &str) -> Vec<Bytes> {
    body.as_bytes()
        .chunks(1024)
        .map(Bytes::copy_from_slice)
        .collect()
}

fn openrouter_body() -> String {
    let mut body = String::from(": OPENROUTER PROCESSING\n\n");
    let chunk = |delta: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "gen-1", "object": "chat.completion.chunk", "created": 1,
                   "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    for n in 0..DELTAS / 5 {
        body.push_str(&chunk(json!({"role": "assistant", "content": "",
            "reasoning": format!("step {n} "),
            "reasoning_details": [{"type": "reasoning.text", "text": format!("step {n} "), "index": 0}]})));
    }
    for n in 0..DELTAS {
        body.push_str(&chunk(json!({"content": format!("word{n} ")})));
    }
    body.push_str(&chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "write_file", "arguments": ""}}]}),
    ));
    for n in 0..DELTAS / 5 {
        body.push_str(&chunk(json!({"tool_calls": [{"index": 0,
            "function": {"arguments": format!("line {n}\\n")}}]})));
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\
        \"usage\":{\"prompt_tokens\":10,\"completion_tokens\":9000,\"total_tokens\":9010,\"cost\":0.1}}\n\n");
    body.push_str("data: [DONE]\n\n");
    body
}

fn anthropic_body() -> String {
    let event = |value: serde_json::Value| {
        format!(
            "event: {}\ndata: {value}\n\n",
            value["type"].as_str().unwrap()
        )
    };
    let mut body = event(
        json!({"type": "message_start", "message": {"id": "msg", "type": "message",
        "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    body.push_str(&event(json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}})));
    for n in 0..DELTAS {
        body.push_str(&event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": format!("word{n} ")}})));
        if n % 500 == 0 {
            body.push_str(&event(json!({"type": "ping"})));
        }
    }
    body.push_str(&event(json!({"type": "content_block_stop", "index": 0})));
    body.push_str(&event(json!({"type": "message_delta",
        "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5000}})));
    body.push_str(&event(json!({"type": "message_stop"})));
    body
}

fn ollama_body() -> String {
    let mut body = String::new();
    for n in 0..DELTAS {
        body.push_str(&format!(
            "{}\n",
            json!({"model": "q", "created_at": "2025-01-01T00:00:00Z",
                   "message": {"role": "assistant", "content": format!("word{n} ")}, "done": false})
        ));
    }
    body.push_str(
        "{\"model\":\"q\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\
         \"done_reason\":\"stop\",\"prompt_eval_count\":10,\"eval_count\":5000}\n",
    );
    body
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    let cases = [
        ("openrouter", ProviderKind::OpenRouter, openrouter_body()),
        ("anthropic", ProviderKind::Anthropic, anthropic_body()),
        ("ollama", ProviderKind::Ollama, ollama_body()),
    ];
    for (name, kind, body) in cases {
        let chunks = chunks(&body);
        let events = replay(kind, chunks.clone());
        assert!(
            events.iter().all(Result::is_ok),
            "{name}: the recording decodes"
        );
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function(name, |b| b.iter(|| replay(kind, chunks.clone()).len()));
    }
    group.finish();
}

// `criterion_group!` defines an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::decode);
}

criterion_main!(group::benches);
