//! The `chat.json` example of `specs/bb7-spec.md`, read and written back unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use ybs_core::{ContextAction, Message, Part, Role};

/// Just enough of a chat document to hold the messages; the rest is kept as it is.
#[derive(Debug, Serialize, Deserialize)]
struct ChatDocument {
    messages: Vec<Message>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

fn spec_example() -> Value {
    json!({
      "version": 2,
      "id": "abc123",
      "name": "physics-refactor",
      "created": "2025-01-19T22:00:00Z",
      "model": "anthropic/claude-sonnet-4",
      "draft": "",
      "context_files": [
        {"path": "src/math.cs", "readonly": false, "external": false, "version": "a1b2c3d4"},
        {"path": "/home/user/reference/physics.cs", "readonly": true, "external": true, "version": "e5f6a7b8"},
        {"path": "src/utils.cs", "readonly": true, "external": false, "version": "11223344", "start_line": 10, "end_line": 50}
      ],
      "messages": [
        {
          "role": "user",
          "parts": [{"type": "text", "content": "Refactor to use ref parameters"}],
          "model": "anthropic/claude-sonnet-4",
          "timestamp": "2025-01-19T22:01:00Z",
          "context_snapshot": [
            {"path": "src/math.cs", "file_id": "a1b2c3d4"},
            {"path": "src/utils.cs", "file_id": "11223344", "start_line": 10, "end_line": 50}
          ]
        },
        {
          "role": "assistant",
          "model": "anthropic/claude-sonnet-4",
          "timestamp": "2025-01-19T22:01:05Z",
          "output_files": ["math.cs"],
          "parts": [
            {"type": "text", "content": "The issue is..."},
            {"type": "context_event", "action": "AssistantWriteFile", "path": "math.cs", "version": "abcd1234"}
          ]
        }
      ]
    })
}

#[test]
fn the_spec_example_round_trips_to_the_same_json() {
    let original = spec_example();
    let text = serde_json::to_string_pretty(&original).unwrap();
    let chat: ChatDocument = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&chat).unwrap(), original);
}

#[test]
fn the_spec_example_reads_as_typed_messages() {
    let chat: ChatDocument = serde_json::from_value(spec_example()).unwrap();
    let [user, assistant] = chat.messages.as_slice() else {
        panic!("two messages expected");
    };
    assert_eq!(user.role, Role::User);
    assert_eq!(user.text_content(), "Refactor to use ref parameters");
    let snapshot = user.context_snapshot.as_ref().unwrap();
    assert_eq!(snapshot[1].start_line, Some(10));
    assert_eq!(snapshot[1].end_line, Some(50));
    assert_eq!(
        user.timestamp.unwrap().to_rfc3339(),
        "2025-01-19T22:01:00+00:00"
    );
    assert_eq!(assistant.role, Role::Assistant);
    assert_eq!(
        assistant.output_files.as_deref(),
        Some(&["math.cs".to_owned()][..])
    );
    match &assistant.parts[1] {
        Part::ContextEvent(event) => {
            assert_eq!(event.action, ContextAction::AssistantWriteFile);
            assert_eq!(event.version.as_deref(), Some("abcd1234"));
        }
        other => panic!("context event expected, got {other:?}"),
    }
}

#[test]
fn legacy_and_unknown_message_fields_are_kept() {
    let legacy = json!({"role": "user", "content": "old style", "pinned": true});
    let message: Message = serde_json::from_value(legacy.clone()).unwrap();
    assert!(message.parts.is_empty());
    assert_eq!(message.extra.get("content"), Some(&json!("old style")));
    let mut expected = legacy;
    expected["parts"] = json!([]);
    assert_eq!(serde_json::to_value(&message).unwrap(), expected);
}

#[test]
fn a_bad_timestamp_is_a_clear_error() {
    let err = serde_json::from_value::<Message>(
        json!({"role": "user", "parts": [], "timestamp": "yesterday"}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("bad timestamp \"yesterday\""),
        "{err}"
    );
}

#[test]
fn an_unknown_role_is_an_error() {
    let err = serde_json::from_value::<Message>(json!({"role": "robot", "parts": []})).unwrap_err();
    assert!(err.to_string().contains("unknown variant `robot`"), "{err}");
}
