//! The overflow trim loop of spec section 7.2, as a sans-IO state machine.
//!
//! ```text
//! TrimLoop::start ──► attempt() ──► caller sends ──► report(outcome)
//!                        ▲                               │
//!                        └──── Next::Retry(loop) ◄───────┤ overflow, pairs and attempts left
//!                                                        └► Next::Done(Finished)
//! ```
//!
//! The loop never counts or sends anything itself: it hands out which pairs attempt N
//! carries, and the caller reports what the provider said.

use std::ops::Range;

use ybs_core::{ErrorKind, LlmError, classify};

use crate::error::{BudgetError, SendError};
use crate::predict::{Budget, Prediction};
use crate::telemetry::{SelectionEntry, Stage, Telemetry, TelemetryBudget};

/// What the budget knows of one visible pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairInfo {
    /// The pair's id.
    pub id: String,
    /// The model that answered it, when known.
    pub model: Option<String>,
    /// Its token count.
    pub tokens: usize,
}

impl PairInfo {
    /// A pair with an id and a token count.
    pub fn new(id: impl Into<String>, tokens: usize) -> PairInfo {
        PairInfo {
            id: id.into(),
            model: None,
            tokens,
        }
    }
}

/// One attempt to send: which pairs it carries and its token figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first attempt, 2 for the first retry, ...
    pub number: usize,
    /// The pairs to send, as indices into the visible pairs (a newest suffix).
    pub history: Range<usize>,
    /// The tokens of those pairs.
    pub attempt_history_tokens: usize,
    /// `attempt_history_tokens + AUT`.
    pub attempt_total_tokens: usize,
}

/// What the provider said about an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The model answered.
    Success,
    /// The call failed. A context overflow (by its kind, or by [`classify`] of its status,
    /// code and message) trims; anything else ends the loop.
    Failed(LlmError),
}

/// A send that delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The attempt that succeeded (FinalDeliveredPayload is its pairs plus the prompt).
    pub attempt: Attempt,
    /// The pairs dropped by trimming (TrimmingRemovedPayload), oldest first.
    pub removed: Range<usize>,
    /// Their tokens (TrimmingRemovedTokens).
    pub removed_tokens: usize,
}

/// How a send ended, with the last telemetry record.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The delivery, or why there was none.
    pub result: Result<Delivery, SendError>,
    /// The record of the last attempt (or of the refusal).
    pub telemetry: Telemetry,
}

/// What to do after reporting an outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Send [`TrimLoop::attempt`] of the returned loop: one pair fewer than the last attempt.
    Retry(TrimLoop),
    /// The send is over.
    Done(Finished),
}

/// The state of one send's trim loop. See the module docs.
///
/// Invariants: the predicted figures never change; each overflow drops exactly the oldest
/// remaining predicted pair, so the attempt's history only shrinks; at most
/// [`Budget::max_trim_attempts`] overflow trims happen.
#[derive(Debug, Clone, PartialEq)]
pub struct TrimLoop {
    model: String,
    pairs: Vec<PairInfo>,
    prediction: Prediction,
    budget: Budget,
    aut: usize,
    chars_per_token: Option<f64>,
    /// T: pairs dropped so far (preflight and overflow).
    trimmed: usize,
    /// Pairs dropped by overflow retries, bounded by NTA.
    overflow_trims: usize,
    attempts_used: usize,
    stage: Stage,
    last_error_message: Option<String>,
    overflow_matched: Option<bool>,
}

/// Whether a failed call was a context overflow: its kind says so, or the core classifier
/// says so from its status, code and message.
pub fn is_overflow(error: &LlmError) -> bool {
    error.kind == ErrorKind::ContextOverflow
        || classify(error.status, error.code.as_deref(), &error.message)
            == ErrorKind::ContextOverflow
}

impl TrimLoop {
    /// Starts a send of the prompt of `aut` tokens with the visible `pairs` and their
    /// `prediction` (from [`predict`](crate::predict()) over the same pairs and budget).
    ///
    /// Refuses with `user_prompt_too_large` when `AUT (+ reserved) > ML`, before any attempt.
    /// With [`Budget::preflight_trim`] on, drops oldest predicted pairs while
    /// `history + AUT (+ reserved) > ML`. `chars_per_token` is only reported in telemetry.
    pub fn start(
        model: impl Into<String>,
        pairs: Vec<PairInfo>,
        prediction: Prediction,
        aut: usize,
        budget: Budget,
        chars_per_token: Option<f64>,
    ) -> Result<TrimLoop, Box<Finished>> {
        let mut state = TrimLoop {
            model: model.into(),
            pairs,
            prediction,
            budget,
            aut,
            chars_per_token,
            trimmed: 0,
            overflow_trims: 0,
            attempts_used: 0,
            stage: Stage::Initial,
            last_error_message: None,
            overflow_matched: None,
        };
        let prompt = aut.saturating_add(budget.reserved_tokens);
        if prompt > budget.model_limit {
            state.stage = Stage::UserPromptTooLarge;
            let error = BudgetError::UserPromptTooLarge {
                aut,
                model_limit: budget.model_limit,
            };
            return Err(Box::new(state.finish(Err(error.into()))));
        }
        if budget.preflight_trim {
            while state.remaining() > 0
                && state.attempt_history_tokens().saturating_add(prompt) > budget.model_limit
            {
                state.trimmed += 1;
                state.stage = Stage::PreflightTrim;
            }
        }
        Ok(state)
    }

    /// The attempt to send now.
    pub fn attempt(&self) -> Attempt {
        let history = self.history();
        let attempt_history_tokens = self.attempt_history_tokens();
        Attempt {
            number: self.attempts_used + 1,
            history,
            attempt_history_tokens,
            attempt_total_tokens: attempt_history_tokens.saturating_add(self.aut),
        }
    }

    /// Reports the outcome of [`attempt`](TrimLoop::attempt) and says what comes next.
    pub fn report(mut self, outcome: Outcome) -> Next {
        self.attempts_used += 1;
        let error = match outcome {
            Outcome::Success => {
                self.stage = Stage::Success;
                let removed = self.prediction.included.start..self.history().start;
                let removed_tokens = self.tokens_of(removed.clone());
                let delivery = Delivery {
                    attempt: Attempt {
                        number: self.attempts_used,
                        ..self.attempt()
                    },
                    removed,
                    removed_tokens,
                };
                return Next::Done(self.finish(Ok(delivery)));
            }
            Outcome::Failed(error) => error,
        };
        let overflow = is_overflow(&error);
        self.last_error_message = Some(error.message.clone());
        self.overflow_matched = Some(overflow);
        if !overflow {
            self.stage = Stage::Error;
            return Next::Done(self.finish(Err(error.into())));
        }
        if self.remaining() == 0 || self.overflow_trims >= self.budget.max_trim_attempts {
            self.stage = Stage::OverflowExhausted;
            let error = BudgetError::ContextOverflowAfterTrimming {
                predicted: self.prediction.predicted_message_count(),
                trimmed: self.trimmed,
                attempts: self.attempts_used,
            };
            return Next::Done(self.finish(Err(error.into())));
        }
        self.stage = if self.attempts_used == 1 {
            Stage::OverflowInitial
        } else {
            Stage::OverflowRetry
        };
        self.trimmed += 1;
        self.overflow_trims += 1;
        Next::Retry(self)
    }

    /// T: pairs trimmed so far.
    pub fn trimmed_count(&self) -> usize {
        self.trimmed
    }

    /// Attempts answered so far.
    pub fn attempts_used(&self) -> usize {
        self.attempts_used
    }

    /// The frozen prediction the loop trims.
    pub fn prediction(&self) -> &Prediction {
        &self.prediction
    }

    /// The telemetry record of the current state (the attempt about to be sent).
    pub fn telemetry(&self) -> Telemetry {
        let attempt = self.attempt();
        let ml = i64::try_from(self.budget.model_limit).unwrap_or(i64::MAX);
        let used = i64::try_from(
            attempt
                .attempt_total_tokens
                .saturating_add(self.budget.reserved_tokens),
        )
        .unwrap_or(i64::MAX);
        Telemetry {
            model: self.model.clone(),
            budget: TelemetryBudget {
                max_context: self.budget.model_limit,
                max_usable_raw: self.budget.max_usable_raw(),
            },
            selection: self
                .pairs
                .get(attempt.history.clone())
                .unwrap_or_default()
                .iter()
                .map(|pair| SelectionEntry {
                    id: pair.id.clone(),
                    model: pair.model.clone(),
                    tokens: pair.tokens,
                })
                .collect(),
            predicted_message_count: self.prediction.predicted_message_count(),
            predicted_history_tokens: self.prediction.predicted_history_tokens,
            predicted_total_tokens: self.prediction.predicted_total_tokens,
            attempt_history_tokens: attempt.attempt_history_tokens,
            attempt_total_tokens: attempt.attempt_total_tokens,
            aut: self.aut,
            trimmed_count: self.trimmed,
            attempts_used: self.attempts_used,
            chars_per_token: self.chars_per_token,
            remaining_reserve: ml.saturating_sub(used),
            stage: self.stage,
            last_error_message: self.last_error_message.clone(),
            overflow_matched: self.overflow_matched,
            messages: Vec::new(),
        }
    }

    fn finish(&self, result: Result<Delivery, SendError>) -> Finished {
        Finished {
            result,
            telemetry: self.telemetry(),
        }
    }

    /// The predicted pairs still included.
    fn history(&self) -> Range<usize> {
        let included = &self.prediction.included;
        (included.start + self.trimmed).min(included.end)..included.end
    }

    fn remaining(&self) -> usize {
        self.history().len()
    }

    fn attempt_history_tokens(&self) -> usize {
        self.tokens_of(self.history())
    }

    fn tokens_of(&self, range: Range<usize>) -> usize {
        self.pairs
            .get(range)
            .unwrap_or_default()
            .iter()
            .fold(0usize, |sum, pair| sum.saturating_add(pair.tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::predict;
    use ybs_core::Message;

    fn pairs(tokens: &[usize]) -> Vec<PairInfo> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, &t)| PairInfo::new(format!("p{i}"), t))
            .collect()
    }

    fn start(tokens: &[usize], aut: usize, budget: Budget) -> TrimLoop {
        let visible = pairs(tokens);
        let counts: Vec<usize> = visible.iter().map(|p| p.tokens).collect();
        let prediction = predict(&counts, &budget);
        TrimLoop::start("gpt", visible, prediction, aut, budget, Some(3.5)).unwrap()
    }

    fn overflow() -> Outcome {
        Outcome::Failed(LlmError::from_response(
            400,
            Some("context_length_exceeded"),
            "This model's maximum context length is 1000 tokens",
        ))
    }

    #[test]
    fn success_on_first_attempt_sends_the_prediction() {
        let budget = Budget::new(1000, None);
        let state = start(&[300, 200, 400, 250, 150], 50, budget);
        let attempt = state.attempt();
        assert_eq!(attempt.number, 1);
        assert_eq!(attempt.history, 2..5);
        assert_eq!(attempt.attempt_history_tokens, 800);
        assert_eq!(attempt.attempt_total_tokens, 850);
        assert_eq!(state.telemetry().stage, Stage::Initial);
        let Next::Done(done) = state.report(Outcome::Success) else {
            panic!("expected done")
        };
        let delivery = done.result.unwrap();
        assert_eq!(delivery.attempt.number, 1);
        assert_eq!(delivery.removed, 2..2);
        assert_eq!(done.telemetry.stage, Stage::Success);
        assert_eq!(done.telemetry.counter_text(5), "3 / 5");
    }

    /// Spec 7.1, "initial attempt relationships".
    #[test]
    fn first_attempt_relationships() {
        let budget = Budget::new(1000, None);
        let state = start(&[300, 200, 400, 250, 150], 170, budget);
        let telemetry = state.telemetry();
        assert_eq!(
            telemetry.attempt_history_tokens,
            telemetry.predicted_history_tokens
        );
        assert_eq!(
            telemetry.attempt_total_tokens,
            telemetry.predicted_history_tokens + telemetry.aut
        );
        assert_eq!(
            telemetry.attempt_total_tokens,
            telemetry.predicted_total_tokens + telemetry.aut - budget.user_request_allowance
        );
        assert_eq!(telemetry.trimmed_count, 0);
        assert_eq!(telemetry.attempts_used, 0);
        // AUT 170 is larger than URA 100: still sent as predicted (Option A), 970 <= 1000.
        assert_eq!(telemetry.remaining_reserve, 30);
    }

    #[test]
    fn each_overflow_drops_exactly_the_oldest_pair() {
        let budget = Budget::new(1000, None);
        let mut state = start(&[300, 200, 400, 250, 150], 500, budget);
        // Attempt 1: 800 + 500 = 1300, the provider overflows.
        let Next::Retry(next) = state.report(overflow()) else {
            panic!("expected retry")
        };
        state = next;
        assert_eq!(state.telemetry().stage, Stage::OverflowInitial);
        assert_eq!(state.attempt().history, 3..5);
        assert_eq!(state.attempt().attempt_history_tokens, 400);
        assert_eq!(state.attempt().number, 2);
        let Next::Retry(next) = state.report(overflow()) else {
            panic!("expected retry")
        };
        state = next;
        assert_eq!(state.telemetry().stage, Stage::OverflowRetry);
        assert_eq!(state.attempt().history, 4..5);
        let Next::Done(done) = state.report(Outcome::Success) else {
            panic!("expected done")
        };
        let delivery = done.result.unwrap();
        assert_eq!(delivery.removed, 2..4);
        assert_eq!(delivery.removed_tokens, 650);
        assert_eq!(delivery.attempt.number, 3);
        assert_eq!(done.telemetry.trimmed_count, 2);
        assert_eq!(done.telemetry.attempts_used, 3);
        assert_eq!(done.telemetry.sent_count(), 1);
        assert_eq!(done.telemetry.counter_text(5), "[3-2]/5");
        assert_eq!(done.telemetry.overflow_matched, Some(true));
    }

    #[test]
    fn prompt_larger_than_ml_is_refused_before_any_attempt() {
        let budget = Budget::new(1000, None);
        let visible = pairs(&[10]);
        let prediction = predict(&[10], &budget);
        let refused = TrimLoop::start("gpt", visible, prediction, 1001, budget, None).unwrap_err();
        assert_eq!(
            refused.result.unwrap_err().to_string(),
            "user_prompt_too_large: the prompt is about 1001 tokens but the model limit is 1000; \
             shorten the prompt or pick a model with a larger context window"
        );
        assert_eq!(refused.telemetry.stage, Stage::UserPromptTooLarge);
        assert_eq!(refused.telemetry.attempts_used, 0);
        // Exactly ML is allowed.
        let prediction = predict(&[10], &budget);
        assert!(TrimLoop::start("gpt", pairs(&[10]), prediction, 1000, budget, None).is_ok());
    }

    #[test]
    fn overflow_after_nta_trims_gives_up() {
        let budget = Budget::new(100_000, None).with_max_trim_attempts(10);
        let mut state = start(&[10; 20], 5, budget);
        assert_eq!(state.prediction().predicted_message_count(), 20);
        let mut attempts = 0;
        let done = loop {
            attempts += 1;
            match state.report(overflow()) {
                Next::Retry(next) => state = next,
                Next::Done(done) => break done,
            }
        };
        assert_eq!(attempts, 11);
        let error = done.result.unwrap_err();
        assert_eq!(
            error.to_string(),
            "context_overflow_after_trimming: the model still reported a context overflow after \
             trimming 10 of 20 pairs in 11 attempts; hide older pairs with a filter, shorten the \
             prompt or pick a model with a larger context window"
        );
        let SendError::Budget(budget_error) = error else {
            panic!("expected a budget error")
        };
        assert_eq!(budget_error.code(), "context_overflow_after_trimming");
        assert_eq!(done.telemetry.stage, Stage::OverflowExhausted);
        assert_eq!(done.telemetry.trimmed_count, 10);
        assert_eq!(done.telemetry.counter_text(20), "[20-10]/20");
    }

    #[test]
    fn overflow_with_no_pair_left_gives_up() {
        let budget = Budget::new(1000, None);
        let mut state = start(&[100, 100], 5, budget);
        let mut attempts = 0;
        let done = loop {
            attempts += 1;
            match state.report(overflow()) {
                Next::Retry(next) => state = next,
                Next::Done(done) => break done,
            }
        };
        // Two pairs: attempts with 2, 1 and 0 pairs.
        assert_eq!(attempts, 3);
        assert_eq!(done.telemetry.trimmed_count, 2);
        assert_eq!(done.telemetry.sent_count(), 0);
        assert!(matches!(
            done.result,
            Err(SendError::Budget(
                BudgetError::ContextOverflowAfterTrimming { .. }
            ))
        ));
    }

    #[test]
    fn other_errors_end_the_loop_at_once() {
        let budget = Budget::new(1000, None);
        let state = start(&[100, 100], 5, budget);
        let error = LlmError::from_response(401, None, "Incorrect API key provided");
        let Next::Done(done) = state.report(Outcome::Failed(error.clone())) else {
            panic!("expected done")
        };
        assert_eq!(done.result, Err(SendError::Provider(error)));
        assert_eq!(done.telemetry.stage, Stage::Error);
        assert_eq!(done.telemetry.overflow_matched, Some(false));
        assert_eq!(
            done.telemetry.last_error_message.as_deref(),
            Some("Incorrect API key provided")
        );
        assert_eq!(done.telemetry.trimmed_count, 0);
    }

    #[test]
    fn overflow_is_recognised_from_the_message_even_if_unclassified() {
        let mut error = LlmError::new(ErrorKind::Unknown, "Request too large for gpt-4o");
        assert!(is_overflow(&error));
        error.message = "boom".into();
        assert!(!is_overflow(&error));
        assert!(is_overflow(&LlmError::new(ErrorKind::ContextOverflow, "x")));
    }

    #[test]
    fn preflight_trim_drops_oldest_pairs_before_the_first_attempt() {
        let budget = Budget::new(1000, None).with_preflight_trim(true);
        // Predicted: 250 + 150 + 400 = 800; AUT 500 needs history <= 500.
        let state = start(&[300, 200, 400, 250, 150], 500, budget);
        assert_eq!(state.attempt().history, 3..5);
        assert_eq!(state.trimmed_count(), 1);
        let telemetry = state.telemetry();
        assert_eq!(telemetry.stage, Stage::PreflightTrim);
        assert_eq!(telemetry.remaining_reserve, 1000 - 900);
        assert_eq!(telemetry.predicted_message_count, 3);
        // Off by default: the prediction is sent as is.
        let state = start(&[300, 200, 400, 250, 150], 500, Budget::new(1000, None));
        assert_eq!(state.attempt().history, 2..5);
        assert_eq!(state.telemetry().remaining_reserve, -300);
    }

    fn trimmed_send() -> Telemetry {
        let budget = Budget::new(1000, None);
        let pairs: Vec<PairInfo> = [300, 200, 400, 250, 150]
            .iter()
            .enumerate()
            .map(|(i, &tokens)| PairInfo {
                id: format!("p{i}"),
                model: Some("gpt-4o".into()),
                tokens,
            })
            .collect();
        let counts: Vec<usize> = pairs.iter().map(|p| p.tokens).collect();
        let prediction = predict(&counts, &budget);
        let state = TrimLoop::start("gpt-4o", pairs, prediction, 300, budget, Some(3.5)).unwrap();
        let error = LlmError::from_response(400, None, "Request too large for gpt-4o");
        let Next::Retry(state) = state.report(Outcome::Failed(error)) else {
            panic!("expected a retry")
        };
        state.telemetry()
    }

    #[test]
    fn fields_follow_the_schema() {
        let telemetry = trimmed_send().with_messages(&[Message::user("hi")]);
        let value = serde_json::to_value(&telemetry).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = vec![
            "model",
            "budget",
            "selection",
            "predictedMessageCount",
            "predictedHistoryTokens",
            "predictedTotalTokens",
            "attemptHistoryTokens",
            "attemptTotalTokens",
            "AUT",
            "trimmedCount",
            "attemptsUsed",
            "charsPerToken",
            "remainingReserve",
            "stage",
            "lastErrorMessage",
            "overflowMatched",
            "messages",
        ];
        let mut keys_sorted = keys.clone();
        keys_sorted.sort_unstable();
        expected.sort_unstable();
        assert_eq!(keys_sorted, expected);
        assert_eq!(value["budget"]["maxContext"], 1000);
        assert_eq!(value["budget"]["maxUsableRaw"], 900);
        assert_eq!(value["stage"], "overflow_initial");
        assert_eq!(value["messages"][0]["role"], "user");
        assert_eq!(telemetry.sent_count(), 2);
        assert_eq!(telemetry.counter_text(5), "[3-1]/5");
        insta::assert_json_snapshot!(telemetry);
    }

    #[test]
    fn optional_fields_are_left_out_before_any_error() {
        let budget = Budget::new(1000, None);
        let prediction = predict(&[], &budget);
        let state = TrimLoop::start("m", Vec::new(), prediction, 5, budget, None).unwrap();
        let json = state.telemetry().to_json();
        assert_eq!(
            json,
            "{\"model\":\"m\",\"budget\":{\"maxContext\":1000,\"maxUsableRaw\":900},\
             \"selection\":[],\"predictedMessageCount\":0,\"predictedHistoryTokens\":0,\
             \"predictedTotalTokens\":100,\"attemptHistoryTokens\":0,\"attemptTotalTokens\":5,\
             \"AUT\":5,\"trimmedCount\":0,\"attemptsUsed\":0,\"charsPerToken\":null,\
             \"remainingReserve\":995,\"stage\":\"initial\",\"messages\":[]}"
        );
    }
}
