//! Reading the arguments of `write_file` and `edit_file` calls into typed values.
//!
//! The JSON value of a [`ToolCall`] is read with its own accessor methods (this crate does not
//! name `serde_json` types), so the per-field checks live in macros.

use ybs_core::ToolCall;

use super::{AnchoredChange, DiffMode, SearchReplace};

/// One search/replace edit addressed to a file.
#[derive(Debug, Clone)]
pub(crate) struct PathEdit {
    pub path: String,
    pub file_id: String,
    pub edit: SearchReplace,
}

/// An anchored edit call.
#[derive(Debug, Clone)]
pub(crate) struct AnchoredCall {
    pub path: String,
    pub file_id: String,
    pub changes: Vec<AnchoredChange>,
}

/// An argument problem, with the path when it could be read.
#[derive(Debug, Clone)]
pub(crate) struct ArgError {
    pub path: Option<String>,
    pub why: String,
}

/// A call, read according to the diff mode.
#[derive(Debug, Clone)]
pub(crate) enum Parsed {
    Write {
        path: String,
        content: String,
    },
    /// One entry per edit (a `search_replace` call has exactly one).
    SearchReplace(Vec<Result<PathEdit, ArgError>>),
    Anchored(Result<AnchoredCall, ArgError>),
    /// The whole call is unusable (bad JSON, wrong tool, `edits` not an array...).
    Invalid(ArgError),
}

/// `$obj.$key` as `&str`, or an error message naming the field.
macro_rules! req_str {
    ($obj:expr, $key:literal) => {
        match $obj.get($key) {
            Some(v) => v
                .as_str()
                .ok_or_else(|| format!("`{}` must be a string", $key)),
            None => Err(format!("missing `{}`", $key)),
        }
    };
}

/// An optional string field (absent or null is `""`).
macro_rules! opt_str {
    ($obj:expr, $key:literal) => {
        match $obj.get($key) {
            None => Ok(""),
            Some(v) if v.is_null() => Ok(""),
            Some(v) => v
                .as_str()
                .ok_or_else(|| format!("`{}` must be a string", $key)),
        }
    };
}

/// An optional boolean field (absent or null is `false`).
macro_rules! opt_bool {
    ($obj:expr, $key:literal) => {
        match $obj.get($key) {
            None => Ok(false),
            Some(v) if v.is_null() => Ok(false),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| format!("`{}` must be a boolean", $key)),
        }
    };
}

/// An array of strings, as owned lines.
macro_rules! str_lines {
    ($v:expr, $what:expr) => {
        match $v.as_array() {
            Some(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{} must contain only strings", $what))
                })
                .collect::<Result<Vec<String>, String>>(),
            None => Err(format!("{} must be an array of strings", $what)),
        }
    };
}

/// Reads one `{path, file_id, old_string, new_string, replace_all?}` object.
macro_rules! path_edit {
    ($obj:expr) => {{
        let obj = $obj;
        let path = req_str!(obj, "path").ok().map(str::to_owned);
        let read = || -> Result<PathEdit, String> {
            if !obj.is_object() {
                return Err("each edit must be an object".to_owned());
            }
            let path = req_str!(obj, "path")?;
            // Absent (or null) strings are empty, as the first bb7 reads them: a missing
            // `file_id` is then reported as missing against the expected id.
            let file_id = opt_str!(obj, "file_id")?;
            let old = opt_str!(obj, "old_string")?;
            let new = opt_str!(obj, "new_string")?;
            let all = opt_bool!(obj, "replace_all")?;
            Ok(PathEdit {
                path: path.to_owned(),
                file_id: file_id.to_owned(),
                edit: SearchReplace::new(old, new).replace_all(all),
            })
        };
        read().map_err(|why| ArgError { path, why })
    }};
}

/// Reads `call` as a `write_file` or `edit_file` call of `mode`.
pub(crate) fn parse(call: &ToolCall, mode: DiffMode) -> Parsed {
    let args = &call.arguments;
    let path = req_str!(args, "path").ok().map(str::to_owned);
    let invalid = |why: String| {
        Parsed::Invalid(ArgError {
            path: path.clone(),
            why,
        })
    };
    if let Some(err) = &call.arguments_error {
        return invalid(format!("arguments are not valid JSON ({err})"));
    }
    if !args.is_object() {
        return invalid("arguments must be a JSON object".to_owned());
    }
    match call.name.as_str() {
        super::WRITE_FILE => {
            let read = || -> Result<(String, String), String> {
                Ok((
                    req_str!(args, "path")?.to_owned(),
                    req_str!(args, "content")?.to_owned(),
                ))
            };
            match read() {
                Ok((path, content)) => Parsed::Write { path, content },
                Err(why) => invalid(why),
            }
        }
        super::EDIT_FILE => match mode {
            DiffMode::Off => {
                invalid("edit_file is not available (diff_mode is off): use write_file".to_owned())
            }
            // Models mix up the two search/replace shapes; both are read in both modes.
            DiffMode::SearchReplace | DiffMode::SearchReplaceMulti => {
                match args.get("edits").and_then(|e| e.as_array()) {
                    Some(edits) if !edits.is_empty() => {
                        Parsed::SearchReplace(edits.iter().map(|e| path_edit!(e)).collect())
                    }
                    Some(_) => invalid("`edits` is empty: give at least one edit".to_owned()),
                    None if mode == DiffMode::SearchReplace || args.get("old_string").is_some() => {
                        Parsed::SearchReplace(vec![path_edit!(args)])
                    }
                    None => invalid(
                        "missing `edits` (an array of {path, file_id, old_string, new_string})"
                            .to_owned(),
                    ),
                }
            }
            DiffMode::Anchored => Parsed::Anchored(anchored(call).map_err(|why| ArgError {
                path: path.clone(),
                why,
            })),
        },
        other => invalid(format!(
            "unknown tool `{other}`: use write_file or edit_file"
        )),
    }
}

fn anchored(call: &ToolCall) -> Result<AnchoredCall, String> {
    let args = &call.arguments;
    let path = req_str!(args, "path")?.to_owned();
    let file_id = opt_str!(args, "file_id")?.to_owned();
    let items = match args.get("changes") {
        Some(c) => c
            .as_array()
            .ok_or_else(|| "`changes` must be an array".to_owned())?,
        None => return Err("missing `changes`".to_owned()),
    };
    let mut changes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let start = match item.get("start") {
            Some(v) => str_lines!(v, format!("change {n}: `start`"))?,
            None => return Err(format!("change {n}: missing `start`")),
        };
        let end = match item.get("end") {
            None => None,
            Some(v) if v.is_null() => None,
            Some(v) => Some(str_lines!(v, format!("change {n}: `end`"))?),
        };
        // Absent or null content deletes the region.
        let content = match item.get("content") {
            None => None,
            Some(v) if v.is_null() => None,
            Some(v) => Some(str_lines!(v, format!("change {n}: `content`"))?),
        };
        changes.push(AnchoredChange {
            start,
            end,
            content,
        });
    }
    Ok(AnchoredCall {
        path,
        file_id,
        changes,
    })
}
