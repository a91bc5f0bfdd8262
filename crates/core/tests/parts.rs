//! The JSON of every part type, pinned, and read back to the same value.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use ybs_core::{ContextAction, ContextEvent, Image, Part, Thinking, ToolCall, ToolResult};

fn every_part() -> Vec<Part> {
    vec![
        Part::text("The issue is..."),
        Part::thinking("Let me look at the loop."),
        Part::Thinking(Thinking {
            content: "Signed reasoning".into(),
            signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
            ..Thinking::default()
        }),
        Part::Thinking(Thinking {
            data: Some("EmwKAhgBEgy3va3pzix/LafPsn4a".into()),
            ..Thinking::default()
        }),
        Part::Thinking(Thinking {
            content: "Routed reasoning".into(),
            details: Some(vec![json!({
                "type": "reasoning.text",
                "text": "Routed reasoning",
                "signature": "sig",
                "format": "anthropic-claude-v1",
                "index": 0
            })]),
            ..Thinking::default()
        }),
        Part::Code {
            content: "fn main() {}".into(),
            language: Some("rust".into()),
        },
        Part::Code {
            content: "plain".into(),
            language: None,
        },
        Part::File {
            path: "src/math.cs".into(),
        },
        Part::ContextEvent(ContextEvent {
            version: Some("abcd1234".into()),
            ..ContextEvent::new(ContextAction::AssistantWriteFile, "math.cs")
        }),
        Part::ContextEvent(ContextEvent {
            version: Some("e5f6a7b8".into()),
            prev_version: Some("a1b2c3d4".into()),
            readonly: Some(true),
            external: Some(false),
            ..ContextEvent::new(ContextAction::UserWriteFile, "src/math.cs")
        }),
        Part::ContextEvent(ContextEvent {
            version: Some("11223344".into()),
            readonly: Some(true),
            start_line: Some(10),
            end_line: Some(50),
            ..ContextEvent::new(ContextAction::UserAddSection, "src/utils.cs")
        }),
        Part::ContextEvent(ContextEvent {
            original_path: Some("math.cs".into()),
            ..ContextEvent::new(ContextAction::UserSaveAs, "src/renamed.cs")
        }),
        Part::Raw {
            content: "<raw/>".into(),
        },
        Part::ToolCall(ToolCall::new(
            "call_1",
            "read_file",
            json!({"path": "src/main.rs", "offset": 1}),
        )),
        Part::ToolCall(ToolCall::from_raw_arguments(
            "call_2",
            "edit_file",
            "{\"path\": ",
        )),
        Part::ToolResult(ToolResult {
            call_id: "call_1".into(),
            name: None,
            content: "{\"content\":\"1\\tfn main() {}\"}".into(),
            is_error: false,
        }),
        Part::ToolResult(ToolResult {
            call_id: "call_2".into(),
            name: Some("edit_file".into()),
            content: "old_text not found".into(),
            is_error: true,
        }),
        Part::Image(Image {
            media_type: Some("image/png".into()),
            path: Some("shots/screen.png".into()),
            data: None,
        }),
        Part::Image(Image {
            media_type: Some("image/png".into()),
            path: None,
            data: Some("iVBORw0KGgo=".into()),
        }),
        Part::Unknown(json!({"type": "citation", "url": "https://example.com", "n": 1})),
    ]
}

#[test]
fn every_part_type_has_its_pinned_json() {
    // Keys of JSON values sorted: serde_json keeps insertion order when a crate built along
    // (the ACP crate in `ybs`) turns on its `preserve_order`, and sorts them otherwise.
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!(every_part());
    });
}

#[test]
fn every_part_reads_back_to_itself() {
    for part in every_part() {
        let text = serde_json::to_string(&part).unwrap();
        let back: Part = serde_json::from_str(&text).unwrap();
        assert_eq!(back, part, "{text}");
    }
}

#[test]
fn all_twelve_context_actions_keep_their_names() {
    let names = [
        "AssistantWriteFile",
        "UserWriteFile",
        "UserApplyFile",
        "UserSaveAs",
        "UserRejectOutput",
        "UserSetReadOnly",
        "UserAddFile",
        "UserAddSection",
        "UserRemoveFile",
        "UserRemoveSection",
        "ForkWarningModified",
        "ForkWarningDeleted",
    ];
    assert_eq!(ContextAction::ALL.len(), names.len());
    for (action, name) in ContextAction::ALL.iter().zip(names) {
        let part = json!({"type": "context_event", "action": name, "path": "a"});
        let parsed: Part = serde_json::from_value(part.clone()).unwrap();
        assert_eq!(
            parsed,
            Part::ContextEvent(ContextEvent::new(action.clone(), "a"))
        );
        assert_eq!(serde_json::to_value(&parsed).unwrap(), part);
    }
}

#[test]
fn an_action_from_a_newer_writer_is_kept() {
    let part = json!({"type": "context_event", "action": "UserPinFile", "path": "a"});
    let parsed: Part = serde_json::from_value(part.clone()).unwrap();
    assert_eq!(
        parsed,
        Part::ContextEvent(ContextEvent::new(
            ContextAction::Other("UserPinFile".into()),
            "a"
        ))
    );
    assert_eq!(serde_json::to_value(&parsed).unwrap(), part);
}

#[test]
fn a_known_part_with_a_missing_field_is_an_error_not_unknown() {
    let err = serde_json::from_value::<Part>(json!({"type": "text"})).unwrap_err();
    assert!(err.to_string().contains("missing field `content`"), "{err}");
    let err =
        serde_json::from_value::<Part>(json!({"type": "tool_result", "content": "x"})).unwrap_err();
    assert!(err.to_string().contains("call_id"), "{err}");
}

#[test]
fn a_part_without_a_type_is_kept_verbatim() {
    let value: Value = json!({"content": "legacy"});
    let parsed: Part = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(parsed, Part::Unknown(value.clone()));
    assert_eq!(serde_json::to_value(&parsed).unwrap(), value);
}

#[test]
fn invalid_tool_arguments_are_kept_and_flagged() {
    let call = ToolCall::from_raw_arguments("c", "t", "{\"a\": tru");
    assert_eq!(call.arguments, Value::String("{\"a\": tru".into()));
    assert!(call.arguments_error.is_some());
    assert_eq!(call.arguments_text(), "{\"a\": tru");
    let empty = ToolCall::from_raw_arguments("c", "t", "  ");
    assert_eq!(empty.arguments, json!({}));
    assert_eq!(empty.arguments_error, None);
    let good = ToolCall::from_raw_arguments("c", "t", "{\"a\":1}");
    assert_eq!(good.arguments_text(), "{\"a\":1}");
}

#[test]
fn unknown_context_event_fields_are_kept() {
    let part =
        json!({"type": "context_event", "action": "UserAddFile", "path": "a", "added": true});
    let parsed: Part = serde_json::from_value(part.clone()).unwrap();
    let Part::ContextEvent(event) = &parsed else {
        panic!("context event expected, got {parsed:?}");
    };
    assert_eq!(event.extra.get("added"), Some(&json!(true)));
    assert!(!event.extra.contains_key("type"));
    assert_eq!(serde_json::to_value(&parsed).unwrap(), part);
}
