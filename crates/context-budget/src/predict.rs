//! The prediction boundary of the WYSIWYG workflow: which newest
//! visible pairs fit the model limit while reserving the user request allowance.

use std::ops::Range;

/// The default user request allowance (URA): 100 tokens.
pub const DEFAULT_USER_REQUEST_ALLOWANCE: usize = 100;

/// The default maximum number of overflow trims (NTA, `maxTrimAttempts`): 10.
pub const DEFAULT_MAX_TRIM_ATTEMPTS: usize = 10;

/// The model limit `ML = min(context_window, tpm)`; a missing tokens-per-minute limit leaves
/// the context window.
pub fn model_limit(context_window: usize, tokens_per_minute: Option<usize>) -> usize {
    tokens_per_minute.map_or(context_window, |tpm| tpm.min(context_window))
}

/// The settings one send is budgeted with. All are frozen for the send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// ML: the model limit, see [`model_limit`].
    pub model_limit: usize,
    /// URA: the reserve kept for the new prompt while predicting (default 100).
    pub user_request_allowance: usize,
    /// NTA: how many times an overflow may trim one more pair (default 10).
    pub max_trim_attempts: usize,
    /// Tokens always sent besides pairs and prompt (system messages, a system prompt). The
    /// spec has none, so this is 0 by default; when set, it is added to both sides of every
    /// comparison with ML so the boundary leaves room for them.
    pub reserved_tokens: usize,
    /// The workflow's Option B: before the first attempt, silently drop oldest predicted
    /// pairs until `history + AUT` fits ML. Off by default (Option A: send as predicted and
    /// let overflow errors trim).
    pub preflight_trim: bool,
}

impl Budget {
    /// A budget for a model with the given context window and optional tokens-per-minute
    /// limit, with the default URA and NTA, nothing reserved and no preflight trim.
    pub fn new(context_window: usize, tokens_per_minute: Option<usize>) -> Budget {
        Budget {
            model_limit: model_limit(context_window, tokens_per_minute),
            user_request_allowance: DEFAULT_USER_REQUEST_ALLOWANCE,
            max_trim_attempts: DEFAULT_MAX_TRIM_ATTEMPTS,
            reserved_tokens: 0,
            preflight_trim: false,
        }
    }

    /// Sets URA.
    pub fn with_user_request_allowance(mut self, ura: usize) -> Budget {
        self.user_request_allowance = ura;
        self
    }

    /// Sets NTA.
    pub fn with_max_trim_attempts(mut self, nta: usize) -> Budget {
        self.max_trim_attempts = nta;
        self
    }

    /// Sets the tokens reserved for messages outside the pairs.
    pub fn with_reserved_tokens(mut self, reserved: usize) -> Budget {
        self.reserved_tokens = reserved;
        self
    }

    /// Turns the preflight trim (Option B) on or off.
    pub fn with_preflight_trim(mut self, on: bool) -> Budget {
        self.preflight_trim = on;
        self
    }

    /// `maxUsableRaw` of the telemetry: what history may use, `ML - URA - reserved` (0 when
    /// the reserve alone exceeds ML).
    pub fn max_usable_raw(&self) -> usize {
        self.model_limit
            .saturating_sub(self.user_request_allowance)
            .saturating_sub(self.reserved_tokens)
    }
}

/// The result of a prediction: the included pairs and their frozen token figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    /// The included pairs, as indices into the visible pairs: always a newest suffix
    /// (`included.end == visible_count`), possibly empty.
    pub included: Range<usize>,
    /// Y: how many pairs are visible.
    pub visible_count: usize,
    /// The token sum of the included pairs.
    pub predicted_history_tokens: usize,
    /// `predicted_history_tokens + URA`.
    pub predicted_total_tokens: usize,
}

impl Prediction {
    /// X: how many pairs are included.
    pub fn predicted_message_count(&self) -> usize {
        self.included.len()
    }

    /// The idle counter text `X / Y`.
    pub fn counter_text(&self) -> String {
        counter_text(self.predicted_message_count(), 0, self.visible_count)
    }
}

/// Predicts the boundary: walks the visible pairs from newest to oldest and includes each
/// while `history + next + URA (+ reserved) <= ML`, stopping at the first pair that does not
/// fit, so the included set is a contiguous newest suffix even when an older, smaller pair
/// would still fit. One pass, no allocation: linear in the number of pairs.
pub fn predict(pair_tokens: &[usize], budget: &Budget) -> Prediction {
    let reserve = budget
        .user_request_allowance
        .saturating_add(budget.reserved_tokens);
    let mut history = 0usize;
    let mut start = pair_tokens.len();
    for &tokens in pair_tokens.iter().rev() {
        let with_next = history.saturating_add(tokens);
        if with_next.saturating_add(reserve) > budget.model_limit {
            break;
        }
        history = with_next;
        start -= 1;
    }
    Prediction {
        included: start..pair_tokens.len(),
        visible_count: pair_tokens.len(),
        predicted_history_tokens: history,
        predicted_total_tokens: history.saturating_add(budget.user_request_allowance),
    }
}

/// The context counter: `X / Y` without trimming, `[X-T]/Y` after a send
/// that trimmed `T` pairs (for example `[12-1]/34`).
pub fn counter_text(predicted: usize, trimmed: usize, visible: usize) -> String {
    if trimmed == 0 {
        format!("{predicted} / {visible}")
    } else {
        format!("[{predicted}-{trimmed}]/{visible}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_limit_is_the_smaller_of_window_and_tpm() {
        assert_eq!(model_limit(128_000, None), 128_000);
        assert_eq!(model_limit(128_000, Some(30_000)), 30_000);
        assert_eq!(model_limit(8_000, Some(30_000)), 8_000);
        let budget = Budget::new(128_000, Some(30_000));
        assert_eq!(budget.model_limit, 30_000);
        assert_eq!(budget.user_request_allowance, 100);
        assert_eq!(budget.max_trim_attempts, 10);
        assert!(!budget.preflight_trim);
        assert_eq!(budget.max_usable_raw(), 29_900);
    }

    /// With URA 100, ML 1000 leaves 900 for history.
    #[test]
    fn worked_example_includes_newest_pairs_that_fit_with_ura() {
        let budget = Budget::new(1000, None);
        // Oldest .. newest.
        let pairs = [300, 200, 400, 250, 150];
        let prediction = predict(&pairs, &budget);
        // 150 + 250 + 400 = 800, +100 URA = 900 <= 1000; +200 would be 1100 > 1000.
        assert_eq!(prediction.included, 2..5);
        assert_eq!(prediction.predicted_history_tokens, 800);
        assert_eq!(prediction.predicted_total_tokens, 900);
        assert_eq!(prediction.predicted_message_count(), 3);
        assert_eq!(prediction.counter_text(), "3 / 5");
    }

    #[test]
    fn boundary_is_inclusive_at_exactly_ml() {
        let budget = Budget::new(1000, None);
        assert_eq!(predict(&[900], &budget).included, 0..1);
        assert_eq!(predict(&[901], &budget).included, 1..1);
    }

    #[test]
    fn a_big_pair_stops_the_walk_even_if_older_ones_would_fit() {
        let budget = Budget::new(1000, None);
        let prediction = predict(&[10, 10, 5000, 10], &budget);
        assert_eq!(prediction.included, 3..4);
        assert_eq!(prediction.predicted_history_tokens, 10);
    }

    #[test]
    fn nothing_visible_or_nothing_fits() {
        let budget = Budget::new(1000, None);
        let empty = predict(&[], &budget);
        assert_eq!(empty.included, 0..0);
        assert_eq!(empty.predicted_total_tokens, 100);
        let tiny = Budget::new(50, None);
        let none = predict(&[1, 1], &tiny);
        assert_eq!(none.included, 2..2);
        assert_eq!(none.counter_text(), "0 / 2");
        assert_eq!(tiny.max_usable_raw(), 0);
    }

    #[test]
    fn reserved_tokens_shrink_the_boundary() {
        let budget = Budget::new(1000, None).with_reserved_tokens(300);
        assert_eq!(predict(&[300, 300, 300], &budget).included, 1..3);
        assert_eq!(budget.max_usable_raw(), 600);
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        let budget = Budget::new(1000, None).with_user_request_allowance(usize::MAX);
        assert_eq!(predict(&[1], &budget).included, 1..1);
        let budget = Budget::new(1000, None);
        let prediction = predict(&[usize::MAX, 1], &budget);
        assert_eq!(prediction.included, 1..2);
        assert_eq!(prediction.predicted_history_tokens, 1);
    }

    #[test]
    fn bracket_counter() {
        assert_eq!(counter_text(12, 1, 34), "[12-1]/34");
        assert_eq!(counter_text(12, 0, 34), "12 / 34");
    }
}
