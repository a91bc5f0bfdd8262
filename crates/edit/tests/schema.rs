//! Tests of `diff_mode` parsing and the `write_file`/`edit_file` tool schemas per mode.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_edit::{DiffMode, edit_file_spec, tool_specs, write_file_spec};

#[test]
fn diff_mode_parses_the_four_config_values() {
    let cases = [
        ("search_replace_multi", DiffMode::SearchReplaceMulti),
        ("search_replace", DiffMode::SearchReplace),
        ("anchored", DiffMode::Anchored),
        ("off", DiffMode::Off),
    ];
    for (text, mode) in cases {
        assert_eq!(text.parse::<DiffMode>().unwrap(), mode);
        assert_eq!(mode.to_string(), text);
    }
    assert_eq!(DiffMode::default(), DiffMode::SearchReplaceMulti);
}

#[test]
fn any_other_diff_mode_is_a_config_error() {
    for bad in ["", "Anchored", "search-replace", " off", "unified"] {
        let err = bad.parse::<DiffMode>().unwrap_err();
        assert_eq!(err.value, bad);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid diff_mode {bad:?} in ~/.config/bb7/config.json: use one of \"search_replace_multi\" \
                 (default), \"search_replace\", \"anchored\" or \"off\""
            )
        );
    }
}

fn names(mode: DiffMode) -> Vec<String> {
    tool_specs(mode).into_iter().map(|s| s.name).collect()
}

#[test]
fn tools_per_mode() {
    assert_eq!(
        names(DiffMode::SearchReplaceMulti),
        ["write_file", "edit_file"]
    );
    assert_eq!(names(DiffMode::SearchReplace), ["write_file", "edit_file"]);
    assert_eq!(names(DiffMode::Anchored), ["write_file", "edit_file"]);
    assert_eq!(names(DiffMode::Off), ["write_file"]);
    assert!(edit_file_spec(DiffMode::Off).is_none());
}

#[test]
fn write_file_schema() {
    let p = write_file_spec().parameters;
    assert_eq!(p["type"], "object");
    assert_eq!(
        p["required"],
        ybs_core::ToolCall::from_raw_arguments("", "", r#"["path","content"]"#).arguments
    );
    assert_eq!(p["properties"]["path"]["type"], "string");
    assert_eq!(p["properties"]["content"]["type"], "string");
    assert_eq!(p["additionalProperties"], false);
}

#[test]
fn search_replace_multi_schema() {
    let p = edit_file_spec(DiffMode::SearchReplaceMulti)
        .unwrap()
        .parameters;
    assert_eq!(p["required"][0], "edits");
    let edits = &p["properties"]["edits"];
    assert_eq!(edits["type"], "array");
    let item = &edits["items"];
    for field in ["path", "file_id", "old_string", "new_string"] {
        assert_eq!(item["properties"][field]["type"], "string", "{field}");
    }
    assert_eq!(item["properties"]["replace_all"]["type"], "boolean");
    let required: Vec<&str> = item["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["path", "file_id", "old_string", "new_string"]);
}

#[test]
fn search_replace_schema() {
    let p = edit_file_spec(DiffMode::SearchReplace).unwrap().parameters;
    let required: Vec<&str> = p["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["path", "file_id", "old_string", "new_string"]);
    assert_eq!(p["properties"]["replace_all"]["type"], "boolean");
    assert!(p["properties"].get("edits").is_none());
}

#[test]
fn anchored_schema() {
    let p = edit_file_spec(DiffMode::Anchored).unwrap().parameters;
    let required: Vec<&str> = p["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["path", "file_id", "changes"]);
    let change = &p["properties"]["changes"]["items"];
    assert_eq!(change["properties"]["start"]["maxItems"], 10);
    assert_eq!(change["properties"]["end"]["maxItems"], 10);
    assert_eq!(change["properties"]["content"]["type"][1], "null");
    let required: Vec<&str> = change["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["start", "content"]);
}
