//! `edit_file`: one or several text replacements in a file, applied all or nothing.
//!
//! Matching is bb7's ([`ybs_edit::apply_search_replace`]): exact first, then the same
//! lines with other trailing whitespace, other indentation (the new text re-indented), a first
//! or last line quoted only in part, and CRLF/LF differences. Each edit applies to the result
//! of the one before; one that does not match (or matches several places without
//! `replace_all`) fails the whole call and the file is left as it was.

use serde_json::{Value, json};
use ybs_core::ToolSpec;
use ybs_edit::{SearchReplace, SearchReplaceError, apply_search_replace};

use super::shared::{read_text, spec, write_text};
use crate::declaration::{ActionKind, Asks, Declaration};
use crate::summary::{Change, Summary, change_note, counted, number, path_of};
use crate::{Args, Tool, ToolContext, ToolError};

/// The `edit_file` tool, taking a list of edits.
pub struct EditFile {
    spec: ToolSpec,
}

impl EditFile {
    /// The tool with its schema.
    pub fn new() -> Self {
        EditFile {
            spec: spec(
                "edit_file",
                "Edit a file by replacing text. Use read_file first to see current content. \
                 Either give one edit with old_text/new_text (and optionally replace_all), or \
                 several with `edits`: a list of {old_text, new_text, replace_all} applied in \
                 order, each to the result of the one before, all or nothing (if one fails, the \
                 file is not changed). Each old_text must match exactly one place unless \
                 replace_all is true; small differences in trailing whitespace and indentation \
                 are tolerated (new_text is then re-indented to match). Prefer one call with \
                 several edits over several calls for a change in several places of a file.",
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Path to file"},
                        "old_text": {"type": "string", "description": "Text to find and replace (must be unique in file unless replace_all); not with `edits`"},
                        "new_text": {"type": "string", "description": "Text to replace with; not with `edits`"},
                        "replace_all": {"type": "boolean", "description": "Replace all occurrences of old_text (default: false, fails if not unique)", "default": false},
                        "edits": {
                            "type": "array",
                            "description": "Several edits of the file, applied in order, all or nothing (instead of old_text/new_text)",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "old_text": {"type": "string", "description": "Text to find (must be unique unless replace_all)"},
                                    "new_text": {"type": "string", "description": "Text to replace with"},
                                    "replace_all": {"type": "boolean", "description": "Replace all occurrences (default: false)"}
                                },
                                "required": ["old_text", "new_text"]
                            }
                        }
                    },
                    "required": ["path"]
                }),
            ),
        }
    }
}

impl Default for EditFile {
    fn default() -> Self {
        Self::new()
    }
}

/// One replacement of an `edit_file` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The text to find.
    pub old_text: String,
    /// The text to put in its place.
    pub new_text: String,
    /// Replace every match instead of requiring exactly one.
    pub replace_all: bool,
}

/// The edits of an `edit_file` call's arguments: the `edits` list, or the single
/// `old_text`/`new_text` form. An error says what is wrong with the arguments.
pub fn edits_of(args: &Value) -> Result<Vec<Edit>, String> {
    let single = args.get("old_text").is_some_and(|v| !v.is_null())
        || args.get("new_text").is_some_and(|v| !v.is_null());
    match args.get("edits").filter(|v| !v.is_null()) {
        Some(_) if single => {
            Err("give either `edits` or `old_text`/`new_text`, not both".to_string())
        }
        Some(Value::Array(list)) if list.is_empty() => {
            Err("`edits` is empty; give at least one {old_text, new_text}".to_string())
        }
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, item)| {
                one_edit(item, args.get("replace_all")).map_err(|why| format!("edits[{i}]: {why}"))
            })
            .collect(),
        Some(_) => Err("`edits` must be a list of {old_text, new_text, replace_all}".to_string()),
        None => one_edit(args, None).map(|edit| vec![edit]),
    }
}

/// One edit from an object with `old_text`, `new_text` and optionally `replace_all`
/// (`outer_all`: the call's `replace_all`, which an item inherits unless it sets its own).
fn one_edit(item: &Value, outer_all: Option<&Value>) -> Result<Edit, String> {
    if !item.is_object() {
        return Err("must be an object {old_text, new_text, replace_all}".to_string());
    }
    let text = |key: &str| match item.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(format!("missing required argument `{key}`")),
        Some(_) => Err(format!("`{key}` must be a string")),
    };
    let replace_all = match item
        .get("replace_all")
        .filter(|v| !v.is_null())
        .or(outer_all)
    {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`replace_all` must be a boolean".to_string()),
    };
    Ok(Edit {
        old_text: text("old_text")?,
        new_text: text("new_text")?,
        replace_all,
    })
}

/// Applies `edits` to `text` in order, all or nothing: the new text and the number of
/// replacements, or why an edit cannot be applied (`path` names the file in messages).
pub fn apply_edits(text: &str, edits: &[Edit], path: &str) -> Result<(String, usize), String> {
    let mut current = text.to_string();
    let mut replacements = 0;
    for (i, edit) in edits.iter().enumerate() {
        let label = if edits.len() > 1 {
            format!("edit {} of {}: ", i + 1, edits.len())
        } else {
            String::new()
        };
        let unchanged = if edits.len() > 1 {
            "; no edit was applied, the file is unchanged"
        } else {
            ""
        };
        if edit.old_text.is_empty() {
            return Err(format!(
                "{label}old_text is empty; give the exact text to replace (use write_file to write a whole file){unchanged}"
            ));
        }
        let request = SearchReplace::new(edit.old_text.as_str(), edit.new_text.as_str())
            .replace_all(edit.replace_all);
        match apply_search_replace(&current, &request) {
            Ok(done) => {
                current = done.content;
                replacements += done.replacements;
            }
            Err(SearchReplaceError::NotUnique { count, lines }) => {
                let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                return Err(format!(
                    "{label}old_text is not unique in `{path}`: it matches {count} times (lines {}); include more surrounding lines to make it unique, or set replace_all to true{unchanged}",
                    lines.join(", ")
                ));
            }
            Err(_) => {
                let why = not_found_message(path, &current, &edit.old_text);
                let after = if i > 0 {
                    " (after the edits before it)"
                } else {
                    ""
                };
                return Err(format!("{label}{why}{after}{unchanged}"));
            }
        }
    }
    Ok((current, replacements))
}

impl Tool for EditFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            asks: Asks::UnreadFile,
            ..Declaration::file_changing(ActionKind::Edit)
        }
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        Some(format!("Edit {}", arguments.get("path")?.as_str()?))
    }

    /// `Edited src/main.rs (+3 -1)`.
    fn summarize(
        &self,
        arguments: &Value,
        result: &Value,
        change: Option<Change>,
    ) -> Option<Summary> {
        let replacements = number(result, "replacements")?;
        let note = match change {
            Some(change) => change_note(change),
            None => format!(
                " ({})",
                counted(replacements, "replacement", "replacements")
            ),
        };
        Some(Summary::ok(format!("Edited {}{note}", path_of(arguments))))
    }

    fn text_after(&self, before: Option<&str>, arguments: &Value) -> Option<String> {
        let edits = edits_of(arguments).ok()?;
        let (after, _) = apply_edits(before?, &edits, &path_of(arguments)).ok()?;
        Some(after)
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = args.str("path")?;
        let edits = edits_of(&args.to_value()).map_err(|why| args.invalid(why))?;
        let resolved = ctx.resolve(path)?;
        let text = read_text(ctx, &resolved, path)?;
        let (updated, replacements) =
            apply_edits(&text, &edits, path).map_err(ToolError::failed)?;
        write_text(ctx, &resolved, &updated)?;
        ctx.session.record_read(&resolved);
        Ok(json!({"success": true, "replacements": replacements, "error": null}))
    }
}

/// Says the text was not found and, when the first line of `old_text` appears with other
/// indentation, where.
fn not_found_message(path: &str, text: &str, old_text: &str) -> String {
    let first = old_text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let near: Vec<String> = if first.is_empty() {
        Vec::new()
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, line)| line.trim() == first)
            .map(|(i, _)| (i + 1).to_string())
            .take(10)
            .collect()
    };
    if near.is_empty() {
        format!(
            "old_text was not found in `{path}`; read the file again and copy the exact text to replace"
        )
    } else {
        format!(
            "old_text was not found in `{path}`; its first line appears (ignoring indentation) at line {}: check whitespace and the following lines",
            near.join(", ")
        )
    }
}
