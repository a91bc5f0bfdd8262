//! The trim loop's tests, and those of the telemetry it reports.

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

/// The first attempt sends the prediction as it is: the predicted history plus AUT, nothing
/// trimmed.
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
