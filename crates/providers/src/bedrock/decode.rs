//! ConverseStream events -> `StreamEvent`s. The events arrive as event-stream messages (cut
//! by `framing`), each a JSON payload named by its `:event-type`: `messageStart`,
//! `contentBlockStart` (a tool call's id and name), `contentBlockDelta` (text, a tool
//! call's input JSON, reasoning text, its signature or redacted reasoning),
//! `contentBlockStop`, `messageStop` (the stop reason) and, last, `metadata` (the usage).
//! An exception the service raises mid-stream arrives as a frame named
//! `exception:<type>`.

use std::collections::HashSet;

use serde_json::Value;
use ybs_core::{FinishReason, LlmError, StreamEvent, Usage};

use super::errors::kind_of;
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{llm_error, malformed};
use crate::framing::Frame;

/// The prefix of the name the framing gives an exception message.
pub(crate) const EXCEPTION: &str = "exception:";

/// The decoder of one ConverseStream reply.
#[derive(Debug, Default)]
pub(crate) struct BedrockDecoder {
    tool_blocks: HashSet<usize>,
    stop_reason: Option<String>,
    done: bool,
}

/// Our finish reason for a Converse `stopReason`.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Our usage of a Converse `usage` object. Converse's `inputTokens` leaves out the tokens
/// read from or written to the cache; ours counts the whole prompt.
pub(crate) fn usage(wire: &Value) -> Usage {
    let count = |name: &str| wire.get(name).and_then(Value::as_u64).unwrap_or_default();
    let cached = count("cacheReadInputTokens");
    let written = count("cacheWriteInputTokens");
    let mut usage = Usage {
        prompt_tokens: count("inputTokens") + cached + written,
        completion_tokens: count("outputTokens"),
        cached_tokens: cached,
        cache_write_tokens: written,
        ..Usage::default()
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    usage
}

impl BedrockDecoder {
    fn finish_event(&mut self) -> StreamEvent {
        self.done = true;
        let finish_reason = (self.stop_reason.as_deref()).map_or(FinishReason::Stop, finish_reason);
        StreamEvent::Done { finish_reason }
    }
}

impl Decoder for BedrockDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let payload: Value = serde_json::from_str(&frame.data)
            .map_err(|error| malformed(ProviderKind::Bedrock, &error.to_string(), &frame.data))?;
        if let Some(kind) = frame.event.strip_prefix(EXCEPTION) {
            let message = (payload.get("message").or_else(|| payload.get("Message")))
                .and_then(Value::as_str)
                .unwrap_or("Amazon Bedrock reported an error mid-stream")
                .to_owned();
            let mut error = llm_error(None, Some(kind.to_owned()), message);
            if let Some(exact) = kind_of(kind, &error.message, None) {
                error.kind = exact;
            }
            return Err(error);
        }
        let index = payload
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or_default() as usize;
        match frame.event.as_str() {
            "contentBlockStart" => {
                if let Some(tool) = payload.pointer("/start/toolUse") {
                    let text = |name: &str| tool[name].as_str().unwrap_or_default().to_owned();
                    self.tool_blocks.insert(index);
                    out.push(StreamEvent::ToolCallStart {
                        index,
                        id: text("toolUseId"),
                        name: text("name"),
                    });
                }
            }
            "contentBlockDelta" => {
                let delta = &payload["delta"];
                let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
                if let Some(value) = delta.get("text") {
                    push_text(out, text(value));
                } else if let Some(input) = delta.pointer("/toolUse/input") {
                    let arguments = text(input);
                    if !arguments.is_empty() && self.tool_blocks.contains(&index) {
                        out.push(StreamEvent::ToolCallDelta { index, arguments });
                    }
                } else if let Some(reasoning) = delta.get("reasoningContent") {
                    if let Some(value) = reasoning.get("text") {
                        push_thinking(out, text(value));
                    }
                    if let Some(value) = reasoning.get("signature") {
                        out.push(StreamEvent::ThinkingDelta {
                            text: String::new(),
                            signature: Some(text(value)),
                        });
                    }
                    if let Some(value) = reasoning.get("redactedContent") {
                        out.push(StreamEvent::RedactedThinking { data: text(value) });
                    }
                }
            }
            "contentBlockStop" if self.tool_blocks.contains(&index) => {
                out.push(StreamEvent::ToolCallEnd { index });
            }
            "messageStop" => {
                self.stop_reason = payload["stopReason"].as_str().map(str::to_owned);
            }
            "metadata" => {
                if let Some(wire) = payload.get("usage") {
                    out.push(StreamEvent::Usage(usage(wire)));
                }
                if self.stop_reason.is_some() {
                    out.push(self.finish_event());
                }
            }
            // `messageStart` says only the role; events added later are skipped.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        // The usage is the one event that may be missing after the stop.
        if self.stop_reason.is_some() {
            out.push(self.finish_event());
            return Ok(());
        }
        Err(cut_short(ProviderKind::Bedrock, "no messageStop"))
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
