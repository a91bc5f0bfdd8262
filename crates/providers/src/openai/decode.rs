//! OpenAI chat-completion chunks -> `StreamEvent`s.

use std::collections::HashMap;

use serde_json::Value;
use ybs_core::{ErrorKind, FinishReason, LlmError, StreamEvent, Usage};

use super::wire::{Chunk, Delta, ToolCallDelta, WireUsage};
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{error_parts, error_status, malformed, stream_error};
use crate::framing::Frame;

/// Decodes `data:` frames of chat-completion chunks until `[DONE]`.
///
/// Tool-call deltas are assembled by their `index`; a delta that brings a new `id` under an
/// index already in use (some servers number every call 0) starts a new call. Reasoning
/// arrives as `reasoning` (OpenRouter), `reasoning_content` (DeepSeek, vLLM, llama.cpp) or
/// `reasoning_details` items (OpenRouter, passed on unchanged). `Done` is emitted at `[DONE]`,
/// after the usage chunk.
#[derive(Debug)]
pub(crate) struct OpenAiDecoder {
    kind: ProviderKind,
    /// Wire index -> our index of the call it currently feeds.
    calls: HashMap<usize, usize>,
    /// Our calls in order: id and whether they were ended.
    started: Vec<(String, bool)>,
    finish: Option<FinishReason>,
    done: bool,
}

impl OpenAiDecoder {
    pub fn new(kind: ProviderKind) -> Self {
        OpenAiDecoder {
            kind,
            calls: HashMap::new(),
            started: Vec::new(),
            finish: None,
            done: false,
        }
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) {
        let text_of_details = || -> String {
            delta
                .reasoning_details
                .iter()
                .flatten()
                .filter_map(|detail| {
                    detail
                        .get("text")
                        .or_else(|| detail.get("summary"))
                        .and_then(Value::as_str)
                })
                .collect()
        };
        let thinking = match (&delta.reasoning, &delta.reasoning_content) {
            (Some(text), _) | (None, Some(text)) if !text.is_empty() => text.clone(),
            _ => text_of_details(),
        };
        push_thinking(out, thinking);
        for detail in delta.reasoning_details.into_iter().flatten() {
            out.push(StreamEvent::ReasoningDetail { detail });
        }
        for text in [delta.content, delta.refusal].into_iter().flatten() {
            push_text(out, text);
        }
        for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
            self.tool_call(position, call, out);
        }
    }

    fn tool_call(&mut self, position: usize, call: ToolCallDelta, out: &mut Vec<StreamEvent>) {
        let wire_index = call.index.unwrap_or(position);
        let id = call.id.filter(|id| !id.is_empty());
        let (name, arguments) = match call.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        let current = self.calls.get(&wire_index).copied();
        let is_new = match (current, &id) {
            (None, _) => true,
            (Some(index), Some(id)) => {
                let known = &self.started[index].0;
                !known.is_empty() && known != id
            }
            (Some(_), None) => false,
        };
        let index = if is_new {
            let index = self.started.len();
            let id = id.unwrap_or_else(|| format!("call_{index}"));
            self.started.push((id.clone(), false));
            self.calls.insert(wire_index, index);
            out.push(StreamEvent::ToolCallStart {
                index,
                id,
                name: name.unwrap_or_default(),
            });
            index
        } else {
            let index = current.unwrap_or_default();
            if let Some(name) = name.filter(|name| !name.is_empty()) {
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: String::new(),
                    name,
                });
            }
            index
        };
        if let Some(arguments) = arguments.filter(|arguments| !arguments.is_empty()) {
            out.push(StreamEvent::ToolCallDelta { index, arguments });
        }
    }

    fn end_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for (index, (_, ended)) in self.started.iter_mut().enumerate() {
            if !*ended {
                *ended = true;
                out.push(StreamEvent::ToolCallEnd { index });
            }
        }
    }

    fn finish_reason(&self) -> FinishReason {
        match &self.finish {
            Some(reason) => reason.clone(),
            None if !self.started.is_empty() => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        }
    }
}

pub(crate) fn usage(wire: &WireUsage) -> Usage {
    let cached = wire
        .prompt_tokens_details
        .as_ref()
        .and_then(|details| details.cached_tokens)
        .or(wire.prompt_cache_hit_tokens);
    Usage {
        prompt_tokens: wire.prompt_tokens.unwrap_or_default(),
        completion_tokens: wire.completion_tokens.unwrap_or_default(),
        cached_tokens: cached.unwrap_or_default(),
        cache_write_tokens: wire
            .prompt_tokens_details
            .as_ref()
            .and_then(|details| details.cache_write_tokens)
            .unwrap_or_default(),
        reasoning_tokens: wire
            .completion_tokens_details
            .as_ref()
            .and_then(|details| details.reasoning_tokens)
            .unwrap_or_default(),
        total_tokens: wire.total_tokens.unwrap_or_default(),
        cost: wire.cost,
        cache_savings: None,
    }
}

impl Decoder for OpenAiDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let data = frame.data.trim();
        if data == "[DONE]" {
            self.end_calls(out);
            out.push(StreamEvent::Done {
                finish_reason: self.finish_reason(),
            });
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|error| malformed(self.kind, &error.to_string(), data))?;
        if let Some(error) = &chunk.error {
            let (message, code) = error_parts(error);
            return Err(stream_error(self.kind, error_status(error), code, message));
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|reason| !reason.is_empty()) {
                if reason == "error" {
                    return Err(LlmError::new(
                        ErrorKind::Server,
                        format!(
                            "{} stopped the reply with an error",
                            self.kind.display_name()
                        ),
                    ));
                }
                self.end_calls(out);
                self.finish = Some(FinishReason::from_provider(&reason));
            }
        }
        if let Some(wire) = &chunk.usage {
            out.push(StreamEvent::Usage(usage(wire)));
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if self.finish.is_some() {
            // Some servers end the body without `[DONE]` once they said why they stopped.
            self.end_calls(out);
            out.push(StreamEvent::Done {
                finish_reason: self.finish_reason(),
            });
            self.done = true;
            return Ok(());
        }
        Err(cut_short(self.kind, "no finish reason, no [DONE]"))
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_recorded;
    use crate::framing::Framing;
    use bytes::Bytes;
    use serde_json::json;
    use ybs_core::Accumulator;

    /// The body decoded by this module's decoder alone, framed as the kind's streams are.
    fn replay<I>(kind: ProviderKind, chunks: I) -> Vec<Result<StreamEvent, LlmError>>
    where
        I: IntoIterator<Item = Bytes>,
        I::IntoIter: Send + 'static,
    {
        decode_recorded(&mut OpenAiDecoder::new(kind), Framing::Sse, kind, chunks)
    }

    fn body(frames: &[Value]) -> String {
        let mut body = String::from(": OPENROUTER PROCESSING\n\n");
        for frame in frames {
            body.push_str(&format!("data: {frame}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        body
    }

    fn run(kind: ProviderKind, body: &str) -> Vec<Result<StreamEvent, LlmError>> {
        replay(kind, [Bytes::from(body.to_owned())])
    }

    fn events(kind: ProviderKind, body: &str) -> Vec<StreamEvent> {
        run(kind, body).into_iter().map(Result::unwrap).collect()
    }

    fn chunk(delta: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    }

    #[test]
    fn text_reasoning_details_and_usage_with_cost() {
        let detail = json!({"type": "reasoning.text", "text": "Hmm", "format": "anthropic-claude-v1", "index": 0});
        let signed = json!({"type": "reasoning.text", "signature": "sig", "format": "anthropic-claude-v1", "index": 0});
        let frames = [
            chunk(json!({"role": "assistant", "content": ""})),
            chunk(json!({"content": "", "reasoning": "Hmm", "reasoning_details": [detail]})),
            chunk(json!({"content": null, "reasoning": null, "reasoning_details": [signed]})),
            chunk(json!({"content": "Hi"})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 3},
                "completion_tokens_details": {"reasoning_tokens": 2}, "cost": 0.0012}}),
        ];
        let got = events(ProviderKind::OpenRouter, &body(&frames));
        let usage = Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_tokens: 4,
            cache_write_tokens: 3,
            reasoning_tokens: 2,
            total_tokens: 15,
            cost: Some(0.0012),
            cache_savings: None,
        };
        assert_eq!(
            got,
            vec![
                StreamEvent::ThinkingDelta {
                    text: "Hmm".into(),
                    signature: None
                },
                StreamEvent::ReasoningDetail {
                    detail: frames[1]["choices"][0]["delta"]["reasoning_details"][0].clone()
                },
                StreamEvent::ReasoningDetail {
                    detail: frames[2]["choices"][0]["delta"]["reasoning_details"][0].clone()
                },
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Usage(usage),
                StreamEvent::Done {
                    finish_reason: FinishReason::Stop
                },
            ]
        );
        let mut accumulator = Accumulator::new();
        got.into_iter().for_each(|event| accumulator.push(event));
        let reply = accumulator.finish();
        let ybs_core::Part::Thinking(thinking) = &reply.message.parts[0] else {
            panic!("{reply:?}")
        };
        assert_eq!(thinking.content, "Hmm");
        assert_eq!(
            thinking.details,
            Some(vec![
                json!({"type": "reasoning.text", "text": "Hmm", "signature": "sig",
                "format": "anthropic-claude-v1", "index": 0})
            ])
        );
    }

    #[test]
    fn reasoning_content_of_deepseek() {
        let frames = [
            chunk(json!({"reasoning_content": "think", "content": null})),
            json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5,
                             "prompt_cache_hit_tokens": 1}}),
        ];
        let got = events(ProviderKind::DeepSeek, &body(&frames));
        assert_eq!(
            got[0],
            StreamEvent::ThinkingDelta {
                text: "think".into(),
                signature: None
            }
        );
        assert_eq!(got[1], StreamEvent::TextDelta { text: "ok".into() });
        let StreamEvent::Usage(usage) = &got[2] else {
            panic!("{got:?}")
        };
        assert_eq!(usage.cached_tokens, 1);
    }

    #[test]
    fn parallel_tool_calls_assemble_by_index() {
        let call = |index: usize, id: Option<&str>, name: Option<&str>, args: &str| {
            let mut function = json!({"arguments": args});
            if let Some(name) = name {
                function["name"] = json!(name);
            }
            let mut call = json!({"index": index, "function": function});
            if let Some(id) = id {
                call["id"] = json!(id);
                call["type"] = json!("function");
            }
            chunk(json!({"tool_calls": [call]}))
        };
        let frames = [
            call(0, Some("a"), Some("read"), ""),
            call(1, Some("b"), Some("list"), ""),
            call(0, None, None, "{\"path\":"),
            call(1, None, None, "{}"),
            call(0, None, None, "\"x\"}"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ];
        let mut accumulator = Accumulator::new();
        for event in events(ProviderKind::OpenAi, &body(&frames)) {
            accumulator.push(event);
        }
        let reply = accumulator.finish();
        let calls: Vec<_> = reply.message.tool_calls().cloned().collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("a", "read")
        );
        assert_eq!(calls[0].arguments, json!({"path": "x"}));
        assert_eq!(
            (calls[1].id.as_str(), calls[1].name.as_str()),
            ("b", "list")
        );
        assert_eq!(calls[1].arguments, json!({}));
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn calls_all_numbered_zero_are_told_apart_by_id() {
        let frames = [
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{}"}}]}),
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "y", "arguments": "{\"n\":1}"}}]}),
            ),
        ];
        let got = events(ProviderKind::LlamaCpp, &body(&frames));
        let starts: Vec<_> = got
            .iter()
            .filter_map(|event| match event {
                StreamEvent::ToolCallStart { index, id, .. } => Some((*index, id.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![(0, "a".to_owned()), (1, "b".to_owned())]);
        assert!(got.contains(&StreamEvent::ToolCallEnd { index: 1 }));
    }

    #[test]
    fn in_stream_errors_end_the_stream() {
        let frames = [
            chunk(json!({"content": "par"})),
            json!({"error": {"code": "server_error", "message": "Upstream died"},
                   "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}),
        ];
        let got = run(ProviderKind::OpenRouter, &body(&frames));
        assert_eq!(got[0], Ok(StreamEvent::TextDelta { text: "par".into() }));
        let err = got[1].clone().unwrap_err();
        assert_eq!(err.message, "Upstream died");
        assert_eq!(err.code.as_deref(), Some("server_error"));
        assert_eq!(got.len(), 2);

        let numeric = "data: {\"error\":{\"code\":429,\"message\":\"slow down\"}}\n\n";
        let err = run(ProviderKind::OpenRouter, numeric)[0]
            .clone()
            .unwrap_err();
        assert_eq!(err.status, Some(429));
        assert_eq!(err.kind, ErrorKind::RateLimit { retry_after: None });
    }

    #[test]
    fn malformed_and_truncated_streams_fail_after_what_arrived() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choi\n\n";
        let got = run(ProviderKind::OpenAi, body);
        assert_eq!(got[0], Ok(StreamEvent::TextDelta { text: "a".into() }));
        let err = got[1].clone().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Server);
        assert!(
            err.message
                .starts_with("malformed stream frame from OpenAI: EOF while parsing"),
            "{}",
            err.message
        );

        let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n";
        let got = run(ProviderKind::OpenAi, cut);
        assert_eq!(
            got[1].clone().unwrap_err().message,
            "the stream from OpenAI ended before the reply was complete (no finish reason, no \
             [DONE])"
        );

        let no_done = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}\n\n";
        let got = run(ProviderKind::Vllm, no_done);
        assert_eq!(
            got.last(),
            Some(&Ok(StreamEvent::Done {
                finish_reason: FinishReason::Length
            }))
        );
    }

    proptest::proptest! {
        #[test]
        fn any_chunking_of_any_stream_gives_the_same_reply(
            words in proptest::collection::vec("[a-zé \"{}:,\\n]{0,12}", 1..12),
            pieces in proptest::collection::vec("[a-z\"{}:,]{0,6}", 1..8),
            cut in 1usize..64,
        ) {
            let mut frames: Vec<Value> = words
                .iter()
                .map(|word| chunk(json!({"content": word})))
                .collect();
            frames.push(chunk(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "t", "arguments": ""}}]})));
            frames.extend(pieces.iter().map(|piece| {
                chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
            }));
            let text = body(&frames);
            let chunks: Vec<Bytes> = text
                .as_bytes()
                .chunks(cut)
                .map(Bytes::copy_from_slice)
                .collect();
            let mut accumulator = Accumulator::new();
            for event in replay(ProviderKind::OpenAi, chunks) {
                accumulator.push(event.unwrap());
            }
            let reply = accumulator.finish();
            proptest::prop_assert_eq!(reply.message.text_content(), words.concat());
            let call = reply.message.tool_calls().next().cloned().unwrap();
            proptest::prop_assert_eq!(call.arguments_text(), {
                let raw = pieces.concat();
                match serde_json::from_str::<Value>(&raw) {
                    Ok(value) if !raw.trim().is_empty() => value.to_string(),
                    _ if raw.trim().is_empty() => "{}".to_owned(),
                    _ => raw,
                }
            });
        }
    }
}
