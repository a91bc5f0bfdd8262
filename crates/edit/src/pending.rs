//! Applying one response's tool calls to a pending buffer, all or nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use ybs_core::{ToolCall, file_id};

use super::args::{self, AnchoredCall, ArgError, Parsed, PathEdit};
use super::work::MatchWork;
use super::{DiffMode, apply_anchored_with, apply_search_replace_with, text};

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
/// Errors read as the first bb7's. In `search_replace_multi` mode the edits of a call are
/// numbered from 0 (no-op edits left out, as they are dropped before anything is applied) and
/// a call stops at its first failing edit: `edit_file edit <i> (<path>, base=S): <why>` for a
/// failed match and `edit_file edit <i> (<path>): <id error>` for a `file_id` problem. In the
/// single-edit modes there is no number: `edit_file <path> (base=S): <why>` (search/replace),
/// `edit_file <path>: <why>` (anchored) and `edit_file <path>: <id error>`. The id errors are
/// `file_id mismatch: got A, expected B (base=S). <hint>` and `file_id missing: expected B for
/// <path> (base=S). <hint>`, where B and S are the file as the call found it. `base=none`
/// marks a file that was not found or a call that could not be read (`?` for an unreadable
/// path); `write_file (<path>): <why>` a bad write.
///
/// Matching is bounded: the buffer counts the work of every edit ([`MatchWork`], a default
/// limit of [`DEFAULT_WORK_LIMIT`](super::DEFAULT_WORK_LIMIT) steps for the whole response)
/// and, once it is used up, fails every further edit call with one error saying so instead of
/// trying it.
pub struct PendingBuffer<'a, L: BaseLookup + ?Sized> {
    mode: DiffMode,
    work: MatchWork,
    lookup: &'a L,
    files: HashMap<String, String>,
    order: Vec<String>,
    originals: HashMap<String, Option<(BaseKind, String)>>,
    written: HashSet<String>,
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
            work: MatchWork::default(),
            lookup,
            files: HashMap::new(),
            order: Vec::new(),
            originals: HashMap::new(),
            written: HashSet::new(),
            errors: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// The same buffer with another matching work limit, in steps.
    pub fn with_work_limit(mut self, limit: u64) -> Self {
        self.work = MatchWork::new(limit);
        self
    }

    /// The matching work done so far.
    pub fn work(&self) -> MatchWork {
        self.work
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
                stage.fail(
                    path_of(&err),
                    self.edit_error(0, path_of(&err), None, &err.why),
                );
            }
            Parsed::Invalid(err) => {
                let message = if call.name == super::EDIT_FILE {
                    self.edit_error(0, path_of(&err), None, &err.why)
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
        // Once the work is used up every later edit fails alike: say so once.
        let limit = self.work.exhausted_message();
        for message in &messages {
            if !(message.ends_with(&limit) && self.errors.iter().any(|e| e.ends_with(&limit))) {
                self.errors.push(message.clone());
            }
        }
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
        // No-op edits are dropped before numbering, as the first bb7 drops them when it reads
        // the call.
        let first_path = edits
            .iter()
            .find_map(|e| e.as_ref().ok())
            .map(|e| normalize_path(&e.path).unwrap_or_else(|_| e.path.clone()))
            .unwrap_or_default();
        let edits: Vec<Result<PathEdit, ArgError>> = edits
            .into_iter()
            .filter(|edit| !edit.as_ref().is_ok_and(|e| e.edit.is_noop()))
            .collect();
        if edits.is_empty() {
            let kind = self.base(stage, &first_path).map(|(k, _)| k);
            let message = self.edit_error(0, &first_path, kind, "all edits are no-ops");
            return stage.fail(&first_path, message);
        }
        let mut call_bases: HashMap<String, (BaseKind, String)> = HashMap::new();
        for (i, edit) in edits.into_iter().enumerate() {
            let edit = match edit {
                Ok(e) => e,
                Err(err) => {
                    return stage.fail(
                        path_of(&err),
                        self.edit_error(i, path_of(&err), None, &err.why),
                    );
                }
            };
            let Some((path, kind, base)) =
                self.checked_base(stage, &mut call_bases, i, &edit.path, &edit.file_id)
            else {
                return;
            };
            match apply_search_replace_with(&base, &edit.edit, &mut self.work) {
                Ok(done) => stage.set(&path, done.content),
                Err(err) => {
                    let message = self.edit_error(i, &path, Some(kind), &err.to_string());
                    return stage.fail(&path, message);
                }
            }
        }
    }

    fn anchored(&mut self, stage: &mut Stage, call: AnchoredCall) {
        let mut call_bases = HashMap::new();
        let Some((path, kind, base)) =
            self.checked_base(stage, &mut call_bases, 0, &call.path, &call.file_id)
        else {
            return;
        };
        match apply_anchored_with(&base, &call.changes, &mut self.work) {
            Ok(content) => stage.set(&path, content),
            Err(err) => {
                let why = super::anchored::describe_anchored_error(&err, &call.changes);
                let message = self.edit_error(0, &path, Some(kind), &why);
                stage.fail(&path, message);
            }
        }
    }

    /// `edit_file edit <i> (<path>, base=S): <why>` in multi mode, `edit_file <path>
    /// (base=S): <why>` for search/replace, `edit_file <path>: <why>` for anchored edits.
    fn edit_error(&self, i: usize, path: &str, base: Option<BaseKind>, why: &str) -> String {
        let path = display_path(path);
        let base = base.map_or("none", BaseKind::as_str);
        match self.mode {
            DiffMode::SearchReplaceMulti => {
                format!("edit_file edit {i} ({path}, base={base}): {why}")
            }
            DiffMode::Anchored => format!("edit_file {path}: {why}"),
            DiffMode::SearchReplace | DiffMode::Off => {
                format!("edit_file {path} (base={base}): {why}")
            }
        }
    }

    /// A `file_id` problem: `edit_file edit <i> (<path>): <why>` in multi mode, `edit_file
    /// <path>: <why>` otherwise.
    fn id_error(&self, i: usize, path: &str, why: &str) -> String {
        match self.mode {
            DiffMode::SearchReplaceMulti => format!("edit_file edit {i} ({path}): {why}"),
            _ => format!("edit_file {path}: {why}"),
        }
    }

    /// Normalises the path, finds the base and checks `file_id` against it; records the error
    /// and returns `None` when any of that fails.
    ///
    /// The id to give is the file's as the call found it (`call_bases` remembers it for the
    /// call's later edits of the same file, which apply to its pending text). The id of the
    /// file before the whole response is accepted as well: it is the one the prompt showed,
    /// and the model cannot know the id of a file an earlier call of the response changed.
    fn checked_base(
        &mut self,
        stage: &mut Stage,
        call_bases: &mut HashMap<String, (BaseKind, String)>,
        i: usize,
        raw_path: &str,
        given_id: &str,
    ) -> Option<(String, BaseKind, String)> {
        let path = match normalize_path(raw_path) {
            Ok(p) => p,
            Err(why) => {
                stage.fail(raw_path, self.edit_error(i, raw_path, None, &why));
                return None;
            }
        };
        if self.work.exhausted() {
            let why = self.work.exhausted_message();
            stage.fail(&path, self.edit_error(i, &path, None, &why));
            return None;
        }
        let Some((kind, base)) = self.base(stage, &path) else {
            let why = "file not found in the chat's output or context; \
                       create new files with write_file";
            stage.fail(&path, self.edit_error(i, &path, None, why));
            return None;
        };
        let (call_kind, call_id) = match call_bases.get(&path) {
            Some(found) => found.clone(),
            None => {
                let found = (kind, file_id(&path, &base));
                call_bases.insert(path.clone(), found.clone());
                found
            }
        };
        let original_id = self.original(&path).map(|(_, c)| file_id(&path, c));
        // Copying the base and hashing it and the original.
        let original_len = self.originals.get(&path).and_then(Option::as_ref);
        let original_len = original_len.map_or(0, |(_, c)| c.len());
        self.work.charge(2 * base.len() + original_len);
        let given = given_id.trim().to_ascii_lowercase();
        if given != call_id && Some(&given) != original_id.as_ref() {
            let base = call_kind.as_str();
            let why = if given.is_empty() {
                format!(
                    "file_id missing: expected {call_id} for {path} (base={base}). Include \
                     file_id from the current writable @file id."
                )
            } else {
                format!(
                    "file_id mismatch: got {given_id}, expected {call_id} (base={base}). Use the \
                     writable @file id for this path."
                )
            };
            stage.fail(&path, self.id_error(i, &path, &why));
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
