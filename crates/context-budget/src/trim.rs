//! The overflow trim loop, as a sans-IO state machine.
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
mod tests;
