//! `ybs exec --json` end to end: every line is one JSON object valid against the crate's
//! `schema/exec-events.schema.json`, for a turn with a tool call and for a failed turn; the
//! exit codes, `exec -` and `--output-last-message`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text};
use serde_json::{Value, json};
use ybs_testkit::{Fault, Turn};

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/ybs-cli/schema/exec-events.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Checks `value` against the subset of JSON Schema the event schema uses: `type`,
/// `required`, `properties`, `const`, `enum`, `items` and `oneOf` (exactly one must match).
fn check(schema: &Value, value: &Value) -> Result<(), String> {
    if let Some(expected) = schema.get("const") {
        if expected != value {
            return Err(format!("{value} is not {expected}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            return Err(format!("{value} is not one of {options:?}"));
        }
    }
    if let Some(kind) = schema.get("type") {
        let kinds: Vec<&str> = match kind {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let fits = kinds.iter().any(|kind| match *kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "null" => value.is_null(),
            _ => false,
        });
        if !fits {
            return Err(format!("{value} is not of type {kind}"));
        }
    }
    for key in (schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    {
        if value.get(key).is_none() {
            return Err(format!("{value} lacks `{key}`"));
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, sub) in properties {
            if let Some(field) = value.get(key) {
                check(sub, field).map_err(|e| format!("{key}: {e}"))?;
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for item in array {
            check(items, item)?;
        }
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options.iter().filter(|o| check(o, value).is_ok()).count();
        if matching != 1 {
            return Err(format!("{value} matches {matching} of the oneOf branches"));
        }
    }
    Ok(())
}

/// The stdout lines as events, each checked against the schema.
fn events(stdout: &[u8]) -> Vec<Value> {
    let schema = schema();
    (text(stdout).lines())
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            check(&schema, &value).unwrap_or_else(|e| panic!("{line}: {e}"));
            value
        })
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn the_checker_rejects_what_the_schema_forbids() {
    let schema = schema();
    assert!(check(&schema, &json!({"type": "text_delta", "text": "a"})).is_ok());
    assert!(check(&schema, &json!({"type": "text_delta"})).is_err());
    assert!(
        check(
            &schema,
            &json!({"type": "tool_result", "id": "c", "name": "n", "ok": "yes",
        "summary": "", "result": null})
        )
        .is_err()
    );
    assert!(check(&schema, &json!({"type": "no_such_event"})).is_err());
}

#[test]
fn a_turn_with_a_tool_call_is_a_stream_of_valid_events() {
    let project = Project::new(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "hi\n"}),
        ),
        Turn::text(["Wrote ", "out.txt."]),
    ]);
    let output = project.ybs(&[
        "exec",
        "--json",
        "--yes",
        "--output-last-message",
        "last.txt",
        "write it",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let events = events(&output.stdout);
    let kinds = types(&events);
    assert_eq!(kinds.first(), Some(&"session_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"turn_completed"), "{kinds:?}");
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["id"], "c1");
    assert_eq!(call["name"], "write_file");
    assert_eq!(call["arguments"]["path"], "out.txt");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["id"], "c1");
    assert_eq!(result["ok"], true);
    let position = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(position("tool_call") < position("tool_result"));
    assert!(position("tool_result") < position("text_delta"));
    assert!(kinds.contains(&"usage"), "{kinds:?}");
    let text_deltas: String = (events.iter())
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text_deltas, "Wrote out.txt.");
    let done = events.last().unwrap();
    assert_eq!(done["stop"], "finished");
    assert_eq!(done["text"], "Wrote out.txt.");
    assert_eq!(done["files_changed"], json!(["out.txt"]));
    assert_eq!(events[0]["model"], "fake-model");
    assert_eq!(project.read("out.txt"), "hi\n");
    assert_eq!(project.read("last.txt"), "Wrote out.txt.");
}

#[test]
fn a_failed_turn_ends_with_an_error_event_and_exit_1() {
    let project = Project::new(vec![Turn::fault(Fault::status(401))]);
    let output = project.ybs(&["exec", "--json", "hi"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let events = events(&output.stdout);
    assert_eq!(types(&events), ["session_started", "error"]);
    assert_eq!(events[1]["kind"], "auth");
    assert!(!events[1]["message"].as_str().unwrap().is_empty());
    assert!(text(&output.stderr).contains("ybs: error: "));
}

#[test]
fn no_task_is_a_usage_error_with_exit_2() {
    let project = Project::new(Vec::new());
    let output = project.ybs_with_input(&["exec", "--json", "-"], "   \n");
    assert_eq!(output.status.code(), Some(2));
    let events = events(&output.stdout);
    assert_eq!(types(&events), ["error"]);
    assert_eq!(events[0]["kind"], "usage");
    let plain = project.ybs_with_input(&["exec"], "");
    assert_eq!(plain.status.code(), Some(2));
    assert!(text(&plain.stderr).contains("no task given"));
    assert!(project.bodies().is_empty());
}

#[test]
fn exec_dash_reads_the_task_from_stdin() {
    let project = Project::new(vec![Turn::text(["ok"])]);
    let output = project.ybs_with_input(
        &["exec", "-", "--output-last-message", "l.txt"],
        "from stdin\n",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &project.bodies()[0];
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "from stdin\n");
    assert_eq!(project.read("l.txt"), "ok");
}

#[test]
fn an_image_reaches_the_request_and_a_missing_one_is_an_error_event() {
    let project = Project::new(vec![Turn::text(["a red dot"])]);
    std::fs::write(project.file("dot.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    let output = project.ybs(&["exec", "--json", "-i", "dot.png", "what is this?"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(events(&output.stdout).last().unwrap()["stop"], "finished");
    let body = &project.bodies()[0];
    let user = body["messages"].as_array().unwrap().last().unwrap();
    let rendered = user["content"].to_string();
    assert!(rendered.contains("what is this?"), "{rendered}");
    assert!(rendered.contains("data:image/png;base64,"), "{rendered}");

    let missing = project.ybs(&["exec", "--json", "--image", "none.png", "hi"]);
    assert_eq!(missing.status.code(), Some(1));
    let events = events(&missing.stdout);
    assert_eq!(types(&events), ["error"]);
    assert_eq!(events[0]["kind"], "image");
    assert_eq!(events[0]["message"], "none.png: no such image file");
    assert_eq!(project.bodies().len(), 1, "nothing more was sent");
}

#[test]
fn a_file_named_like_an_image_whose_bytes_are_not_one_is_an_image_error() {
    let project = Project::new(vec![Turn::text(["never"])]);
    project.write("notes.png", "these are notes, not pixels\n");
    let output = project.ybs(&["exec", "--json", "-i", "notes.png", "what is this?"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let events = events(&output.stdout);
    assert_eq!(types(&events), ["error"]);
    assert_eq!(events[0]["kind"], "image");
    assert_eq!(
        events[0]["message"],
        "notes.png: not an image ybs can attach (its bytes are not png, jpg, gif or webp)"
    );
    assert!(project.bodies().is_empty(), "nothing was sent");
    assert_eq!(project.read("notes.png"), "these are notes, not pixels\n");
}

/// The README's row of the table for `type`.
fn readme_row(readme: &str, kind: &str) -> String {
    let start = format!("| `{kind}`");
    (readme.lines())
        .find(|line| line.starts_with(&start) || line.contains(&format!(", `{kind}` |")))
        .unwrap_or_else(|| panic!("the README's event table has no row for {kind}"))
        .to_owned()
}

#[test]
fn the_readme_table_lists_every_event_field_and_error_kind_of_the_schema() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let schema = schema();
    for branch in schema["oneOf"].as_array().unwrap() {
        let properties = branch["properties"].as_object().unwrap();
        let kind = properties["type"]["const"].as_str().unwrap();
        let row = readme_row(&readme, kind);
        for (name, property) in properties {
            if name == "type" {
                continue;
            }
            assert!(
                row.contains(&format!("`{name}`")),
                "{kind}: {name} in {row}"
            );
            for inner in (property.get("properties").and_then(Value::as_object))
                .into_iter()
                .flatten()
            {
                assert!(
                    row.contains(&format!("`{}`", inner.0)),
                    "{kind}: {} in {row}",
                    inner.0
                );
            }
        }
        if kind == "error" {
            let described = properties["kind"]["description"].as_str().unwrap();
            let kinds: Vec<&str> = (described.split([':', ';', ',']))
                .map(str::trim)
                .filter(|word| !word.is_empty() && !word.starts_with("from "))
                .collect();
            for needed in ["no_provider", "compaction", "image", "usage", "auth"] {
                assert!(kinds.contains(&needed), "{needed} in {kinds:?}");
            }
            for error_kind in kinds {
                assert!(
                    row.contains(&format!("`{error_kind}`")),
                    "error kind {error_kind} in {row}"
                );
            }
        }
    }
}
