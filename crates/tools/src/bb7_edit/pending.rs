//! Applying one response's tool calls to a pending buffer, all or nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use ybs_core::{ToolCall, file_id};

use super::args::{self, AnchoredCall, ArgError, Parsed, PathEdit};
use super::{DiffMode, apply_anchored, apply_search_replace, text};

/// Where the content an edit applied to came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseKind {
    /// Written or edited earlier in the same response.
    Pending,
    /// The chat's output file.
    Output,
    /// The context snapshot.
    Context,
}

impl BaseKind {
    /// `pending`, `output` or `context`, as in error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            BaseKind::Pending => "pending",
            BaseKind::Output => "output",
            BaseKind::Context => "context",
        }
    }
}

impl fmt::Display for BaseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the daemon knows about a chat's files; the buffer never touches the disk itself.
///
/// Paths are the project-relative paths the model uses (normalised: no `./`, no empty or `.`
/// components). Return `None` for files the model may not edit (read-only, external, section)
/// so that an edit of them fails as "file not found".
pub trait BaseLookup {
    /// The content of the chat's `output/<path>`, if the file exists.
    fn output(&self, path: &str) -> Option<String>;
    /// The content of the writable context snapshot of `path`, if there is one.
    fn context(&self, path: &str) -> Option<String>;
}

impl<T: BaseLookup + ?Sized> BaseLookup for &T {
    fn output(&self, path: &str) -> Option<String> {
        (**self).output(path)
    }

    fn context(&self, path: &str) -> Option<String> {
        (**self).context(path)
    }
}

/// A [`BaseLookup`] over two in-memory maps (for tests and for callers that load eagerly).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryLookup {
    /// Output files by path.
    pub output: BTreeMap<String, String>,
    /// Context snapshots by path.
    pub context: BTreeMap<String, String>,
}

impl MemoryLookup {
    /// An empty lookup.
    pub fn new() -> Self {
        MemoryLookup::default()
    }

    /// Adds an output file.
    pub fn with_output(mut self, path: impl Into<String>, content: impl Into<String>) -> Self {
        self.output.insert(path.into(), content.into());
        self
    }

    /// Adds a context snapshot.
    pub fn with_context(mut self, path: impl Into<String>, content: impl Into<String>) -> Self {
        self.context.insert(path.into(), content.into());
        self
    }
}

impl BaseLookup for MemoryLookup {
    fn output(&self, path: &str) -> Option<String> {
        self.output.get(path).cloned()
    }

    fn context(&self, path: &str) -> Option<String> {
        self.context.get(path).cloned()
    }
}

/// A file to write into the chat's `output/` when the response is committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// Project-relative path (normalised).
    pub path: String,
    /// The complete new content.
    pub content: String,
}

impl FileWrite {
    /// The `file_id` of the new content (the `version` of its `AssistantWriteFile` event).
    pub fn file_id(&self) -> String {
        file_id(&self.path, &self.content)
    }
}

/// A tool call of a response that did not apply, for the `tool_calls` of `diff_error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedToolCall {
    /// `tool`: the tool name the model called.
    pub tool: String,
    /// `path`: the path of the call's first failing edit (empty when it could not be read).
    pub path: String,
    /// The call itself; `args` in the payload is `call.arguments`.
    pub call: ToolCall,
}

/// Why a response's file changes were not committed: the `errors` and `tool_calls` parts of
/// bb7's `diff_error` message. Nothing of the response was written.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffError {
    /// One line per failure, e.g. `edit_file edit 2 (src/a.rs, base=context): old_string not
    /// found in file`.
    pub errors: Vec<String>,
    /// The calls that failed, in response order.
    pub tool_calls: Vec<FailedToolCall>,
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.errors.join("\n"))
    }
}

impl std::error::Error for DiffError {}

/// The file changes of one response, buffered until [`finish`](PendingBuffer::finish).
///
/// Feed it the response's `write_file`/`edit_file` calls in order with
/// [`apply`](PendingBuffer::apply). Later calls and edits see the results of earlier ones.
/// A call applies all or nothing; a failing call is recorded and the buffer carries on, so
/// that every problem of the response is reported at once. `finish` then returns either every
/// file to write or, if anything failed, a [`DiffError`] and nothing to write.
///
/// Edits are numbered from 1 across the whole response: each element of a
/// `search_replace_multi` call's `edits`, and each `search_replace` or `anchored` call, is
/// one edit. Errors read `edit_file edit <i> (<path>, base=pending|output|context): <why>`
/// (`base=none` when the file was not found or the call could not be read, `?` for an
/// unreadable path) and `write_file (<path>): <why>`.
pub struct PendingBuffer<'a, L: BaseLookup + ?Sized> {
    mode: DiffMode,
    lookup: &'a L,
    files: HashMap<String, String>,
    order: Vec<String>,
    originals: HashMap<String, Option<(BaseKind, String)>>,
    written: HashSet<String>,
    edits_seen: usize,
    errors: Vec<String>,
    failed: Vec<FailedToolCall>,
}

/// The changes a call makes before it is known to succeed.
#[derive(Default)]
struct Stage {
    files: HashMap<String, String>,
    order: Vec<String>,
    written: Vec<String>,
    errors: Vec<(String, String)>,
}

impl Stage {
    fn set(&mut self, path: &str, content: String) {
        if self.files.insert(path.to_owned(), content).is_none() {
            self.order.push(path.to_owned());
        }
    }

    fn fail(&mut self, path: &str, message: String) {
        self.errors.push((path.to_owned(), message));
    }
}

impl<'a, L: BaseLookup + ?Sized> PendingBuffer<'a, L> {
    /// An empty buffer for a response produced with the tools of `mode`.
    pub fn new(mode: DiffMode, lookup: &'a L) -> Self {
        PendingBuffer {
            mode,
            lookup,
            files: HashMap::new(),
            order: Vec::new(),
            originals: HashMap::new(),
            written: HashSet::new(),
            edits_seen: 0,
            errors: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// The errors recorded so far.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The pending content of `path`, if this response wrote or edited it so far.
    pub fn pending(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    /// Applies one tool call. On failure nothing of this call is kept, the errors are
    /// recorded for [`finish`](PendingBuffer::finish) and also returned.
    pub fn apply(&mut self, call: &ToolCall) -> Result<(), Vec<String>> {
        let mut stage = Stage::default();
        match args::parse(call, self.mode) {
            Parsed::Write { path, content } => self.write(&mut stage, &path, content),
            Parsed::SearchReplace(edits) => self.search_replace(&mut stage, edits),
            Parsed::Anchored(Ok(a)) => self.anchored(&mut stage, a),
            Parsed::Anchored(Err(err)) => {
                let i = self.next_edit();
                stage.fail(path_of(&err), edit_error(i, path_of(&err), None, &err.why));
            }
            Parsed::Invalid(err) => {
                let message = if call.name == super::EDIT_FILE {
                    edit_error(self.next_edit(), path_of(&err), None, &err.why)
                } else {
                    format!(
                        "{} ({}): {}",
                        call.name,
                        display_path(path_of(&err)),
                        err.why
                    )
                };
                stage.fail(path_of(&err), message);
            }
        }
        if stage.errors.is_empty() {
            for path in stage.order {
                if let Some(content) = stage.files.remove(&path) {
                    if self.files.insert(path.clone(), content).is_none() {
                        self.order.push(path);
                    }
                }
            }
            self.written.extend(stage.written);
            return Ok(());
        }
        self.failed.push(FailedToolCall {
            tool: call.name.clone(),
            path: stage.errors[0].0.clone(),
            call: call.clone(),
        });
        let messages: Vec<String> = stage.errors.into_iter().map(|(_, m)| m).collect();
        self.errors.extend(messages.iter().cloned());
        Err(messages)
    }

    /// Every file to write, in the order the response first touched them, or the
    /// `diff_error` parts when any call failed (then nothing may be written).
    pub fn finish(mut self) -> Result<Vec<FileWrite>, DiffError> {
        if !self.errors.is_empty() {
            return Err(DiffError {
                errors: self.errors,
                tool_calls: self.failed,
            });
        }
        Ok(self
            .order
            .into_iter()
            .filter_map(|path| {
                let content = self.files.remove(&path)?;
                Some(FileWrite { path, content })
            })
            .collect())
    }

    /// The index of the next edit, counted from 0 over the whole response as the first bb7
    /// does.
    fn next_edit(&mut self) -> usize {
        self.edits_seen += 1;
        self.edits_seen - 1
    }

    /// The file as it was before this response (output, else context), looked up once.
    fn original(&mut self, path: &str) -> Option<(BaseKind, String)> {
        if let Some(known) = self.originals.get(path) {
            return known.clone();
        }
        let found = self
            .lookup
            .output(path)
            .map(|c| (BaseKind::Output, c))
            .or_else(|| self.lookup.context(path).map(|c| (BaseKind::Context, c)));
        self.originals.insert(path.to_owned(), found.clone());
        found
    }

    /// The content an edit of `path` applies to, first that exists: pending (this call's
    /// stage, then earlier calls), output, context.
    fn base(&mut self, stage: &Stage, path: &str) -> Option<(BaseKind, String)> {
        if let Some(c) = stage.files.get(path).or_else(|| self.files.get(path)) {
            return Some((BaseKind::Pending, c.clone()));
        }
        self.original(path)
    }

    fn write(&mut self, stage: &mut Stage, raw_path: &str, content: String) {
        let path = match normalize_path(raw_path) {
            Ok(p) => p,
            Err(why) => {
                return stage.fail(
                    raw_path,
                    format!("write_file ({}): {why}", display_path(raw_path)),
                );
            }
        };
        if self.written.contains(&path) {
            let why = "write_file was already called for this path in this response; \
                       send one complete write_file per file";
            return stage.fail(&path, format!("write_file ({path}): {why}"));
        }
        // A rewrite of a CRLF file stays CRLF.
        let content = match self.base(stage, &path) {
            Some((_, old)) if text::eol(&old) == "\r\n" => text::with_eol(&content, "\r\n"),
            _ => content,
        };
        stage.written.push(path.clone());
        stage.set(&path, content);
    }

    fn search_replace(&mut self, stage: &mut Stage, edits: Vec<Result<PathEdit, ArgError>>) {
        let first_index = self.edits_seen;
        let all_noops = !edits.is_empty()
            && edits
                .iter()
                .all(|e| e.as_ref().is_ok_and(|e| e.edit.is_noop()));
        if all_noops {
            self.edits_seen += edits.len();
            let path = edits
                .iter()
                .find_map(|e| e.as_ref().ok())
                .map(|e| e.path.clone())
                .unwrap_or_default();
            let path = normalize_path(&path).unwrap_or(path);
            let kind = self.base(stage, &path).map(|(k, _)| k);
            return stage.fail(
                &path,
                edit_error(first_index, &path, kind, "all edits are no-ops"),
            );
        }
        for edit in edits {
            let i = self.next_edit();
            let edit = match edit {
                Ok(e) => e,
                Err(err) => {
                    stage.fail(path_of(&err), edit_error(i, path_of(&err), None, &err.why));
                    continue;
                }
            };
            if edit.edit.is_noop() {
                continue;
            }
            let Some((path, kind, base)) = self.checked_base(stage, i, &edit.path, &edit.file_id)
            else {
                continue;
            };
            match apply_search_replace(&base, &edit.edit) {
                Ok(done) => stage.set(&path, done.content),
                Err(err) => stage.fail(&path, edit_error(i, &path, Some(kind), &err.to_string())),
            }
        }
    }

    fn anchored(&mut self, stage: &mut Stage, call: AnchoredCall) {
        let i = self.next_edit();
        let Some((path, kind, base)) = self.checked_base(stage, i, &call.path, &call.file_id)
        else {
            return;
        };
        match apply_anchored(&base, &call.changes) {
            Ok(content) => stage.set(&path, content),
            Err(err) => stage.fail(&path, edit_error(i, &path, Some(kind), &err.to_string())),
        }
    }

    /// Normalises the path, finds the base and checks `file_id` against it; records the error
    /// and returns `None` when any of that fails.
    fn checked_base(
        &mut self,
        stage: &mut Stage,
        i: usize,
        raw_path: &str,
        given_id: &str,
    ) -> Option<(String, BaseKind, String)> {
        let path = match normalize_path(raw_path) {
            Ok(p) => p,
            Err(why) => {
                stage.fail(raw_path, edit_error(i, raw_path, None, &why));
                return None;
            }
        };
        let Some((kind, base)) = self.base(stage, &path) else {
            let why = "file not found in the chat's output or context; \
                       create new files with write_file";
            stage.fail(&path, edit_error(i, &path, None, why));
            return None;
        };
        // The model quotes the id shown in the prompt, i.e. of the file before this response;
        // after a pending write or edit it cannot know a newer one, so both are accepted.
        let base_id = file_id(&path, &base);
        let original_id = self.original(&path).map(|(_, c)| file_id(&path, c));
        let given = given_id.trim().to_ascii_lowercase();
        if given != base_id && Some(&given) != original_id.as_ref() {
            let expected = original_id.unwrap_or(base_id);
            let why = format!("file_id mismatch: got {given_id}, expected {expected}");
            stage.fail(&path, edit_error(i, &path, Some(kind), &why));
            return None;
        }
        Some((path, kind, base))
    }
}

/// Applies a whole response's calls (in order) and returns the files to write, or the
/// `diff_error` parts if anything failed. See [`PendingBuffer`].
pub fn apply_response<L: BaseLookup + ?Sized>(
    mode: DiffMode,
    calls: &[ToolCall],
    lookup: &L,
) -> Result<Vec<FileWrite>, DiffError> {
    let mut buffer = PendingBuffer::new(mode, lookup);
    for call in calls {
        // Failures are collected in the buffer and reported by `finish`.
        let _ = buffer.apply(call);
    }
    buffer.finish()
}

fn edit_error(i: usize, path: &str, base: Option<BaseKind>, why: &str) -> String {
    let base = base.map_or("none", BaseKind::as_str);
    format!(
        "edit_file edit {i} ({}, base={base}): {why}",
        display_path(path)
    )
}

fn path_of(err: &ArgError) -> &str {
    err.path.as_deref().unwrap_or("")
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "?" } else { path }
}

/// The project-relative form of a path the model gave: `.` and empty components dropped.
/// Absolute paths, `..` components and NUL bytes are refused. (The daemon still resolves the
/// result against the project root before writing.)
pub fn normalize_path(path: &str) -> Result<String, String> {
    let refuse = || {
        Err(format!(
            "path {path:?} must be relative to the project root and stay inside it"
        ))
    };
    if path.contains('\0')
        || path.starts_with('/')
        || path.starts_with('\\')
        || path.starts_with('~')
    {
        return refuse();
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return refuse();
    }
    let mut parts = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return refuse(),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("path is empty: give the file's path relative to the project root".to_owned());
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_paths() {
        assert_eq!(normalize_path("./src//a.rs").as_deref(), Ok("src/a.rs"));
        assert!(normalize_path("../x").is_err());
        assert!(normalize_path("/etc/passwd").is_err());
        assert!(normalize_path("C:\\x").is_err());
        assert!(normalize_path("a\0b").is_err());
        assert!(normalize_path("./").is_err());
    }
}
