//! Folds a provider's [`StreamEvent`]s into the final assistant message.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::event::{FinishReason, StreamEvent};
use crate::message::{Message, Role};
use crate::part::{Part, Thinking, ToolCall};
use crate::usage::Usage;

/// A complete (or, after a broken stream, partial) reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The assistant message: text and thinking parts in arrival order, then tool calls
    /// ordered by their provider index.
    pub message: Message,
    /// Token counts and cost.
    pub usage: Usage,
    /// Why the model stopped; `None` when the stream ended without saying.
    pub finish_reason: Option<FinishReason>,
    /// The provider's id of the reply, when it gives one (OpenAI Responses).
    pub response_id: Option<String>,
}

/// Folds [`StreamEvent`]s into a [`Reply`].
///
/// Consecutive text deltas join into one text part; consecutive thinking deltas into one
/// thinking part until a signature closes it. Tool-call deltas are assembled by index, in any
/// interleaving. [`finish`](Accumulator::finish) may be called at any point: a stream that
/// ends early still yields everything received so far, and a tool call whose arguments are
/// not valid JSON is kept with its raw text and flagged, never dropped.
#[derive(Debug, Clone, Default)]
pub struct Accumulator {
    parts: Vec<Part>,
    calls: BTreeMap<usize, PendingCall>,
    usage: Usage,
    finish_reason: Option<FinishReason>,
    response_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Accumulator::default()
    }

    /// Takes in one event.
    pub fn push(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.push_text(text),
            StreamEvent::ThinkingDelta { text, signature } => self.push_thinking(text, signature),
            StreamEvent::RedactedThinking { data } => self.parts.push(Part::Thinking(Thinking {
                data: Some(data),
                ..Thinking::default()
            })),
            StreamEvent::ReasoningDetail { detail } => self.push_detail(detail),
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.calls.entry(index).or_default();
                if !id.is_empty() {
                    call.id = id;
                }
                if !name.is_empty() {
                    call.name = name;
                }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                self.calls
                    .entry(index)
                    .or_default()
                    .arguments
                    .push_str(&arguments);
            }
            StreamEvent::ToolCallEnd { .. } => {}
            StreamEvent::Usage(usage) => self.usage = self.usage.merge_max(usage),
            StreamEvent::Done { finish_reason } => self.finish_reason = Some(finish_reason),
            StreamEvent::ResponseId { id } => self.response_id = Some(id),
        }
    }

    /// The text received so far.
    pub fn text(&self) -> String {
        Message::new(Role::Assistant, self.parts.clone()).text_content()
    }

    /// The reply so far.
    pub fn finish(self) -> Reply {
        let mut parts = self.parts;
        parts.extend(self.calls.into_values().map(|call| {
            Part::ToolCall(ToolCall::from_raw_arguments(
                call.id,
                call.name,
                &call.arguments,
            ))
        }));
        Reply {
            message: Message::new(Role::Assistant, parts),
            usage: self.usage.with_total(),
            finish_reason: self.finish_reason,
            response_id: self.response_id,
        }
    }

    fn push_text(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        if let Some(Part::Text { content }) = self.parts.last_mut() {
            content.push_str(&text);
        } else {
            self.parts.push(Part::Text { content: text });
        }
    }

    fn push_thinking(&mut self, text: String, signature: Option<String>) {
        if text.is_empty() && signature.is_none() {
            return;
        }
        let thinking = self.open_thinking();
        thinking.content.push_str(&text);
        if signature.is_some() {
            thinking.signature = signature;
        }
    }

    /// The thinking part still taking text: the last part, if it is thinking that no
    /// signature or redacted data has closed; otherwise a new one.
    fn open_thinking(&mut self) -> &mut Thinking {
        let open = matches!(
            self.parts.last(),
            Some(Part::Thinking(Thinking {
                signature: None,
                data: None,
                ..
            }))
        );
        if !open {
            self.parts.push(Part::Thinking(Thinking::default()));
        }
        match self.parts.last_mut() {
            Some(Part::Thinking(thinking)) => thinking,
            _ => unreachable!("a thinking part was just ensured at the end"),
        }
    }

    /// OpenRouter streams `reasoning_details` as pieces of items that share an `index` and a
    /// `type`; pieces of the same item are joined (their text fields concatenated, other
    /// fields taken from the latest piece) so the list sent back is the one the model made.
    fn push_detail(&mut self, detail: Value) {
        let thinking = self.open_thinking();
        let details = thinking.details.get_or_insert_with(Vec::new);
        let same_item = |last: &Value| {
            last.get("index").is_some()
                && last.get("index") == detail.get("index")
                && last.get("type") == detail.get("type")
        };
        match details.last_mut() {
            Some(last) if same_item(last) => merge_detail(last, detail),
            _ => details.push(detail),
        }
    }
}

fn merge_detail(into: &mut Value, piece: Value) {
    let (Some(into), Value::Object(piece)) = (into.as_object_mut(), piece) else {
        return;
    };
    for (key, value) in piece {
        let joined = match (key.as_str(), into.get(&key), &value) {
            ("text" | "summary" | "data", Some(Value::String(old)), Value::String(new)) => {
                Some(Value::String(format!("{old}{new}")))
            }
            _ => None,
        };
        match joined {
            Some(joined) => into.insert(key, joined),
            None if value.is_null() => None,
            None => into.insert(key, value),
        };
    }
}
