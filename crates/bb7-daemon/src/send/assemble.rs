//! The one structured user message of a request (spec "LLM Request Assembly"): read-only
//! files sorted by path, the history (messages, kept reasoning and context events, in the
//! order of their parts), the latest user message with a summary of the files (ids
//! included), the retry context if any, and writable files sorted by path. A file with
//! pending output is sent twice, as the first bb7 sends it: the user's copy read-only with
//! `status="original"` and the output writable with `status="pending_output"`; a file only
//! the model created is `status="added_output"`.
//!
//! Nothing time-dependent goes in, so the same chat state always gives the same bytes, and
//! everything before the latest message stays a stable prefix across sends (read-only files
//! and history only grow at their ends), which is what implicit prompt caching reuses.

use std::fmt::Write as _;

use ybs_core::{ContextEvent, Message, Part};

use crate::store::active::Active;
use crate::wire::error::Result;
use crate::wire::params::RetryContext;

/// Where the content of a file block comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The user's context snapshot.
    Context,
    /// The model's pending output (not applied yet).
    Output,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Context => "context",
            Source::Output => "output",
        }
    }
}

/// How a file block relates to the model's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The user's copy of a file that has pending output (read-only).
    Original,
    /// The model's pending output of a file in context.
    PendingOutput,
    /// A file the model created that is not in context.
    AddedOutput,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Original => "original",
            Status::PendingOutput => "pending_output",
            Status::AddedOutput => "added_output",
        }
    }
}

/// One file as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlock {
    /// Project-relative (or absolute, for external files) path.
    pub path: String,
    /// The file id the model must quote in edits.
    pub id: String,
    /// Whether the model may change it.
    pub writable: bool,
    /// Where the content comes from.
    pub source: Source,
    /// Section lines.
    pub lines: Option<(u32, u32)>,
    /// How it relates to the model's output, when it does.
    pub status: Option<Status>,
    /// The content.
    pub content: String,
}

/// Everything that goes into the user message.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    /// The files, in any order.
    pub files: &'a [FileBlock],
    /// Earlier messages (already trimmed to what is sent).
    pub history: &'a [Message],
    /// The latest user message.
    pub latest: &'a str,
    /// The failed edits to repair, if any.
    pub retry: Option<&'a RetryContext>,
}

/// The files of the active chat: read-only context files, sections and external files;
/// writable context files (with their pending output after the read-only original when
/// there is one); output-only files the model created. Snapshots that cannot be read are
/// left out (and logged).
pub fn collect_files(active: &Active) -> Result<Vec<FileBlock>> {
    let mut blocks = Vec::new();
    for file in &active.chat.context_files {
        let snapshot = match active.read_snapshot(file) {
            Ok(content) => content,
            Err(err) => {
                tracing::warn!(path = %file.path, error = %err, "context snapshot unreadable; not sent");
                continue;
            }
        };
        let writable =
            !file.readonly && !file.external && file.section().is_none() && !active.chat.global;
        let mut context = FileBlock {
            path: file.path.clone(),
            id: crate::store::active::version_of(file, &snapshot),
            writable,
            source: Source::Context,
            lines: file.section(),
            status: None,
            content: snapshot,
        };
        if writable && active.has_output(&file.path) {
            let output = active.output_content(&file.path)?;
            context.writable = false;
            context.status = Some(Status::Original);
            blocks.push(context);
            blocks.push(FileBlock {
                id: ybs_core::file_id(&file.path, &output),
                path: file.path.clone(),
                writable: true,
                source: Source::Output,
                lines: None,
                status: Some(Status::PendingOutput),
                content: output,
            });
            continue;
        }
        blocks.push(context);
    }
    if !active.chat.global {
        for path in active.output_files()? {
            if active.chat.find_file(&path).is_some() {
                continue;
            }
            let content = active.output_content(&path)?;
            blocks.push(FileBlock {
                id: ybs_core::file_id(&path, &content),
                path,
                writable: true,
                source: Source::Output,
                lines: None,
                status: Some(Status::AddedOutput),
                content,
            });
        }
    }
    Ok(blocks)
}

/// The text of the user message.
pub fn user_message(input: &Input<'_>) -> String {
    let mut files: Vec<&FileBlock> = input.files.iter().collect();
    files.sort_by(|a, b| (&a.path, a.lines, &a.id).cmp(&(&b.path, b.lines, &b.id)));
    let (writable, read_only): (Vec<&FileBlock>, Vec<&FileBlock>) =
        files.into_iter().partition(|file| file.writable);

    let mut out = String::new();
    out.push_str("<read-only-files>\n");
    for file in &read_only {
        push_file(&mut out, file);
    }
    out.push_str("</read-only-files>\n\n<history>\n");
    for message in input.history {
        push_history(&mut out, message);
    }
    out.push_str("</history>\n\n<latest-message>\n<files>\n");
    for file in read_only.iter().chain(writable.iter()) {
        let _ = write!(
            out,
            "- id={} path={} mode={} source={}",
            file.id,
            file.path,
            mode(file),
            file.source.as_str()
        );
        if let Some((start, end)) = file.lines {
            let _ = write!(out, " lines={start}-{end}");
        }
        if let Some(status) = file.status {
            let _ = write!(out, " status={}", status.as_str());
        }
        out.push('\n');
    }
    out.push_str("</files>\n");
    push_body(&mut out, input.latest);
    out.push_str("</latest-message>\n");
    if let Some(retry) = input.retry {
        push_retry(&mut out, retry);
    }
    out.push_str("\n<writable-files>\n");
    for file in &writable {
        push_file(&mut out, file);
    }
    out.push_str("</writable-files>\n");
    out
}

fn mode(file: &FileBlock) -> &'static str {
    if file.writable { "rw" } else { "ro" }
}

fn push_file(out: &mut String, file: &FileBlock) {
    let _ = write!(
        out,
        "<file id=\"{}\" path=\"{}\" mode=\"{}\" source=\"{}\"",
        attr(&file.id),
        attr(&file.path),
        mode(file),
        file.source.as_str()
    );
    if let Some((start, end)) = file.lines {
        let _ = write!(out, " lines=\"{start}-{end}\"");
    }
    if let Some(status) = file.status {
        let _ = write!(out, " status=\"{}\"", status.as_str());
    }
    out.push_str(">\n");
    push_body(out, &file.content);
    out.push_str("</file>\n");
}

/// Text followed by exactly one newline.
fn push_body(out: &mut String, text: &str) {
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// A message's parts in order, as the first bb7 sends them: text as a `<message>`, kept
/// reasoning, code and raw parts as a `<message>` with their `kind`, context events as
/// `<event>`s. Empty texts and other parts are left out.
fn push_history(out: &mut String, message: &Message) {
    let role = message.role.as_str();
    for part in &message.parts {
        let (role, kind, text) = match part {
            Part::Text { content } => (role, None, content),
            Part::Thinking(thinking) => ("assistant", Some("reasoning"), &thinking.content),
            Part::Code { content, .. } => (role, Some("code"), content),
            Part::Raw { content } => (role, Some("raw"), content),
            Part::ContextEvent(event) => {
                push_event(out, event);
                continue;
            }
            _ => continue,
        };
        if text.is_empty() {
            continue;
        }
        let _ = write!(out, "<message role=\"{role}\"");
        if let Some(kind) = kind {
            let _ = write!(out, " kind=\"{kind}\"");
        }
        out.push_str(">\n");
        push_body(out, text);
        out.push_str("</message>\n");
    }
}

fn push_event(out: &mut String, event: &ContextEvent) {
    let _ = write!(
        out,
        "<event action=\"{}\" path=\"{}\"",
        attr(event.action.as_str()),
        attr(&event.path)
    );
    if let Some(version) = &event.version {
        let _ = write!(out, " version=\"{}\"", attr(version));
    }
    if let Some(prev) = &event.prev_version {
        let _ = write!(out, " prev_version=\"{}\"", attr(prev));
    }
    if let (Some(start), Some(end)) = (event.start_line, event.end_line) {
        let _ = write!(out, " lines=\"{start}-{end}\"");
    }
    if event.readonly == Some(true) {
        out.push_str(" readonly=\"true\"");
    }
    if event.external == Some(true) {
        out.push_str(" external=\"true\"");
    }
    if let Some(original) = &event.original_path {
        let _ = write!(out, " original_path=\"{}\"", attr(original));
    }
    out.push_str(" />\n");
}

fn push_retry(out: &mut String, retry: &RetryContext) {
    out.push_str("\n<retry-context>\nYour previous file changes were not applied: nothing of them was written. ");
    out.push_str("Fix the failing edits and send all changes again, in complete calls. Hints: copy old_string exactly from the current file content below, include enough lines to make it unique, and use the file id shown in <writable-files>.\n");
    // The first bb7's targeted advice, in our words, for the two usual failures.
    if retry.errors.iter().any(|error| error.contains("not found")) {
        out.push_str("Text not found: match against the writable version of the file (status=\"pending_output\" when there is one), not the read-only original; leave out edits whose result is already in it.\n");
    }
    if retry.errors.iter().any(|error| error.contains("file_id")) {
        out.push_str("Wrong file id: give file_id on every edit, the id of the file's <file> under <writable-files>.\n");
    }
    out.push_str("<errors>\n");
    for error in &retry.errors {
        push_body(out, error);
    }
    out.push_str("</errors>\n<failed-tool-calls>\n");
    for call in &retry.tool_calls {
        // Keys sorted explicitly: serde_json keeps insertion order instead in a build where
        // another crate turns on its `preserve_order`.
        let mut call = call.clone();
        call.sort_all_objects();
        push_body(out, &call.to_string());
    }
    out.push_str("</failed-tool-calls>\n</retry-context>\n");
}

/// Escapes an attribute value.
fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('\n', "&#10;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ybs_core::{ContextAction, Role};

    fn block(path: &str, writable: bool, source: Source, lines: Option<(u32, u32)>) -> FileBlock {
        let content = format!("// {path}\nfn main() {{}}\n");
        FileBlock {
            id: ybs_core::file_id(path, &content),
            path: path.into(),
            writable,
            source,
            lines,
            status: None,
            content,
        }
    }

    fn with_status(mut block: FileBlock, status: Status, content: &str) -> FileBlock {
        block.status = Some(status);
        block.content = content.into();
        block.id = ybs_core::file_id(&block.path, content);
        block
    }

    fn sample_files() -> Vec<FileBlock> {
        vec![
            block("src/z.rs", true, Source::Context, None),
            block("src/b.rs", false, Source::Context, None),
            with_status(
                block("src/a.rs", true, Source::Output, None),
                Status::PendingOutput,
                "fn renamed() {}\n",
            ),
            with_status(
                block("src/a.rs", false, Source::Context, None),
                Status::Original,
                "fn main() {}\n",
            ),
            with_status(
                block("src/new.rs", true, Source::Output, None),
                Status::AddedOutput,
                "fn new() {}\n",
            ),
            block("lib/util.rs", false, Source::Context, Some((10, 20))),
            block("/ext/ref.rs", false, Source::Context, None),
        ]
    }

    fn sample_history() -> Vec<Message> {
        let mut add = ContextEvent::new(ContextAction::UserAddFile, "src/z.rs");
        add.version = Some("0badc0de".into());
        add.readonly = Some(false);
        let mut write = ContextEvent::new(ContextAction::AssistantWriteFile, "src/a.rs");
        write.version = Some("12345678".into());
        vec![
            Message::new(Role::Assistant, vec![Part::ContextEvent(add)]),
            Message::user("Rename main"),
            Message::new(
                Role::Assistant,
                vec![
                    Part::thinking("I should rename it."),
                    Part::text("Done."),
                    Part::ContextEvent(write),
                ],
            ),
            Message::system("Response aborted by user."),
        ]
    }

    #[test]
    fn user_message_layout() {
        let files = sample_files();
        let history = sample_history();
        let retry = RetryContext {
            errors: vec![
                "edit_file edit 1 (src/a.rs, base=output): old_string not found in file".into(),
            ],
            tool_calls: vec![
                serde_json::json!({"tool": "edit_file", "path": "src/a.rs", "args": {"edits": []}}),
            ],
        };
        let text = user_message(&Input {
            files: &files,
            history: &history,
            latest: "Now add a test",
            retry: Some(&retry),
        });
        insta::assert_snapshot!(text);
    }

    #[test]
    fn same_state_same_bytes_whatever_the_file_order() {
        let files = sample_files();
        let mut reversed = files.clone();
        reversed.reverse();
        let history = sample_history();
        let input = |files| Input {
            files,
            history: &history,
            latest: "x",
            retry: None,
        };
        let first = user_message(&input(&files));
        assert_eq!(first, user_message(&input(&reversed)));
        assert!(!first.contains("<retry-context>"));
        // Read-only files come first, sorted; writable ones last, sorted.
        let order: Vec<usize> = [
            "/ext/ref.rs\" mode=\"ro",
            "lib/util.rs\" mode=\"ro",
            "src/a.rs\" mode=\"ro",
            "src/b.rs\" mode=\"ro",
            "src/a.rs\" mode=\"rw",
            "src/new.rs\" mode=\"rw",
            "src/z.rs\" mode=\"rw",
        ]
        .iter()
        .map(|path| {
            first
                .find(&format!("path=\"{path}\""))
                .unwrap_or(usize::MAX)
        })
        .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
    }

    #[test]
    fn retry_context_reads_the_client_shape() {
        let value = serde_json::json!({"errors": ["e1"], "tool_calls": [{"tool": "edit_file"}]});
        let retry = RetryContext::from_value(Some(&value)).unwrap_or_default();
        assert_eq!(retry.errors, vec!["e1".to_owned()]);
        assert_eq!(retry.tool_calls.len(), 1);
        assert_eq!(RetryContext::from_value(Some(&serde_json::json!({}))), None);
    }
}
