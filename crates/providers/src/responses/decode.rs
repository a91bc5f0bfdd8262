//! Responses stream events -> `StreamEvent`s.

use std::collections::HashMap;

use serde_json::Value;
use ybs_core::{FinishReason, LlmError, StreamEvent, Usage};

use super::wire::{Event, Response, WireUsage};
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{error_parts, error_status, malformed, stream_error};
use crate::framing::Frame;

const KIND: ProviderKind = ProviderKind::Responses;

/// Decodes the `data:` frames of a streamed response until `response.completed` (or
/// `.incomplete`).
///
/// The response's id comes first (`response.created`); text, reasoning summaries (or the
/// reasoning text of open models) and function-call arguments as they stream. A finished
/// reasoning item is passed on whole as a reasoning detail, to go back with the next request;
/// a message or call whose deltas never came is taken from its finished item. Hosted web
/// searches run on the server and only their results' text reaches the reply.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    /// Output index -> our index of the function call there.
    calls: HashMap<usize, usize>,
    /// Our calls: whether any argument text arrived.
    call_arguments: Vec<bool>,
    /// Output indexes of items whose text (or reasoning) streamed as deltas.
    streamed: Vec<usize>,
    /// Item ids seen in events without an `output_index`, in order: their position stands in.
    item_ids: Vec<String>,
    id_sent: bool,
    done: bool,
}

pub(crate) fn usage(wire: &WireUsage) -> Usage {
    Usage {
        prompt_tokens: wire.input_tokens.unwrap_or_default(),
        completion_tokens: wire.output_tokens.unwrap_or_default(),
        cached_tokens: wire
            .input_tokens_details
            .as_ref()
            .and_then(|details| details.cached_tokens)
            .unwrap_or_default(),
        reasoning_tokens: wire
            .output_tokens_details
            .as_ref()
            .and_then(|details| details.reasoning_tokens)
            .unwrap_or_default(),
        total_tokens: wire.total_tokens.unwrap_or_default(),
        ..Usage::default()
    }
}

fn str_field<'a>(item: &'a Value, key: &str) -> &'a str {
    item.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl ResponsesDecoder {
    /// Where an event's item sits: its `output_index`, else (servers that leave it out) a
    /// number for its item id, past any real index.
    fn position(&mut self, event: &Event) -> usize {
        if let Some(index) = event.output_index {
            return index;
        }
        let id = event
            .item_id
            .as_deref()
            .or_else(|| {
                event
                    .item
                    .as_ref()
                    .and_then(|item| item.get("id")?.as_str())
            })
            .unwrap_or_default();
        let at = match self.item_ids.iter().position(|known| known == id) {
            Some(at) => at,
            None => {
                self.item_ids.push(id.to_owned());
                self.item_ids.len() - 1
            }
        };
        usize::MAX / 2 + at
    }

    fn response_id(&mut self, response: Option<&Response>, out: &mut Vec<StreamEvent>) {
        if self.id_sent {
            return;
        }
        if let Some(id) = response
            .and_then(|response| response.id.clone())
            .filter(|id| !id.is_empty())
        {
            self.id_sent = true;
            out.push(StreamEvent::ResponseId { id });
        }
    }

    fn call_added(&mut self, output_index: usize, item: &Value, out: &mut Vec<StreamEvent>) {
        if self.calls.contains_key(&output_index) {
            return;
        }
        let index = self.call_arguments.len();
        self.calls.insert(output_index, index);
        self.call_arguments.push(false);
        let id = match str_field(item, "call_id") {
            "" => format!("call_{index}"),
            id => id.to_owned(),
        };
        out.push(StreamEvent::ToolCallStart {
            index,
            id,
            name: str_field(item, "name").to_owned(),
        });
    }

    fn item_done(&mut self, output_index: usize, item: Value, out: &mut Vec<StreamEvent>) {
        let streamed = self.streamed.contains(&output_index);
        match str_field(&item, "type") {
            "function_call" => {
                self.call_added(output_index, &item, out);
                let index = self.calls.get(&output_index).copied().unwrap_or_default();
                let had_arguments = self.call_arguments.get(index).copied().unwrap_or(true);
                let arguments = str_field(&item, "arguments");
                if !had_arguments && !arguments.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: arguments.to_owned(),
                    });
                }
                out.push(StreamEvent::ToolCallEnd { index });
            }
            "message" if !streamed => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    push_text(out, str_field(part, "text").to_owned());
                    push_text(out, str_field(part, "refusal").to_owned());
                }
            }
            "reasoning" => {
                if !streamed {
                    let texts = ["summary", "content"].into_iter().flat_map(|key| {
                        item.get(key)
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                    });
                    let text: Vec<&str> = texts.map(|part| str_field(part, "text")).collect();
                    push_thinking(out, text.join("\n\n"));
                }
                out.push(StreamEvent::ReasoningDetail { detail: item });
            }
            _ => {}
        }
    }

    fn finish_reason(&self, response: Option<&Response>) -> FinishReason {
        let incomplete = response
            .and_then(|response| response.incomplete_details.as_ref())
            .map(|details| str_field(details, "reason"));
        match incomplete {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) if !other.is_empty() => FinishReason::Other(other.to_owned()),
            _ if !self.call_arguments.is_empty() => FinishReason::ToolCalls,
            _ => FinishReason::Stop,
        }
    }
}

impl Decoder for ResponsesDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let data = frame.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let event: Event = serde_json::from_str(data)
            .map_err(|error| malformed(KIND, &error.to_string(), data))?;
        let output_index = self.position(&event);
        match event.kind.as_str() {
            "response.created" | "response.in_progress" => {
                self.response_id(event.response.as_ref(), out);
            }
            "response.output_item.added" => {
                if let Some(item) = &event.item
                    && str_field(item, "type") == "function_call"
                {
                    self.call_added(output_index, item, out);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.streamed.push(output_index);
                push_text(out, event.delta.unwrap_or_default());
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.streamed.push(output_index);
                push_thinking(out, event.delta.unwrap_or_default());
            }
            "response.reasoning_summary_part.added" if self.streamed.contains(&output_index) => {
                push_thinking(out, "\n\n".to_owned());
            }
            "response.function_call_arguments.delta" => {
                let delta = event.delta.unwrap_or_default();
                if let Some(&index) = self.calls.get(&output_index)
                    && !delta.is_empty()
                {
                    if let Some(seen) = self.call_arguments.get_mut(index) {
                        *seen = true;
                    }
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: delta,
                    });
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    self.item_done(output_index, item, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.response_id(event.response.as_ref(), out);
                if let Some(wire) = event.response.as_ref().and_then(|r| r.usage.as_ref()) {
                    out.push(StreamEvent::Usage(usage(wire)));
                }
                out.push(StreamEvent::Done {
                    finish_reason: self.finish_reason(event.response.as_ref()),
                });
                self.done = true;
            }
            "response.failed" | "error" => {
                let error = event
                    .response
                    .and_then(|response| response.error)
                    .or(event.error);
                let (message, code) = match &error {
                    Some(error) => error_parts(error),
                    None => (
                        event.message.unwrap_or_default(),
                        event
                            .code
                            .as_ref()
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    ),
                };
                let status = error.as_ref().and_then(error_status);
                return Err(stream_error(KIND, status, code, message));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            Ok(())
        } else {
            Err(cut_short(KIND, "no response.completed event"))
        }
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
