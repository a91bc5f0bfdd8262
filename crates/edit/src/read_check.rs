//! The checks the first bb7 makes when it reads an `edit_file` call's arguments, before any
//! edit is tried. A call that fails them ends the whole reply with the `error`
//! `edit_file parse error: <why>` (not a `diff_error`), with the first bb7's words for the
//! semantic checks: `edit_file: no edits`, `edit_file: edit <i>: missing path`, `edit_file:
//! all edits are no-ops`, `edit_file: missing path`, `edit_file: old_string and new_string are
//! identical (no-op)`, `edit_file: no changes`, `edit_file: change <i>: empty start`, `...:
//! start exceeds 10 lines`, `...: end exceeds 10 lines`. As there, absent or null strings
//! read as empty and a wrongly typed field fails before the semantic checks.
//!
//! Both search/replace shapes are read in both search/replace modes (models mix them up), as
//! the edit layer ([`args`](super::args)) does; this module only adds the first bb7's refusals on
//! top, for the daemon to end a reply with.

use serde_json::{Map, Value};

use super::{DiffMode, MAX_ANCHOR_LINES};

/// Why the first bb7 would refuse to read `args` as an `edit_file` call of `mode`, if it would.
pub fn read_error(mode: DiffMode, args: &Value) -> Option<String> {
    let Some(object) = args.as_object() else {
        return Some("arguments must be a JSON object".to_owned());
    };
    match mode {
        DiffMode::Off => None,
        DiffMode::Anchored => anchored(object).err(),
        DiffMode::SearchReplace | DiffMode::SearchReplaceMulti => {
            let multi_shape = match object.get("edits") {
                None | Some(Value::Null) => {
                    mode == DiffMode::SearchReplaceMulti && !object.contains_key("old_string")
                }
                Some(_) => true,
            };
            if multi_shape {
                multi(object).err()
            } else {
                single(object).err()
            }
        }
    }
}

/// An absent or null field is the empty string; another type is an error.
fn string<'a>(object: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn boolean(object: &Map<String, Value>, key: &str) -> Result<(), String> {
    match object.get(key) {
        None | Some(Value::Null | Value::Bool(_)) => Ok(()),
        Some(_) => Err(format!("`{key}` must be a boolean")),
    }
}

/// A search/replace edit's fields, type-checked: `(path, old_string, new_string)`.
fn edit_fields(object: &Map<String, Value>) -> Result<(&str, &str, &str), String> {
    string(object, "file_id")?;
    boolean(object, "replace_all")?;
    Ok((
        string(object, "path")?,
        string(object, "old_string")?,
        string(object, "new_string")?,
    ))
}

fn single(object: &Map<String, Value>) -> Result<(), String> {
    let (path, old, new) = edit_fields(object)?;
    if path.is_empty() {
        return Err("edit_file: missing path".to_owned());
    }
    if old == new {
        return Err("edit_file: old_string and new_string are identical (no-op)".to_owned());
    }
    Ok(())
}

fn multi(object: &Map<String, Value>) -> Result<(), String> {
    let edits = match object.get("edits") {
        None | Some(Value::Null) => return Err("edit_file: no edits".to_owned()),
        Some(Value::Array(edits)) => edits,
        Some(_) => return Err("`edits` must be an array".to_owned()),
    };
    let mut fields = Vec::with_capacity(edits.len());
    for edit in edits {
        let edit = edit
            .as_object()
            .ok_or_else(|| "each edit must be an object".to_owned())?;
        fields.push(edit_fields(edit)?);
    }
    if fields.is_empty() {
        return Err("edit_file: no edits".to_owned());
    }
    let mut real = 0;
    for (i, (path, old, new)) in fields.into_iter().enumerate() {
        if path.is_empty() {
            return Err(format!("edit_file: edit {i}: missing path"));
        }
        if old != new {
            real += 1;
        }
    }
    if real == 0 {
        return Err("edit_file: all edits are no-ops".to_owned());
    }
    Ok(())
}

/// The number of lines of an anchor, type-checked (absent or null is none).
fn lines(change: &Map<String, Value>, key: &str) -> Result<usize, String> {
    match change.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(items.len()),
        Some(_) => Err(format!("`{key}` must be an array of strings")),
    }
}

fn anchored(object: &Map<String, Value>) -> Result<(), String> {
    string(object, "file_id")?;
    let path = string(object, "path")?;
    let changes = match object.get("changes") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(changes)) => changes,
        Some(_) => return Err("`changes` must be an array".to_owned()),
    };
    let mut anchors = Vec::with_capacity(changes.len());
    for change in changes {
        let change = change
            .as_object()
            .ok_or_else(|| "each change must be an object".to_owned())?;
        lines(change, "content")?;
        anchors.push((lines(change, "start")?, lines(change, "end")?));
    }
    if path.is_empty() {
        return Err("edit_file: missing path".to_owned());
    }
    if anchors.is_empty() {
        return Err("edit_file: no changes".to_owned());
    }
    for (i, (start, end)) in anchors.into_iter().enumerate() {
        if start == 0 {
            return Err(format!("edit_file: change {i}: empty start"));
        }
        if start > MAX_ANCHOR_LINES {
            return Err(format!(
                "edit_file: change {i}: start exceeds {MAX_ANCHOR_LINES} lines"
            ));
        }
        if end > MAX_ANCHOR_LINES {
            return Err(format!(
                "edit_file: change {i}: end exceeds {MAX_ANCHOR_LINES} lines"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn multi_error(args: Value) -> Option<String> {
        read_error(DiffMode::SearchReplaceMulti, &args)
    }

    #[test]
    fn multi_edit_calls_are_read_as_the_first_bb7_reads_them() {
        let edit = |path: &str, old: &str, new: &str| json!({"path": path, "file_id": "x", "old_string": old, "new_string": new});
        assert_eq!(multi_error(json!({"edits": [edit("a", "x", "y")]})), None);
        assert_eq!(
            multi_error(json!({"edits": []})).as_deref(),
            Some("edit_file: no edits")
        );
        assert_eq!(
            multi_error(json!({"file_id": "x"})).as_deref(),
            Some("edit_file: no edits")
        );
        assert_eq!(
            multi_error(json!({"edits": [edit("a", "x", "x"), edit("", "x", "y")]})).as_deref(),
            Some("edit_file: edit 1: missing path")
        );
        assert_eq!(
            multi_error(json!({"edits": [edit("a", "x", "x"), {"path": "b"}]})).as_deref(),
            Some("edit_file: all edits are no-ops")
        );
        // A type error comes before the semantic checks.
        assert_eq!(
            multi_error(json!({"edits": [edit("", "x", "y"), {"path": 1}]})).as_deref(),
            Some("`path` must be a string")
        );
        // The single shape is read in multi mode too.
        assert_eq!(
            multi_error(json!({"path": "a", "old_string": "x", "new_string": "x"})).as_deref(),
            Some("edit_file: old_string and new_string are identical (no-op)")
        );
    }

    #[test]
    fn single_and_anchored_calls() {
        let single = |args: Value| read_error(DiffMode::SearchReplace, &args);
        assert_eq!(
            single(json!({"old_string": "x", "new_string": "y"})).as_deref(),
            Some("edit_file: missing path")
        );
        assert_eq!(single(json!({"path": "a", "new_string": "y"})), None);
        let anchored = |args: Value| read_error(DiffMode::Anchored, &args);
        assert_eq!(
            anchored(json!({"path": "a", "changes": [{"start": ["x"]}]})),
            None
        );
        assert_eq!(
            anchored(json!({"path": "a"})).as_deref(),
            Some("edit_file: no changes")
        );
        assert_eq!(
            anchored(json!({"changes": [{"start": ["x"]}]})).as_deref(),
            Some("edit_file: missing path")
        );
        assert_eq!(
            anchored(json!({"path": "a", "changes": [{"start": ["x"]}, {"start": []}]})).as_deref(),
            Some("edit_file: change 1: empty start")
        );
        let eleven: Vec<String> = (0..11).map(|n| n.to_string()).collect();
        assert_eq!(
            anchored(json!({"path": "a", "changes": [{"start": eleven}]})).as_deref(),
            Some("edit_file: change 0: start exceeds 10 lines")
        );
        assert_eq!(
            anchored(json!({"path": "a", "changes": [{"start": ["x"], "end": eleven}]})).as_deref(),
            Some("edit_file: change 0: end exceeds 10 lines")
        );
        assert_eq!(
            read_error(DiffMode::Anchored, &json!([1])).as_deref(),
            Some("arguments must be a JSON object")
        );
    }
}
