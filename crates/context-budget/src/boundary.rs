//! A cached prediction boundary that is recomputed only when one of its inputs changed.
//!
//! The inputs are the model and its limit, URA, the chars-per-token ratio, the reserved tokens
//! and the visible pairs (ids and token counts, in on-screen order). The prompt being typed is
//! deliberately not an input: no keystroke can move the boundary. Setters compare the new value
//! with the old one, so re-applying unchanged settings or re-running a filter that shows the
//! same pairs costs a comparison, not a prediction.

use crate::predict::{Budget, Prediction, predict};
use crate::trim::PairInfo;

/// Why the boundary was marked dirty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The selected model or its limit (ML) changed.
    ModelChanged,
    /// URA changed.
    UraChanged,
    /// The chars-per-token ratio changed.
    CharsPerTokenChanged,
    /// The tokens reserved for system messages changed.
    ReservedChanged,
    /// Pairs were appended (a send, a bulk load).
    PairsAdded,
    /// Pairs disappeared and none appeared (deletion, or a filter hiding some).
    PairsRemoved,
    /// The same pairs with different token counts (a reply arrived, an edit was saved).
    PairsEdited,
    /// The visible set or its order changed otherwise (a filter run, a visibility edit).
    VisibleSetChanged,
    /// The caller forced a recompute.
    Explicit,
}

/// A prediction boundary with lazy recompute. See the module docs.
#[derive(Debug, Clone)]
pub struct BoundaryCache {
    model: String,
    budget: Budget,
    chars_per_token: Option<f64>,
    pairs: Vec<PairInfo>,
    counts: Vec<usize>,
    cached: Option<Prediction>,
    dirty: Vec<Trigger>,
    recomputations: u64,
}

impl BoundaryCache {
    /// A boundary for `model` with the given budget (only ML, URA and reserved tokens matter
    /// to the boundary) and no pairs yet.
    pub fn new(model: impl Into<String>, budget: Budget) -> BoundaryCache {
        BoundaryCache {
            model: model.into(),
            budget,
            chars_per_token: None,
            pairs: Vec::new(),
            counts: Vec::new(),
            cached: None,
            dirty: Vec::new(),
            recomputations: 0,
        }
    }

    /// Selects a model with its limit ML.
    pub fn set_model(&mut self, model: &str, model_limit: usize) {
        if self.model != model || self.budget.model_limit != model_limit {
            self.model = model.to_owned();
            self.budget.model_limit = model_limit;
            self.mark(Trigger::ModelChanged);
        }
    }

    /// Sets URA.
    pub fn set_user_request_allowance(&mut self, ura: usize) {
        if self.budget.user_request_allowance != ura {
            self.budget.user_request_allowance = ura;
            self.mark(Trigger::UraChanged);
        }
    }

    /// Sets the tokens reserved for messages outside the pairs.
    pub fn set_reserved_tokens(&mut self, reserved: usize) {
        if self.budget.reserved_tokens != reserved {
            self.budget.reserved_tokens = reserved;
            self.mark(Trigger::ReservedChanged);
        }
    }

    /// Sets the chars-per-token ratio (`None` for a BPE counter). The caller recounts the
    /// pairs under the new ratio and passes them to [`set_pairs`](BoundaryCache::set_pairs).
    pub fn set_chars_per_token(&mut self, chars_per_token: Option<f64>) {
        let same = match (self.chars_per_token, chars_per_token) {
            (Some(old), Some(new)) => old.to_bits() == new.to_bits(),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.chars_per_token = chars_per_token;
            self.mark(Trigger::CharsPerTokenChanged);
        }
    }

    /// Sets the visible pairs in on-screen order (oldest first). Marks the boundary dirty only
    /// if ids, order or token counts differ from the last call.
    pub fn set_pairs(&mut self, pairs: Vec<PairInfo>) {
        let Some(trigger) = classify_change(&self.pairs, &pairs) else {
            return;
        };
        self.counts = pairs.iter().map(|pair| pair.tokens).collect();
        self.pairs = pairs;
        self.mark(trigger);
    }

    /// Forces a recompute on next use.
    pub fn invalidate(&mut self) {
        self.mark(Trigger::Explicit);
    }

    /// Whether the next [`prediction`](BoundaryCache::prediction) recomputes.
    pub fn is_dirty(&self) -> bool {
        self.cached.is_none() || !self.dirty.is_empty()
    }

    /// The triggers seen since the last recompute, in order.
    pub fn pending_triggers(&self) -> &[Trigger] {
        &self.dirty
    }

    /// The boundary, recomputed first if dirty.
    pub fn prediction(&mut self) -> &Prediction {
        if self.is_dirty() {
            self.recomputations += 1;
            self.dirty.clear();
        }
        let (counts, budget) = (&self.counts, &self.budget);
        self.cached.get_or_insert_with(|| predict(counts, budget))
    }

    /// How many times the boundary was computed.
    pub fn recomputations(&self) -> u64 {
        self.recomputations
    }

    /// The current model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The current budget.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// The current chars-per-token ratio.
    pub fn chars_per_token(&self) -> Option<f64> {
        self.chars_per_token
    }

    /// The current visible pairs.
    pub fn pairs(&self) -> &[PairInfo] {
        &self.pairs
    }

    fn mark(&mut self, trigger: Trigger) {
        self.cached = None;
        self.dirty.push(trigger);
    }
}

/// What kind of change turns `old` into `new`, or `None` if they are the same.
fn classify_change(old: &[PairInfo], new: &[PairInfo]) -> Option<Trigger> {
    if old == new {
        return None;
    }
    let same_ids = old.len() == new.len() && old.iter().zip(new).all(|(a, b)| a.id == b.id);
    if same_ids {
        return Some(Trigger::PairsEdited);
    }
    if new.len() > old.len() && new.get(..old.len()) == Some(old) {
        return Some(Trigger::PairsAdded);
    }
    if new.len() < old.len() && is_subsequence(new, old) {
        return Some(Trigger::PairsRemoved);
    }
    Some(Trigger::VisibleSetChanged)
}

fn is_subsequence(small: &[PairInfo], big: &[PairInfo]) -> bool {
    let mut rest = big.iter();
    small
        .iter()
        .all(|item| rest.any(|candidate| candidate == item))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: &str, tokens: usize) -> PairInfo {
        PairInfo::new(id, tokens)
    }

    fn cache() -> BoundaryCache {
        let mut cache = BoundaryCache::new("gpt", Budget::new(1000, None));
        cache.set_pairs(vec![pair("a", 300), pair("b", 400), pair("c", 400)]);
        cache
    }

    #[test]
    fn computes_once_until_an_input_changes() {
        let mut cache = cache();
        assert!(cache.is_dirty());
        assert_eq!(cache.prediction().included, 1..3);
        assert_eq!(cache.prediction().included, 1..3);
        assert_eq!(cache.recomputations(), 1);
        // Same values again: no trigger.
        cache.set_model("gpt", 1000);
        cache.set_user_request_allowance(100);
        cache.set_reserved_tokens(0);
        cache.set_chars_per_token(None);
        cache.set_pairs(vec![pair("a", 300), pair("b", 400), pair("c", 400)]);
        assert!(!cache.is_dirty());
        cache.prediction();
        assert_eq!(cache.recomputations(), 1);
    }

    #[test]
    fn each_trigger_recomputes() {
        let mut cache = cache();
        cache.prediction();

        cache.set_model("big", 2000);
        assert_eq!(cache.pending_triggers(), &[Trigger::ModelChanged]);
        assert_eq!(cache.prediction().included, 0..3);

        cache.set_user_request_allowance(1000);
        assert_eq!(cache.pending_triggers(), &[Trigger::UraChanged]);
        assert_eq!(cache.prediction().included, 1..3);

        cache.set_chars_per_token(Some(4.0));
        assert_eq!(cache.pending_triggers(), &[Trigger::CharsPerTokenChanged]);
        cache.prediction();

        cache.set_reserved_tokens(10);
        assert_eq!(cache.pending_triggers(), &[Trigger::ReservedChanged]);
        cache.prediction();

        // A reply arrived: pair c grew.
        cache.set_pairs(vec![pair("a", 300), pair("b", 400), pair("c", 900)]);
        assert_eq!(cache.pending_triggers(), &[Trigger::PairsEdited]);
        assert_eq!(cache.prediction().included, 2..3);

        cache.set_pairs(vec![
            pair("a", 300),
            pair("b", 400),
            pair("c", 900),
            pair("d", 10),
        ]);
        assert_eq!(cache.pending_triggers(), &[Trigger::PairsAdded]);
        cache.prediction();

        cache.set_pairs(vec![pair("a", 300), pair("d", 10)]);
        assert_eq!(cache.pending_triggers(), &[Trigger::PairsRemoved]);
        assert_eq!(cache.prediction().included, 0..2);

        cache.set_pairs(vec![pair("d", 10), pair("a", 300)]);
        assert_eq!(cache.pending_triggers(), &[Trigger::VisibleSetChanged]);
        cache.prediction();

        cache.invalidate();
        assert_eq!(cache.pending_triggers(), &[Trigger::Explicit]);
        cache.prediction();
        assert_eq!(cache.recomputations(), 10);
        assert_eq!(cache.model(), "big");
        assert_eq!(cache.budget().user_request_allowance, 1000);
        assert_eq!(cache.chars_per_token(), Some(4.0));
        assert_eq!(cache.pairs().len(), 2);
    }

    #[test]
    fn several_triggers_recompute_once() {
        let mut cache = cache();
        cache.prediction();
        cache.set_model("other", 1000);
        cache.set_user_request_allowance(50);
        assert_eq!(
            cache.pending_triggers(),
            &[Trigger::ModelChanged, Trigger::UraChanged]
        );
        cache.prediction();
        assert_eq!(cache.recomputations(), 2);
    }
}
