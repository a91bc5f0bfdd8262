//! Permission rules on disk: `safety.permissions` (`{"allow": [...], "deny": [...]}`) of each
//! configuration file, read layer by layer (the project's files apart from the user's, so a
//! trust check can leave them out), and a rule the user chose to keep written back
//! atomically.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use ybs_fsguard::Links;

use super::{Layer, Rule, RuleError, RuleSet};
use crate::config::{FileRole, FileStatus};

/// The largest configuration file read for its rules (real ones are a few kilobytes).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why the rules of a file could not be read or changed; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum RuleFileError {
    /// The file could not be read (a link where none is followed, a FIFO, too large...).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON (nothing was written to it).
    #[error("{} is not valid JSON{}: {source}", path.display(), if *.left_alone { ", so it was left alone" } else { "" })]
    Json {
        /// The file.
        path: PathBuf,
        /// Whether a change to it was given up.
        left_alone: bool,
        /// Where and why.
        source: serde_json::Error,
    },
    /// A part of the file that must be an object or a list is not.
    #[error("{key} in {} is not {what}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The key path (`safety.permissions.allow`).
        key: String,
        /// What it must be ("an object", "a list of rules").
        what: &'static str,
    },
    /// An entry of a rule list is not a rule.
    #[error("safety.permissions.{kind} of {}: {item} is not a rule", path.display())]
    NotARule {
        /// The file.
        path: PathBuf,
        /// `allow` or `deny`.
        kind: String,
        /// The entry as written.
        item: String,
    },
    /// A rule does not parse.
    #[error("{}: {source}", path.display())]
    Rule {
        /// The file.
        path: PathBuf,
        /// Why.
        source: RuleError,
    },
    /// The changed file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The JSON of the configuration file `path`; `None` when it does not exist. Only a regular
/// file is read, up to a cap; `links` says whether a link at its name is followed (a
/// project's file: never).
fn read_json(path: &Path, links: Links, left_alone: bool) -> Result<Option<Value>, RuleFileError> {
    let read = ybs_fsguard::read_file(path, MAX_FILE_BYTES, links)
        .and_then(|read| read.into_text(MAX_FILE_BYTES));
    let text = match read {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(RuleFileError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| RuleFileError::Json {
            path: path.to_owned(),
            left_alone,
            source,
        })
}

/// The rules of one file's `safety.permissions`; an error names the file and the rule.
pub fn read_rules(path: &Path, links: Links) -> Result<RuleSet, RuleFileError> {
    let Some(value) = read_json(path, links, false)? else {
        return Ok(RuleSet::default());
    };
    let list = |kind: &str| -> Result<Vec<Rule>, RuleFileError> {
        let Some(items) = value.pointer(&format!("/safety/permissions/{kind}")) else {
            return Ok(Vec::new());
        };
        let items = items.as_array().ok_or_else(|| RuleFileError::Shape {
            path: path.to_owned(),
            key: format!("safety.permissions.{kind}"),
            what: "a list of rules",
        })?;
        (items.iter())
            .map(|item| {
                let text = item.as_str().ok_or_else(|| RuleFileError::NotARule {
                    path: path.to_owned(),
                    kind: kind.to_owned(),
                    item: item.to_string(),
                })?;
                Rule::parse(text).map_err(|source| RuleFileError::Rule {
                    path: path.to_owned(),
                    source,
                })
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
) -> (Vec<(Layer, RuleSet)>, Vec<RuleFileError>) {
    let mut user = RuleSet::default();
    let mut project = RuleSet::default();
    let mut errors = Vec::new();
    for status in files.iter().filter(|status| status.loaded) {
        let is_project = status.file.role == FileRole::Project;
        if is_project && !project_trusted {
            continue;
        }
        // A repository's file is input: a link in its place is not followed.
        let links = if is_project {
            Links::Refuse
        } else {
            Links::Follow
        };
        match read_rules(&status.file.path, links) {
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

/// Whether the project's rules in `loaded` may be used: not while its file has settings
/// waiting for trust (its rules are among them).
pub fn project_trusted(loaded: &crate::config::LoadedConfig) -> bool {
    !(loaded.files.iter())
        .filter(|status| status.file.role == FileRole::Project)
        .any(|status| (loaded.untrusted.iter()).any(|file| file.path == status.file.path))
}

/// Adds `rule` to the `kind` (`allow` or `deny`) rules of the file at `path` (created when
/// missing), keeping everything else of it; written to a temporary file and renamed over it.
pub fn save_rule(path: &Path, kind: &str, rule: &Rule) -> Result<(), RuleFileError> {
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
pub fn remove_rule(path: &Path, kind: &str, rule: &Rule) -> Result<(), RuleFileError> {
    let text = Value::String(rule.to_string());
    edit(path, |list| list.retain(|item| *item != text), kind)
}

fn edit(
    path: &Path,
    change: impl FnOnce(&mut Vec<Value>),
    kind: &str,
) -> Result<(), RuleFileError> {
    let mut value = read_json(path, Links::Follow, true)?.unwrap_or_else(|| json!({}));
    let shape = |key: &str, what: &'static str| RuleFileError::Shape {
        path: path.to_owned(),
        key: key.to_owned(),
        what,
    };
    let mut section = value
        .as_object_mut()
        .ok_or_else(|| shape("the top", "an object"))?;
    for key in ["safety", "permissions"] {
        let entry = section.entry(key).or_insert_with(|| json!({}));
        section = entry
            .as_object_mut()
            .ok_or_else(|| shape(key, "an object"))?;
    }
    let list = section.entry(kind).or_insert_with(|| json!([]));
    let list = list
        .as_array_mut()
        .ok_or_else(|| shape(&format!("safety.permissions.{kind}"), "a list"))?;
    change(list);
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    write_atomically(path, &format!("{text}\n")).map_err(|source| RuleFileError::Write {
        path: path.to_owned(),
        source,
    })
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
#[allow(clippy::unwrap_used)]
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
        assert_eq!(
            read_rules(&path, Links::Refuse).unwrap().allow,
            vec![rule.clone()]
        );
        remove_rule(&path, "allow", &rule).unwrap();
        assert!(read_rules(&path, Links::Refuse).unwrap().allow.is_empty());
        std::fs::write(&path, "{broken").unwrap();
        assert!(
            save_rule(&path, "allow", &rule)
                .unwrap_err()
                .to_string()
                .contains("left alone")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{broken");
    }

    #[test]
    fn a_projects_rule_file_that_is_a_link_or_a_fifo_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.json");
        std::fs::write(
            &other,
            r#"{"safety": {"permissions": {"allow": ["run_shell"]}}}"#,
        )
        .unwrap();
        let linked = dir.path().join("linked.json");
        std::os::unix::fs::symlink(&other, &linked).unwrap();
        let pipe = dir.path().join("pipe.json");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &pipe,
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        for path in [&linked, &pipe] {
            let error = read_rules(path, Links::Refuse).unwrap_err().to_string();
            assert!(error.starts_with("cannot read"), "{error}");
        }
        // The user's own file may be a link (dotfiles kept elsewhere).
        assert_eq!(read_rules(&linked, Links::Follow).unwrap().allow.len(), 1);
    }
}
