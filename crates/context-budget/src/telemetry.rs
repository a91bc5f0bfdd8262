//! The send telemetry, serialized with the schema's exact field names.

use serde::Serialize;
use ybs_core::Message;

use crate::predict::counter_text;

/// Where a send stands when a [`Telemetry`] record is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The first attempt, as predicted, is about to be sent.
    Initial,
    /// The preflight trim (Option B) dropped pairs before the first attempt.
    PreflightTrim,
    /// The first attempt overflowed; a retry with one pair fewer is about to be sent.
    OverflowInitial,
    /// A retry overflowed again; another retry with one pair fewer is about to be sent.
    OverflowRetry,
    /// Overflow with no pair or attempt left: the send failed with
    /// `context_overflow_after_trimming`.
    OverflowExhausted,
    /// The prompt alone exceeds ML: the send was refused with `user_prompt_too_large`.
    UserPromptTooLarge,
    /// An attempt succeeded.
    Success,
    /// An attempt failed with an error that is not an overflow; the loop stopped.
    Error,
}

impl Stage {
    /// The label as serialized (`overflow_initial`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Stage::Initial => "initial",
            Stage::PreflightTrim => "preflight_trim",
            Stage::OverflowInitial => "overflow_initial",
            Stage::OverflowRetry => "overflow_retry",
            Stage::OverflowExhausted => "overflow_exhausted",
            Stage::UserPromptTooLarge => "user_prompt_too_large",
            Stage::Success => "success",
            Stage::Error => "error",
        }
    }
}

/// `budget` of the telemetry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TelemetryBudget {
    /// ML.
    pub max_context: usize,
    /// What history may use: `ML - URA` (minus reserved tokens, if any).
    pub max_usable_raw: usize,
}

/// One entry of `selection`: a pair of the current attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectionEntry {
    /// The pair's id.
    pub id: String,
    /// The model that answered the pair, when known.
    pub model: Option<String>,
    /// The pair's tokens.
    pub tokens: usize,
}

/// One entry of `messages`: a message of the attempt's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TelemetryMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The message's text parts, joined.
    pub content: String,
}

impl TelemetryMessage {
    /// The role and text of a core message.
    pub fn from_message(message: &Message) -> TelemetryMessage {
        TelemetryMessage {
            role: message.role.as_str().to_owned(),
            content: message.text_content(),
        }
    }
}

/// One telemetry record:
/// `{ model, budget:{maxContext,maxUsableRaw}, selection:[{id,model,tokens}],
/// predictedMessageCount, predictedHistoryTokens, predictedTotalTokens, attemptHistoryTokens,
/// attemptTotalTokens, AUT, trimmedCount, attemptsUsed, charsPerToken, remainingReserve, stage,
/// lastErrorMessage?, overflowMatched?, messages[] }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Telemetry {
    /// The model the send uses.
    pub model: String,
    /// ML and what history may use.
    pub budget: TelemetryBudget,
    /// The pairs of the current attempt, oldest first.
    pub selection: Vec<SelectionEntry>,
    /// X.
    pub predicted_message_count: usize,
    /// The tokens of the X predicted pairs (frozen).
    pub predicted_history_tokens: usize,
    /// `predictedHistoryTokens + URA` (frozen).
    pub predicted_total_tokens: usize,
    /// The tokens of the pairs still included in this attempt.
    pub attempt_history_tokens: usize,
    /// `attemptHistoryTokens + AUT`.
    pub attempt_total_tokens: usize,
    /// The new prompt's tokens.
    #[serde(rename = "AUT")]
    pub aut: usize,
    /// T: pairs trimmed so far.
    pub trimmed_count: usize,
    /// Attempts sent and answered so far.
    pub attempts_used: usize,
    /// The chars-per-token ratio when counting with the heuristic, `null` with a BPE counter.
    pub chars_per_token: Option<f64>,
    /// `ML - attemptTotalTokens` (minus reserved tokens): the room left in this attempt;
    /// negative when the attempt is predicted to overflow.
    pub remaining_reserve: i64,
    /// Where the send stands.
    pub stage: Stage,
    /// The provider's message of the last failed attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error_message: Option<String>,
    /// Whether the last failed attempt was classified as a context overflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflow_matched: Option<bool>,
    /// The payload of the current attempt. The budget works on counts, so it leaves this
    /// empty; the caller that builds the payload fills it (see
    /// [`TelemetryMessage::from_message`]).
    pub messages: Vec<TelemetryMessage>,
}

impl Telemetry {
    /// `sentCount = predictedMessageCount - trimmedCount`.
    pub fn sent_count(&self) -> usize {
        self.predicted_message_count
            .saturating_sub(self.trimmed_count)
    }

    /// The counter text: `X / Y` without trimming, `[X-T]/Y` with, for `visible` (Y) pairs.
    pub fn counter_text(&self, visible: usize) -> String {
        counter_text(self.predicted_message_count, self.trimmed_count, visible)
    }

    /// Sets `messages` from the attempt's payload.
    pub fn with_messages<'a>(mut self, messages: impl IntoIterator<Item = &'a Message>) -> Self {
        self.messages = messages
            .into_iter()
            .map(TelemetryMessage::from_message)
            .collect();
        self
    }

    /// The record as JSON text.
    pub fn to_json(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail; fall back to an empty
        // object rather than panic if serde_json ever disagrees (a NaN ratio becomes `null`).
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_labels() {
        let all = [
            (Stage::Initial, "initial"),
            (Stage::PreflightTrim, "preflight_trim"),
            (Stage::OverflowInitial, "overflow_initial"),
            (Stage::OverflowRetry, "overflow_retry"),
            (Stage::OverflowExhausted, "overflow_exhausted"),
            (Stage::UserPromptTooLarge, "user_prompt_too_large"),
            (Stage::Success, "success"),
            (Stage::Error, "error"),
        ];
        for (stage, label) in all {
            assert_eq!(stage.label(), label);
            assert_eq!(serde_json::to_value(stage).unwrap(), label);
        }
    }
}
