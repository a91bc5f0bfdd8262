//! Anthropic Messages stream events -> `StreamEvent`s.

use std::collections::HashSet;

use ybs_core::{FinishReason, LlmError, StreamEvent, Usage};

use super::wire::{BlockDelta, Event, StartBlock, WireUsage};
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{malformed, stream_error};
use crate::framing::Frame;

/// Decodes the full event set: `message_start`, `content_block_start` / `_delta` / `_stop`
/// for text, thinking (with its `signature_delta`), `redacted_thinking` and `tool_use`,
/// `message_delta`, `message_stop`, `ping` and `error`; unknown events are skipped, as the
/// API asks. A tool call's index is its content block's index.
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    /// The content blocks that are tool calls (their stop ends the call).
    tool_blocks: HashSet<usize>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

impl AnthropicDecoder {
    fn usage(&mut self, wire: &WireUsage, out: &mut Vec<StreamEvent>) {
        let usage = &mut self.usage;
        if wire.input_tokens.is_some()
            || wire.cache_read_input_tokens.is_some()
            || wire.cache_creation_input_tokens.is_some()
        {
            let prompt = wire.input_tokens.unwrap_or_default()
                + wire.cache_creation_input_tokens.unwrap_or_default()
                + wire.cache_read_input_tokens.unwrap_or_default();
            usage.prompt_tokens = usage.prompt_tokens.max(prompt);
            usage.cached_tokens = usage
                .cached_tokens
                .max(wire.cache_read_input_tokens.unwrap_or_default());
            usage.cache_write_tokens = usage
                .cache_write_tokens
                .max(wire.cache_creation_input_tokens.unwrap_or_default());
        }
        if let Some(output) = wire.output_tokens {
            usage.completion_tokens = usage.completion_tokens.max(output);
        }
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
        out.push(StreamEvent::Usage(*usage));
    }
}

impl Decoder for AnthropicDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let event: Event = serde_json::from_str(&frame.data)
            .map_err(|error| malformed(ProviderKind::Anthropic, &error.to_string(), &frame.data))?;
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = &message.usage {
                    self.usage(usage, out);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                StartBlock::Text { text } => push_text(out, text),
                StartBlock::Thinking { thinking } => push_thinking(out, thinking),
                StartBlock::RedactedThinking { data } => {
                    out.push(StreamEvent::RedactedThinking { data });
                }
                StartBlock::ToolUse { id, name, input } => {
                    self.tool_blocks.insert(index);
                    out.push(StreamEvent::ToolCallStart { index, id, name });
                    let has_input = input.as_object().is_some_and(|map| !map.is_empty());
                    if has_input {
                        out.push(StreamEvent::ToolCallDelta {
                            index,
                            arguments: input.to_string(),
                        });
                    }
                }
                StartBlock::Other => {}
            },
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => push_text(out, text),
                BlockDelta::ThinkingDelta { thinking } => push_thinking(out, thinking),
                BlockDelta::SignatureDelta { signature } => {
                    out.push(StreamEvent::ThinkingDelta {
                        text: String::new(),
                        signature: Some(signature),
                    });
                }
                BlockDelta::InputJsonDelta { partial_json } => {
                    // A server tool's input (web search) is not a call of ours.
                    if !partial_json.is_empty() && self.tool_blocks.contains(&index) {
                        out.push(StreamEvent::ToolCallDelta {
                            index,
                            arguments: partial_json,
                        });
                    }
                }
                BlockDelta::Other => {}
            },
            Event::ContentBlockStop { index } => {
                if self.tool_blocks.contains(&index) {
                    out.push(StreamEvent::ToolCallEnd { index });
                }
            }
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = &usage {
                    self.usage(usage, out);
                }
            }
            Event::MessageStop => {
                let finish_reason = match &self.stop_reason {
                    Some(reason) => FinishReason::from_provider(reason),
                    None => FinishReason::Stop,
                };
                out.push(StreamEvent::Done { finish_reason });
                self.done = true;
            }
            Event::Ping | Event::Unknown => {}
            Event::Error { error } => {
                return Err(stream_error(
                    ProviderKind::Anthropic,
                    None,
                    error.kind,
                    error.message,
                ));
            }
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        Err(cut_short(ProviderKind::Anthropic, "no message_stop"))
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
    use serde_json::{Value, json};
    use ybs_core::{Accumulator, ErrorKind, Part};

    /// The body decoded by this module's decoder alone, framed as the kind's streams are.
    fn replay<I>(kind: ProviderKind, chunks: I) -> Vec<Result<StreamEvent, LlmError>>
    where
        I: IntoIterator<Item = Bytes>,
        I::IntoIter: Send + 'static,
    {
        decode_recorded(&mut AnthropicDecoder::default(), Framing::Sse, kind, chunks)
    }

    fn body(events: &[Value]) -> String {
        events
            .iter()
            .map(|event| {
                format!(
                    "event: {}\ndata: {event}\n\n",
                    event["type"].as_str().unwrap()
                )
            })
            .collect()
    }

    fn run(events: &[Value]) -> Vec<Result<StreamEvent, LlmError>> {
        replay(ProviderKind::Anthropic, [Bytes::from(body(events))])
    }

    fn recorded() -> Vec<Value> {
        vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "usage": {"input_tokens": 20, "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 100, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "see."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwK"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Reading."}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": "}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "\"a.rs\"}"}}),
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "something_new", "x": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ]
    }

    #[test]
    fn a_hosted_web_search_is_not_a_tool_call_of_ours() {
        let events = [
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 9}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"rust\"}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Rust is a language."}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
            json!({"type": "message_stop"}),
        ];
        let mut accumulator = Accumulator::new();
        for event in run(&events) {
            accumulator.push(event.unwrap());
        }
        let reply = accumulator.finish();
        assert_eq!(reply.message.parts, [Part::text("Rust is a language.")]);
        assert_eq!(reply.finish_reason, Some(FinishReason::Stop));
    }

    #[test]
    fn the_full_event_set_folds_into_the_reply() {
        let mut accumulator = Accumulator::new();
        for event in run(&recorded()) {
            accumulator.push(event.unwrap());
        }
        let reply = accumulator.finish();
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 125,
                completion_tokens: 42,
                cached_tokens: 100,
                cache_write_tokens: 5,
                reasoning_tokens: 0,
                total_tokens: 167,
                cost: None,
                cache_savings: None
            }
        );
        let parts = &reply.message.parts;
        assert_eq!(parts.len(), 4, "{parts:?}");
        let Part::Thinking(thinking) = &parts[0] else {
            panic!("{parts:?}")
        };
        assert_eq!(
            (thinking.content.as_str(), thinking.signature.as_deref()),
            ("Let me see.", Some("EqQB"))
        );
        let Part::Thinking(redacted) = &parts[1] else {
            panic!("{parts:?}")
        };
        assert_eq!(redacted.data.as_deref(), Some("EmwK"));
        assert_eq!(parts[2], Part::text("Reading."));
        let Part::ToolCall(call) = &parts[3] else {
            panic!("{parts:?}")
        };
        assert_eq!(call.id, "toolu_1");
        assert_eq!(call.arguments, json!({"path": "a.rs"}));
    }

    #[test]
    fn error_events_end_the_stream_classified() {
        let mut events = recorded()[..4].to_vec();
        events.push(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let got = run(&events);
        let err = got.last().unwrap().clone().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Server);
        assert_eq!(err.message, "Overloaded");
        assert_eq!(err.code.as_deref(), Some("overloaded_error"));
        assert!(got[..got.len() - 1].iter().all(Result::is_ok));
        assert!(got.contains(&Ok(StreamEvent::ThinkingDelta {
            text: "Let me ".into(),
            signature: None
        })));
    }

    #[test]
    fn a_stream_without_message_stop_is_incomplete() {
        let got = run(&recorded()[..11]);
        assert_eq!(
            got.last().unwrap().clone().unwrap_err().message,
            "the stream from Anthropic ended before the reply was complete (no message_stop)"
        );
        assert!(got.contains(&Ok(StreamEvent::TextDelta {
            text: "Reading.".into()
        })));
    }
}
