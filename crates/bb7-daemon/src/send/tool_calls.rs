//! A reply's `write_file` / `edit_file` calls as the first bb7 treats them, around the edit
//! algorithms of `ybs_edit`:
//!
//! - [`precheck`] finds what ends the whole reply with an `error` instead of a `diff_error`
//!   (a `write_file` of a path the reply already wrote, `edit_file` arguments the first bb7
//!   cannot read (`ybs_edit::read_error`), an edit of a path
//!   neither in context, output nor written earlier in the reply, a second anchored edit of
//!   one path) and the calls that touch a read-only context file (a `diff_error` naming it);
//! - [`apply`] applies the calls one by one, ending the reply at a `write_file` of a path an
//!   earlier call edited successfully (a failed edit leaves the path free, as in the first
//!   bb7), and announcing each applied one with the chunk
//!   `\n[Assistant added: PATH]\n` or `\n[Assistant modified: PATH]\n` (`N edit(s)` for a
//!   multi-edit call), and keeps the writes
//!   of the calls that applied even when others failed (the hidden repair builds on them);
//! - [`entries`] is the `tool_calls` of `diff_error`: every call of the reply;
//! - [`Lookup`] is the chat's files as the edit algorithms see them, [`WithPending`] the same
//!   with a first attempt's writes shown as output (for the hidden repair).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use ybs_core::ToolCall;
use ybs_edit::{BaseLookup, DiffError, DiffMode, EDIT_FILE, FileWrite, PendingBuffer, WRITE_FILE};

use crate::send::assemble::{FileBlock, Source, Status};
use crate::store::active::Active;
use crate::store::paths;

/// The paths a call names, in order, without repeats (normalised when they can be). Repeats
/// are found by hashing: one call may name tens of thousands of paths, and comparing each
/// with all before it would hold the daemon for seconds outside any budget.
pub fn call_paths(call: &ToolCall) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |raw: Option<&str>| {
        if let Some(raw) = raw.filter(|raw| !raw.is_empty()) {
            let path = paths::validate_relative(raw).unwrap_or_else(|_| raw.to_owned());
            if seen.insert(path.clone()) {
                found.push(path);
            }
        }
    };
    if call.arguments_error.is_some() {
        return Vec::new();
    }
    match call.arguments.get("edits").and_then(Value::as_array) {
        Some(edits) => {
            for edit in edits {
                push(edit.get("path").and_then(Value::as_str));
            }
        }
        None => push(call.arguments.get("path").and_then(Value::as_str)),
    }
    found
}

/// What [`precheck`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Precheck {
    /// Errors for calls touching read-only context files or writing a name reserved for
    /// temporary files (each names its file).
    pub read_only: Vec<String>,
}

/// What ends a reply with an `error` instead of a `diff_error`: the text, and the index of
/// the call that caused it (the calls before it are still announced, as in the first bb7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// The index of the bad call in the reply.
    pub at: usize,
    /// The `error`'s text (also saved as a system message).
    pub message: String,
}

/// Checks a reply's calls before they are applied. `Err` says what ends the reply.
pub fn precheck(mode: DiffMode, calls: &[ToolCall], active: &Active) -> Result<Precheck, Ending> {
    let mut produced: HashSet<String> = HashSet::new();
    let mut written: HashSet<String> = HashSet::new();
    let mut found = Precheck::default();
    for (at, call) in calls.iter().enumerate() {
        let end = |message: String| Err(Ending { at, message });
        match call.name.as_str() {
            WRITE_FILE => {
                let Some(path) = call_paths(call).into_iter().next() else {
                    continue;
                };
                // As the first bb7: a write of a path the reply already wrote ends it (after an
                // edit, only a successful one does: see `apply`).
                if written.contains(&path) {
                    return end(duplicate_write(&path));
                }
                if is_read_only(active, &path) {
                    found.read_only.push(format!(
                        "write_file ({path}): {path} is read-only in context and cannot be written"
                    ));
                } else if is_temp_path(&path) {
                    found.read_only.push(temp_name_error("write_file", &path));
                }
                written.insert(path.clone());
                produced.insert(path);
            }
            EDIT_FILE => {
                if let Some(why) = &call.arguments_error {
                    return end(format!("edit_file parse error: {why}"));
                }
                if let Some(why) = ybs_edit::read_error(mode, &call.arguments) {
                    return end(format!("edit_file parse error: {why}"));
                }
                let paths = call_paths(call);
                for path in &paths {
                    if is_temp_path(path) {
                        found.read_only.push(temp_name_error("edit_file", path));
                        continue;
                    }
                    if mode == DiffMode::Anchored && produced.contains(path) {
                        return end(format!(
                            "Duplicate file output for path in single response: {path}"
                        ));
                    }
                    if produced.contains(path) || active.has_output(path) {
                        continue;
                    }
                    match active.chat.find_file(path) {
                        Some(_) if is_read_only(active, path) => found.read_only.push(format!(
                            "edit_file ({path}): {path} is read-only in context and cannot be edited"
                        )),
                        Some(_) => {}
                        None => return end(format!("edit_file: {path} not in context or output")),
                    }
                }
                produced.extend(paths);
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The `error` of a second write of `path` in one reply (the first bb7's words).
fn duplicate_write(path: &str) -> String {
    format!("Duplicate write_file for path in single response: {path}")
}

/// Whether a component of `path` is named like the daemon's temporary files, which are
/// never listed as outputs: such a write would be announced and then silently dropped.
fn is_temp_path(path: &str) -> bool {
    path.split('/').any(ybs_fsguard::confined::is_temp_name)
}

fn temp_name_error(tool: &str, path: &str) -> String {
    format!(
        "{tool} ({path}): names like {path} are reserved for bb7's temporary files; choose another name"
    )
}

/// Whether `path` is in context and may not be written by the model.
fn is_read_only(active: &Active, path: &str) -> bool {
    active.chat.find_file(path).is_some_and(|file| {
        file.readonly || file.external || file.section().is_some() || active.chat.global
    })
}

/// The result of [`apply`].
#[derive(Debug, Clone)]
pub struct Applied {
    /// Every file to write, or why nothing may be written.
    pub outcome: Result<Vec<FileWrite>, DiffError>,
    /// The writes of the calls that applied (also when others failed), by path.
    pub partial: Vec<FileWrite>,
    /// The chunks announcing each applied call, in order.
    pub chunks: Vec<String>,
    /// A `write_file` of a path an earlier call of the reply edited: it ends the reply (the
    /// calls after it are not processed).
    pub ending: Option<Ending>,
}

/// Applies `calls` in order against `lookup`; `in_context` tells added from modified files.
/// Processing stops at the first call after `cancel` is cancelled (the caller then ends the
/// send as cancelled).
pub fn apply<L: BaseLookup + ?Sized>(
    mode: DiffMode,
    calls: &[ToolCall],
    lookup: &L,
    in_context: impl Fn(&str) -> bool,
    cancel: &tokio_util::sync::CancellationToken,
) -> Applied {
    let mut buffer = PendingBuffer::new(mode, lookup);
    let mut chunks = Vec::new();
    let mut touched: Vec<String> = Vec::new();
    let mut touched_set: HashSet<String> = HashSet::new();
    let mut edited: HashSet<String> = HashSet::new();
    let mut ending = None;
    for (at, call) in calls.iter().enumerate() {
        if cancel.is_cancelled() {
            tracing::info!(
                done = at,
                of = calls.len(),
                "cancelled: the tool calls left are not processed"
            );
            break;
        }
        let paths = call_paths(call);
        if call.name == WRITE_FILE {
            if let Some(path) = paths.first().filter(|path| edited.contains(*path)) {
                ending = Some(Ending {
                    at,
                    message: duplicate_write(path),
                });
                break;
            }
        }
        if buffer.apply(call).is_err() {
            continue;
        }
        if call.name == EDIT_FILE {
            edited.extend(paths.iter().cloned());
        }
        let edits = call.arguments.get("edits").and_then(Value::as_array);
        let chunk = match (call.name.as_str(), paths.as_slice(), edits) {
            (WRITE_FILE, [path, ..], _) if !in_context(path) => {
                format!("Assistant added: {path}")
            }
            // As the first bb7: a multi-edit call is announced by its number of edits, the
            // no-ops (old equal to new) left out.
            (EDIT_FILE, _, Some(edits)) => {
                let changing = edits
                    .iter()
                    .filter(|edit| edit.get("old_string") != edit.get("new_string"))
                    .count();
                format!("Assistant modified: {changing} edit(s)")
            }
            (_, paths, _) => format!("Assistant modified: {}", paths.join(", ")),
        };
        chunks.push(format!("\n[{chunk}]\n"));
        for path in paths {
            if touched_set.insert(path.clone()) {
                touched.push(path);
            }
        }
    }
    let partial = touched
        .iter()
        .filter_map(|path| {
            buffer.pending(path).map(|content| FileWrite {
                path: path.clone(),
                content: content.to_owned(),
            })
        })
        .collect();
    Applied {
        outcome: buffer.finish(),
        partial,
        chunks,
        ending,
    }
}

/// `tool_calls` of `diff_error`: every call of the reply as `{tool, args | args_raw, path}`
/// (`path` the call's paths joined by `,`, left out when it names none).
pub fn entries(calls: &[ToolCall]) -> Vec<Value> {
    calls
        .iter()
        .map(|call| {
            let mut entry = json!({"tool": call.name});
            if let Value::Object(fields) = &mut entry {
                match (&call.arguments_error, &call.arguments) {
                    (Some(_), Value::String(raw)) => {
                        fields.insert("args_raw".into(), json!(raw));
                    }
                    (Some(_), other) => {
                        fields.insert("args_raw".into(), json!(other.to_string()));
                    }
                    (None, args) => {
                        fields.insert("args".into(), args.clone());
                    }
                }
                let paths = call_paths(call);
                if !paths.is_empty() {
                    fields.insert("path".into(), json!(paths.join(",")));
                }
            }
            entry
        })
        .collect()
}

/// The chat's files as the edit algorithms see them: outputs, and snapshots of writable
/// whole files (read-only, external and section files are `None`).
pub struct Lookup<'a>(pub &'a Active);

impl BaseLookup for Lookup<'_> {
    fn output(&self, path: &str) -> Option<String> {
        self.0.output_content(path).ok()
    }

    fn context(&self, path: &str) -> Option<String> {
        let file = self.0.chat.find_file(path)?;
        if file.readonly || file.external || file.section().is_some() {
            return None;
        }
        self.0.read_snapshot(file).ok()
    }
}

/// Adds the read-only refusals found by [`precheck`] to an outcome.
pub fn with_read_only(
    outcome: Result<Vec<FileWrite>, DiffError>,
    checked: &Precheck,
) -> Result<Vec<FileWrite>, DiffError> {
    if checked.read_only.is_empty() {
        return outcome;
    }
    let mut errors = checked.read_only.clone();
    if let Err(diff) = outcome {
        errors.extend(diff.errors);
    }
    Err(DiffError {
        errors,
        tool_calls: Vec::new(),
    })
}

/// The first attempt's writes updated by the repair's.
pub fn merge_writes(first: &[FileWrite], repair: Vec<FileWrite>) -> Vec<FileWrite> {
    let mut writes: Vec<FileWrite> = first.to_vec();
    for write in repair {
        match writes.iter_mut().find(|known| known.path == write.path) {
            Some(known) => *known = write,
            None => writes.push(write),
        }
    }
    writes
}

/// A lookup that sees `pending` (a first attempt's writes) as the chat's output.
pub struct WithPending<'a, L: ?Sized> {
    /// The chat's own files.
    pub inner: &'a L,
    /// Writes shown as output.
    pub pending: HashMap<String, String>,
}

impl<L: BaseLookup + ?Sized> BaseLookup for WithPending<'_, L> {
    fn output(&self, path: &str) -> Option<String> {
        self.pending
            .get(path)
            .cloned()
            .or_else(|| self.inner.output(path))
    }

    fn context(&self, path: &str) -> Option<String> {
        self.inner.context(path)
    }
}

/// The files of a request with `pending` writes shown as the model's output: a writable
/// context file becomes the read-only original followed by the pending output, an output
/// is replaced, and a new path is added output.
pub fn with_pending(files: &[FileBlock], pending: &[FileWrite]) -> Vec<FileBlock> {
    let mut files = files.to_vec();
    for write in pending {
        let mut block = FileBlock {
            path: write.path.clone(),
            id: write.file_id(),
            writable: true,
            source: Source::Output,
            lines: None,
            status: Some(Status::AddedOutput),
            content: write.content.clone(),
        };
        match files
            .iter_mut()
            .find(|file| file.path == write.path && file.writable)
        {
            Some(existing) if existing.source == Source::Output => {
                block.status = existing.status;
                *existing = block;
            }
            Some(existing) => {
                existing.writable = false;
                existing.status = Some(Status::Original);
                block.status = Some(Status::PendingOutput);
                files.push(block);
            }
            None => files.push(block),
        }
    }
    files
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall::new("1", name, args)
    }

    #[test]
    fn entries_list_every_call_with_its_paths() {
        let mut broken = call(EDIT_FILE, json!("{not json"));
        broken.arguments_error = Some("expected value".into());
        let calls = [
            call(WRITE_FILE, json!({"path": "a.txt", "content": "x"})),
            call(
                EDIT_FILE,
                json!({"edits": [{"path": "b.rs"}, {"path": "c.rs"}, {"path": "b.rs"}]}),
            ),
            broken,
        ];
        assert_eq!(
            entries(&calls),
            vec![
                json!({"tool": "write_file", "args": {"path": "a.txt", "content": "x"}, "path": "a.txt"}),
                json!({"tool": "edit_file", "args": {"edits": [{"path": "b.rs"}, {"path": "c.rs"}, {"path": "b.rs"}]}, "path": "b.rs,c.rs"}),
                json!({"tool": "edit_file", "args_raw": "{not json"}),
            ]
        );
    }

    #[test]
    fn a_cancel_stops_processing_the_calls() {
        let calls: Vec<ToolCall> = (0..1000)
            .map(|n| {
                call(
                    WRITE_FILE,
                    json!({"path": format!("f{n}.txt"), "content": "x"}),
                )
            })
            .collect();
        let lookup = ybs_edit::MemoryLookup::new();
        let live = tokio_util::sync::CancellationToken::new();
        let all = apply(DiffMode::Anchored, &calls, &lookup, |_| false, &live);
        assert_eq!(all.chunks.len(), 1000);
        let cancelled = tokio_util::sync::CancellationToken::new();
        cancelled.cancel();
        let none = apply(DiffMode::Anchored, &calls, &lookup, |_| false, &cancelled);
        assert!(none.chunks.is_empty() && none.partial.is_empty());
    }

    #[test]
    fn a_call_naming_sixty_thousand_paths_is_deduplicated_once_each() {
        let edits: Vec<Value> = (0..60_000)
            .map(|n| json!({"path": format!("f{}.rs", n % 30_000), "old_string": "a", "new_string": "b"}))
            .collect();
        let call = call("edit_file", json!({"edits": edits}));
        let paths = call_paths(&call);
        assert_eq!(paths.len(), 30_000);
        assert_eq!(paths[0], "f0.rs");
        assert_eq!(paths[29_999], "f29999.rs");
    }
}
