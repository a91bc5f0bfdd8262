//! Permission rules on disk: `safety.permissions` (`{"allow": [...], "deny": [...]}`) of each
//! configuration file, read layer by layer (the project's files apart from the user's, so a
//! trust check can leave them out), and a rule the user chose to keep written back
//! atomically.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Layer, Rule, RuleSet};
use crate::config::{FileRole, FileStatus};

/// The rules of one file's `safety.permissions`; an error names the file and the rule.
pub fn read_rules(path: &Path) -> Result<RuleSet, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(RuleSet::default());
        }
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| format!("{} is not valid JSON: {error}", path.display()))?;
    let list = |kind: &str| -> Result<Vec<Rule>, String> {
        let Some(items) = value.pointer(&format!("/safety/permissions/{kind}")) else {
            return Ok(Vec::new());
        };
        let items = items.as_array().ok_or_else(|| {
            format!(
                "safety.permissions.{kind} of {} must be a list of rules",
                path.display()
            )
        })?;
        (items.iter())
            .map(|item| {
                let text = item.as_str().ok_or_else(|| {
                    format!(
                        "safety.permissions.{kind} of {}: {item} is not a rule",
                        path.display()
                    )
                })?;
                Rule::parse(text).map_err(|error| format!("{}: {error}", path.display()))
            })
            .collect()
    };
    Ok(RuleSet {
        allow: list("allow")?,
        deny: list("deny")?,
    })
}

/// The layers of the configuration files read: the project's (`./.ybs.json`) only when
/// `project_trusted`, the others as the user's. Errors are returned beside what loaded.
pub fn load_layers(
    files: &[FileStatus],
    project_trusted: bool,
) -> (Vec<(Layer, RuleSet)>, Vec<String>) {
    let mut user = RuleSet::default();
    let mut project = RuleSet::default();
    let mut errors = Vec::new();
    for status in files.iter().filter(|status| status.loaded) {
        let is_project = status.file.role == FileRole::Project;
        if is_project && !project_trusted {
            continue;
        }
        match read_rules(&status.file.path) {
            Ok(rules) => {
                let target = if is_project { &mut project } else { &mut user };
                target.allow.extend(rules.allow);
                target.deny.extend(rules.deny);
            }
            Err(error) => errors.push(error),
        }
    }
    (vec![(Layer::Project, project), (Layer::User, user)], errors)
}

/// Adds `rule` to the `kind` (`allow` or `deny`) rules of the file at `path` (created when
/// missing), keeping everything else of it; written to a temporary file and renamed over it.
pub fn save_rule(path: &Path, kind: &str, rule: &Rule) -> Result<(), String> {
    edit(
        path,
        |list| {
            let text = Value::String(rule.to_string());
            if !list.contains(&text) {
                list.push(text);
            }
        },
        kind,
    )
}

/// Removes `rule` from the `kind` rules of the file at `path`.
pub fn remove_rule(path: &Path, kind: &str, rule: &Rule) -> Result<(), String> {
    let text = Value::String(rule.to_string());
    edit(path, |list| list.retain(|item| *item != text), kind)
}

fn edit(path: &Path, change: impl FnOnce(&mut Vec<Value>), kind: &str) -> Result<(), String> {
    let shown = path.display();
    let mut value = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .map_err(|error| format!("{shown} is not valid JSON, so it was left alone: {error}"))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(error) => return Err(format!("cannot read {shown}: {error}")),
    };
    let root = value
        .as_object_mut()
        .ok_or_else(|| format!("{shown} does not hold a JSON object"))?;
    let object = |map: &mut Map<String, Value>, key: &str| -> Result<(), String> {
        let entry = map.entry(key).or_insert_with(|| json!({}));
        if entry.is_object() {
            Ok(())
        } else {
            Err(format!("{key} in {shown} is not an object"))
        }
    };
    object(root, "safety")?;
    let safety = root.get_mut("safety").and_then(Value::as_object_mut);
    let safety = safety.ok_or_else(|| format!("safety in {shown} is not an object"))?;
    object(safety, "permissions")?;
    let permissions = safety.get_mut("permissions").and_then(Value::as_object_mut);
    let permissions = permissions.ok_or_else(|| format!("safety.permissions in {shown}"))?;
    let list = permissions.entry(kind).or_insert_with(|| json!([]));
    let list = list
        .as_array_mut()
        .ok_or_else(|| format!("safety.permissions.{kind} in {shown} is not a list"))?;
    change(list);
    let text = serde_json::to_string_pretty(&value).map_err(|error| error.to_string())?;
    write_atomically(path, &format!("{text}\n"))
        .map_err(|error| format!("cannot write {shown}: {error}"))
}

/// Writes `text` to a temporary file beside `path`, then renames it over `path` (its mode
/// kept when it existed).
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    ybs_fsguard::write_atomic(
        path,
        text.as_bytes(),
        ybs_fsguard::Permissions::KeepOr(0o600),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_rule_joins_the_file_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".ybs.json");
        std::fs::write(&path, r#"{"llm": {"model": "m"}}"#).unwrap();
        let rule = Rule::parse("run_shell(cargo test*)").unwrap();
        save_rule(&path, "allow", &rule).unwrap();
        save_rule(&path, "allow", &rule).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["llm"]["model"], "m");
        assert_eq!(
            value["safety"]["permissions"]["allow"],
            json!(["run_shell(cargo test*)"])
        );
        assert_eq!(read_rules(&path).unwrap().allow, vec![rule.clone()]);
        remove_rule(&path, "allow", &rule).unwrap();
        assert!(read_rules(&path).unwrap().allow.is_empty());
        std::fs::write(&path, "{broken").unwrap();
        assert!(
            save_rule(&path, "allow", &rule)
                .unwrap_err()
                .contains("left alone")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{broken");
    }
}
