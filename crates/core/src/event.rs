use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::usage::Usage;

/// One thing a provider's stream reports. Adapters decode their wire formats into these;
/// the [`Accumulator`](crate::Accumulator) folds them into a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More reply text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// More reasoning text, or the signature that closes a reasoning block.
    ThinkingDelta {
        /// The new reasoning text (may be empty when only the signature arrives).
        text: String,
        /// The block's signature; it ends the block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A whole block of encrypted reasoning (Anthropic `redacted_thinking`).
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// One item of OpenRouter's `reasoning_details`, to be sent back later unchanged.
    ReasoningDetail {
        /// The item as received.
        detail: Value,
    },
    /// A tool call begins.
    ToolCallStart {
        /// The provider's index of the call within the reply.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More argument text of a tool call.
    ToolCallDelta {
        /// The provider's index of the call.
        index: usize,
        /// The new argument text.
        arguments: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// The provider's index of the call.
        index: usize,
    },
    /// The provider's id of this reply, by which a later request can continue it (OpenAI
    /// Responses `response.id`).
    ResponseId {
        /// The id.
        id: String,
    },
    /// Token counts so far (cumulative).
    Usage(Usage),
    /// The reply is complete.
    Done {
        /// Why the model stopped.
        finish_reason: FinishReason,
    },
}

/// Why a model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its reply (or hit a stop sequence).
    Stop,
    /// It ran out of tokens.
    Length,
    /// It wants tools to run.
    ToolCalls,
    /// The provider filtered the reply.
    ContentFilter,
    /// Something else, named by the provider.
    Other(String),
}

impl FinishReason {
    /// Maps the finish reasons of OpenAI, Anthropic and Ollama to one of ours.
    pub fn from_provider(reason: &str) -> FinishReason {
        match reason {
            "stop" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "length" | "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}
