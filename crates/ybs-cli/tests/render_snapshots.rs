//! Snapshots of the display for one scripted turn: reasoning, markdown text, tool calls with
//! short and folded arguments, results, a warning and usage, with colours off and on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use ybs_agent::Notice;
use ybs_cli::render::{RenderOptions, Renderer};
use ybs_core::{FinishReason, StreamEvent, ToolCall, ToolResult, Usage};

fn text(delta: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        text: delta.to_owned(),
    }
}

fn thinking(delta: &str) -> StreamEvent {
    StreamEvent::ThinkingDelta {
        text: delta.to_owned(),
        signature: None,
    }
}

/// One turn of two model calls, fed the way a provider streams it: deltas cut anywhere.
fn scripted_turn(options: RenderOptions) -> String {
    let mut renderer = Renderer::new(options);
    let mut lines = Vec::new();
    for event in [
        thinking("The user wants a greeting"),
        thinking(" program.\nI should check src/ fi"),
        thinking("rst."),
        text("Let me look at the **project** first"),
        StreamEvent::ToolCallStart {
            index: 0,
            id: "c1".into(),
            name: "list_files".into(),
        },
        StreamEvent::Done {
            finish_reason: FinishReason::ToolCalls,
        },
    ] {
        lines.extend(renderer.event(&event));
    }
    let list = ToolCall::new("c1", "list_files", json!({"pattern": "src/**/*.rs"}));
    lines.extend(renderer.tool_call(&list));
    let listed = ToolResult {
        call_id: "c1".into(),
        name: None,
        content: r#"{"files":["src/main.rs"],"total_matches":1,"truncated":false}"#.into(),
        is_error: false,
    };
    lines.extend(renderer.tool_result("list_files", &listed));
    let content = "fn main() {\n    println!(\"Hello, world!\");\n}\n";
    let write = ToolCall::new(
        "c2",
        "write_file",
        json!({"path": "src/main.rs", "content": content}),
    );
    lines.extend(renderer.tool_call(&write));
    let denied = ToolResult {
        call_id: "c2".into(),
        name: None,
        content: "denied by the user".into(),
        is_error: true,
    };
    lines.extend(renderer.tool_result("write_file", &denied));
    lines.extend(renderer.notice(Notice::Warning, "write_file was denied; told the model"));
    for event in [
        text("# Plan\n\nI could not write the file. "),
        text("Here is the code to paste into `src/main.rs`:\n\n```ru"),
        text("st\nfn main() {\n    println!(\"Hello, **world**!\");\n}\n``"),
        text("`\n\n## Next\n- run `cargo run`\n- 2 ** 3 is not bold"),
        StreamEvent::Usage(Usage::default()),
        StreamEvent::Done {
            finish_reason: FinishReason::Stop,
        },
    ] {
        lines.extend(renderer.event(&event));
    }
    let turn = Usage {
        prompt_tokens: 2450,
        completion_tokens: 312,
        cached_tokens: 2048,
        reasoning_tokens: 40,
        total_tokens: 2762,
        cost: Some(0.00184),
        ..Usage::default()
    };
    let session = Usage {
        prompt_tokens: 10_210,
        completion_tokens: 1_204,
        total_tokens: 11_414,
        cost: Some(0.0121),
        ..Usage::default()
    };
    lines.extend(renderer.usage(&turn, &session, Some((41_000, 200_000))));
    // Make escapes visible in the snapshot file.
    lines.join("\n").replace('\x1b', "␛")
}

fn options(color: bool, show_reasoning: bool) -> RenderOptions {
    RenderOptions {
        color,
        show_reasoning,
        show_tool_calls: true,
        show_token_usage: true,
    }
}

#[test]
fn scripted_turn_without_colour() {
    insta::assert_snapshot!(scripted_turn(options(false, true)));
}

#[test]
fn scripted_turn_with_colour() {
    insta::assert_snapshot!(scripted_turn(options(true, true)));
}

#[test]
fn scripted_turn_with_reasoning_hidden() {
    let hidden = scripted_turn(options(false, false));
    assert!(!hidden.contains('┊'), "{hidden}");
    assert!(
        hidden.starts_with("Let me look at the **project** first\n"),
        "{hidden}"
    );
}
