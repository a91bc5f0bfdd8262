//! Property tests of the WYSIWYG budget: the prediction boundary, the trim loop, telemetry and
//! the counter text, the counters and the boundary cache.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use ybs_context_budget::{
    BoundaryCache, Budget, CachedCounter, CharsPerToken, Next, Outcome, PairInfo, Stage,
    TokenCounter, TrimLoop, predict,
};
use ybs_core::{ErrorKind, LlmError};

fn pairs_of(tokens: &[usize]) -> Vec<PairInfo> {
    tokens
        .iter()
        .enumerate()
        .map(|(i, &t)| PairInfo::new(format!("p{i}"), t))
        .collect()
}

/// What the provider answers to one attempt.
#[derive(Debug, Clone, Copy)]
enum Reply {
    Ok,
    Overflow,
    Other,
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        1 => Just(Reply::Ok),
        6 => Just(Reply::Overflow),
        1 => Just(Reply::Other),
    ]
}

fn outcome(reply: Reply) -> Outcome {
    match reply {
        Reply::Ok => Outcome::Success,
        Reply::Overflow => Outcome::Failed(LlmError::from_response(
            400,
            None,
            "This model's maximum context length is 8192 tokens",
        )),
        Reply::Other => Outcome::Failed(LlmError::new(ErrorKind::Server, "overloaded")),
    }
}

/// Parses `X / Y` or `[X-T]/Y`.
fn parse_counter(text: &str) -> (usize, usize, usize) {
    if let Some(rest) = text.strip_prefix('[') {
        let (inner, visible) = rest.split_once("]/").unwrap();
        let (x, t) = inner.split_once('-').unwrap();
        (
            x.parse().unwrap(),
            t.parse().unwrap(),
            visible.parse().unwrap(),
        )
    } else {
        let (x, y) = text.split_once(" / ").unwrap();
        (x.parse().unwrap(), 0, y.parse().unwrap())
    }
}

proptest! {
    #[test]
    fn included_set_is_a_maximal_suffix_within_ml(
        tokens in prop::collection::vec(0usize..5_000, 0..60),
        ml in 0usize..50_000,
        ura in 0usize..2_000,
    ) {
        let budget = Budget::new(ml, None).with_user_request_allowance(ura);
        let prediction = predict(&tokens, &budget);
        prop_assert_eq!(prediction.included.end, tokens.len());
        prop_assert_eq!(prediction.visible_count, tokens.len());
        let sum: usize = tokens[prediction.included.clone()].iter().sum();
        prop_assert_eq!(prediction.predicted_history_tokens, sum);
        prop_assert_eq!(prediction.predicted_total_tokens, sum + ura);
        if !prediction.included.is_empty() {
            prop_assert!(sum + ura <= ml);
        }
        if prediction.included.start > 0 {
            // The next older pair would not have fitted.
            prop_assert!(sum + tokens[prediction.included.start - 1] + ura > ml);
        }
    }

    #[test]
    fn trimming_is_monotonic_and_one_pair_per_overflow(
        tokens in prop::collection::vec(0usize..3_000, 0..40),
        ml in 1usize..40_000,
        nta in 0usize..15,
        aut in 0usize..1_000,
        replies in prop::collection::vec(reply(), 1..60),
    ) {
        let budget = Budget::new(ml, None).with_max_trim_attempts(nta);
        let prediction = predict(&tokens, &budget);
        let x = prediction.predicted_message_count();
        let y = tokens.len();
        let started = TrimLoop::start("m", pairs_of(&tokens), prediction.clone(), aut, budget, Some(3.5));
        let mut state = match started {
            Ok(state) => state,
            Err(refused) => {
                prop_assert!(aut > ml);
                prop_assert_eq!(refused.telemetry.stage, Stage::UserPromptTooLarge);
                prop_assert_eq!(refused.telemetry.attempts_used, 0);
                return Ok(());
            }
        };
        prop_assert!(aut <= ml);
        let mut previous = state.attempt();
        prop_assert_eq!(previous.history.clone(), prediction.included.clone());
        prop_assert_eq!(previous.attempt_history_tokens, prediction.predicted_history_tokens);
        let mut overflows = 0usize;
        for reply in replies {
            let telemetry = state.telemetry();
            prop_assert_eq!(telemetry.sent_count(), x - telemetry.trimmed_count);
            prop_assert_eq!(telemetry.predicted_message_count, x);
            prop_assert_eq!(telemetry.predicted_history_tokens, prediction.predicted_history_tokens);
            prop_assert_eq!(telemetry.attempt_total_tokens, telemetry.attempt_history_tokens + aut);
            prop_assert_eq!(telemetry.selection.len(), telemetry.sent_count());
            prop_assert_eq!(parse_counter(&telemetry.counter_text(y)), (x, telemetry.trimmed_count, y));
            match state.report(outcome(reply)) {
                Next::Retry(next) => {
                    prop_assert!(matches!(reply, Reply::Overflow));
                    overflows += 1;
                    let attempt = next.attempt();
                    prop_assert_eq!(attempt.history.start, previous.history.start + 1);
                    prop_assert_eq!(attempt.history.end, previous.history.end);
                    prop_assert_eq!(
                        attempt.attempt_history_tokens,
                        previous.attempt_history_tokens - tokens[previous.history.start]
                    );
                    prop_assert_eq!(next.trimmed_count(), overflows);
                    prop_assert!(next.trimmed_count() <= nta);
                    prop_assert!(next.trimmed_count() <= x);
                    previous = attempt;
                    state = next;
                }
                Next::Done(done) => {
                    let t = done.telemetry.trimmed_count;
                    prop_assert_eq!(t, overflows);
                    prop_assert_eq!(done.telemetry.sent_count(), x - t);
                    prop_assert_eq!(done.telemetry.attempts_used, overflows + 1);
                    let text = done.telemetry.counter_text(y);
                    prop_assert_eq!(parse_counter(&text), (x, t, y));
                    match reply {
                        Reply::Ok => {
                            let delivery = done.result.unwrap();
                            prop_assert_eq!(delivery.removed.len(), t);
                            prop_assert_eq!(delivery.attempt.history.len(), x - t);
                            prop_assert_eq!(done.telemetry.stage, Stage::Success);
                        }
                        Reply::Overflow => {
                            prop_assert!(t == nta || t == x);
                            prop_assert_eq!(done.telemetry.stage, Stage::OverflowExhausted);
                            let error = done.result.unwrap_err();
                            prop_assert!(error.to_string().starts_with("context_overflow_after_trimming:"));
                        }
                        Reply::Other => {
                            prop_assert_eq!(done.telemetry.stage, Stage::Error);
                            prop_assert_eq!(done.result.unwrap_err().to_string(), "server: overloaded");
                        }
                    }
                    return Ok(());
                }
            }
        }
    }

    #[test]
    fn chars_per_token_is_ceil_and_at_least_one(text in ".{0,200}", ratio in 0.5f64..10.0) {
        let counter = CharsPerToken::new(ratio).unwrap();
        let chars = text.chars().count();
        let tokens = counter.count(&text);
        if chars == 0 {
            prop_assert_eq!(tokens, 0);
        } else {
            prop_assert!(tokens >= 1);
            prop_assert_eq!(tokens, ((chars as f64) / ratio).ceil() as usize);
        }
    }

    #[test]
    fn cache_answers_like_its_inner_counter_and_stays_bounded(
        texts in prop::collection::vec("[a-z ]{0,30}", 0..100),
        capacity in 0usize..20,
    ) {
        let cached = CachedCounter::with_capacity(CharsPerToken::default(), capacity);
        for text in &texts {
            prop_assert_eq!(cached.count(text), CharsPerToken::default().count(text));
            prop_assert!(cached.len() <= cached.capacity());
        }
    }

    #[test]
    fn boundary_cache_matches_predict_and_ignores_unchanged_inputs(
        tokens in prop::collection::vec(0usize..2_000, 0..30),
        ml in 0usize..20_000,
    ) {
        let budget = Budget::new(ml, None);
        let mut cache = BoundaryCache::new("m", budget);
        cache.set_pairs(pairs_of(&tokens));
        prop_assert_eq!(cache.prediction(), &predict(&tokens, &budget));
        cache.set_pairs(pairs_of(&tokens));
        cache.set_model("m", ml);
        cache.prediction();
        prop_assert_eq!(cache.recomputations(), 1);
    }
}
