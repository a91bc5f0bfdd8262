//! The accumulator: unit cases and the property that delta boundaries never matter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;
use ybs_core::{Accumulator, FinishReason, Part, Reply, StreamEvent, Thinking, ToolCall, Usage};

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: text.into() }
}

fn thinking(text: &str, signature: Option<&str>) -> StreamEvent {
    StreamEvent::ThinkingDelta {
        text: text.into(),
        signature: signature.map(Into::into),
    }
}

fn start(index: usize, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
    }
}

fn args(index: usize, arguments: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta {
        index,
        arguments: arguments.into(),
    }
}

fn fold(events: impl IntoIterator<Item = StreamEvent>) -> Reply {
    let mut acc = Accumulator::new();
    for event in events {
        acc.push(event);
    }
    acc.finish()
}

#[test]
fn text_thinking_and_tools_fold_into_one_message() {
    let reply = fold([
        thinking("Let me ", None),
        thinking("think.", None),
        thinking("", Some("sig-1")),
        text("Hel"),
        text("lo"),
        start(1, "call_b", "list_files"),
        start(0, "call_a", "read_file"),
        args(1, "{\"pattern\":"),
        args(0, "{\"path\":\"a.rs\"}"),
        args(1, "\"*.rs\"}"),
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Usage(Usage {
            prompt_tokens: 10,
            completion_tokens: 1,
            ..Usage::default()
        }),
        StreamEvent::Usage(Usage {
            completion_tokens: 7,
            cost: Some(0.01),
            ..Usage::default()
        }),
        StreamEvent::Done {
            finish_reason: FinishReason::ToolCalls,
        },
    ]);
    assert_eq!(
        reply.message.parts,
        vec![
            Part::Thinking(Thinking {
                content: "Let me think.".into(),
                signature: Some("sig-1".into()),
                ..Thinking::default()
            }),
            Part::text("Hello"),
            Part::ToolCall(ToolCall::new(
                "call_a",
                "read_file",
                json!({"path": "a.rs"})
            )),
            Part::ToolCall(ToolCall::new(
                "call_b",
                "list_files",
                json!({"pattern": "*.rs"})
            )),
        ]
    );
    assert_eq!(reply.usage.prompt_tokens, 10);
    assert_eq!(reply.usage.completion_tokens, 7);
    assert_eq!(reply.usage.total_tokens, 17);
    assert_eq!(reply.usage.cost, Some(0.01));
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
}

#[test]
fn a_signature_closes_a_thinking_block() {
    let reply = fold([
        thinking("one", Some("s1")),
        thinking("two", None),
        StreamEvent::RedactedThinking {
            data: "opaque".into(),
        },
        thinking("three", None),
    ]);
    let contents: Vec<_> = reply
        .message
        .parts
        .iter()
        .map(|part| match part {
            Part::Thinking(t) => (t.content.clone(), t.signature.clone(), t.data.clone()),
            other => panic!("thinking expected, got {other:?}"),
        })
        .collect();
    assert_eq!(
        contents,
        vec![
            ("one".into(), Some("s1".into()), None),
            ("two".into(), None, None),
            (String::new(), None, Some("opaque".into())),
            ("three".into(), None, None),
        ]
    );
}

#[test]
fn reasoning_details_pieces_of_one_item_are_joined() {
    let detail = |value| StreamEvent::ReasoningDetail { detail: value };
    let reply = fold([
        thinking("Hmm", None),
        detail(json!({"type": "reasoning.text", "index": 0, "text": "Hm", "format": "f"})),
        detail(json!({"type": "reasoning.text", "index": 0, "text": "m", "signature": null})),
        detail(json!({"type": "reasoning.text", "index": 0, "signature": "sig"})),
        detail(json!({"type": "reasoning.encrypted", "index": 1, "data": "xyz"})),
        text("Done"),
    ]);
    let Part::Thinking(thinking) = &reply.message.parts[0] else {
        panic!("thinking first");
    };
    assert_eq!(thinking.content, "Hmm");
    assert_eq!(
        thinking.details,
        Some(vec![
            json!({"type": "reasoning.text", "index": 0, "text": "Hmm", "format": "f", "signature": "sig"}),
            json!({"type": "reasoning.encrypted", "index": 1, "data": "xyz"}),
        ])
    );
    assert_eq!(reply.message.parts[1], Part::text("Done"));
}

#[test]
fn a_stream_cut_short_keeps_what_arrived() {
    let reply = fold([
        text("partial ans"),
        start(0, "c1", "write_file"),
        args(0, "{\"path\":\"a"),
    ]);
    assert_eq!(reply.message.text_content(), "partial ans");
    let call = reply.message.tool_calls().next().unwrap();
    assert_eq!(call.name, "write_file");
    assert_eq!(call.arguments, json!("{\"path\":\"a"));
    assert!(call.arguments_error.is_some());
    assert_eq!(reply.finish_reason, None);
}

#[test]
fn nothing_received_is_an_empty_message() {
    let reply = fold([]);
    assert!(reply.message.parts.is_empty());
    assert_eq!(reply.usage, Usage::default());
}

/// Cuts `text` into pieces at the given fractions (char boundaries only).
fn split(text: &str, cuts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    points.push(0);
    points.push(chars.len());
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| chars[w[0]..w[1]].iter().collect())
        .collect()
}

fn arguments_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<std::collections::BTreeMap<String, String>>()
            .prop_map(|map| serde_json::to_string(&map).unwrap()),
        ".*",
    ]
}

proptest! {
    #[test]
    fn delta_boundaries_never_change_the_reply(
        reply_text in ".*",
        reasoning in ".*",
        call_args in proptest::collection::vec(arguments_strategy(), 0..4),
        text_cuts in proptest::collection::vec(any::<usize>(), 0..12),
        reasoning_cuts in proptest::collection::vec(any::<usize>(), 0..12),
        arg_cuts in proptest::collection::vec(any::<usize>(), 0..12),
        interleave in proptest::collection::vec(any::<usize>(), 0..64),
    ) {
        // Whole: one delta for each piece.
        let mut whole = vec![thinking(&reasoning, None), text(&reply_text)];
        for (index, arguments) in call_args.iter().enumerate() {
            whole.push(start(index, &format!("call_{index}"), "tool"));
            whole.push(args(index, arguments));
        }

        // Split: arbitrary boundaries, and the calls' deltas interleaved arbitrarily.
        let mut split_events: Vec<StreamEvent> = split(&reasoning, &reasoning_cuts)
            .iter()
            .map(|piece| thinking(piece, None))
            .collect();
        split_events.extend(split(&reply_text, &text_cuts).iter().map(|piece| text(piece)));
        let mut queues: Vec<Vec<StreamEvent>> = call_args
            .iter()
            .enumerate()
            .map(|(index, arguments)| {
                let mut queue = vec![start(index, &format!("call_{index}"), "tool")];
                queue.extend(split(arguments, &arg_cuts).iter().map(|piece| args(index, piece)));
                queue.reverse();
                queue
            })
            .collect();
        let mut picks = interleave.iter().cycle();
        while queues.iter().any(|queue| !queue.is_empty()) {
            let live: Vec<usize> = (0..queues.len()).filter(|&i| !queues[i].is_empty()).collect();
            let pick = live[picks.next().copied().unwrap_or(0) % live.len()];
            if let Some(event) = queues[pick].pop() {
                split_events.push(event);
            }
        }

        prop_assert_eq!(fold(split_events), fold(whole));
    }
}
