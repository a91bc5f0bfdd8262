//! `search_files`: regex search over file contents with context lines, respecting
//! `.gitignore`, skipping binary files, searching files in parallel.
//!
//! The result is bounded while searching, not after: only the first `max_results` matches
//! (by file and line) are kept with their context as files are searched, the others are only
//! counted, and the context is narrowed so that matches times lines of context stays under
//! [`MAX_RESULT_LINES`].

use std::path::PathBuf;
use std::sync::Mutex;

use globset::GlobBuilder;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, SearcherBuilder, sinks::Lossy};
use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{positive, spec};
use super::walk::{FileEntry, walk};
use crate::declaration::{ActionKind, Declaration};
use crate::summary::{Change, Summary, counted, number, thousands};
use ybs_fsguard::guarded;

use crate::{Args, Tool, ToolContext, ToolError};

/// Lines longer than this many characters are cut in results.
const MAX_LINE_CHARS: usize = 500;
/// The most lines (matches and their context) one result holds.
pub const MAX_RESULT_LINES: usize = 5_000;
/// The most matches one result holds.
const MAX_RESULTS: usize = 1_000;

/// The `search_files` tool.
pub struct SearchFiles {
    spec: ToolSpec,
}

impl SearchFiles {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        SearchFiles {
            spec: spec(
                "search_files",
                "Search for text/regex pattern in files. Returns matching lines with context.",
                json!({
                    "pattern": {"type": "string", "description": "Regex pattern to search for", "required": true},
                    "path": {"type": "string", "description": "Directory or file to search", "required": false, "default": "."},
                    "file_pattern": {"type": "string", "description": "Glob to filter files (e.g., '*.swift')", "required": false},
                    "context_lines": {"type": "integer", "description": "Lines of context before/after match", "required": false, "default": 2},
                    "max_results": {"type": "integer", "description": "Maximum matches to return", "required": false, "default": 50}
                }),
            ),
        }
    }
}

impl Default for SearchFiles {
    fn default() -> Self {
        Self::new()
    }
}

/// One matching line with its context.
struct Match {
    file: PathBuf,
    line: u64,
    content: String,
    before: Vec<String>,
    after: Vec<String>,
}

impl Tool for SearchFiles {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration::looking(ActionKind::Search)
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        let path = arguments.get("path").and_then(Value::as_str);
        let pattern = arguments.get("pattern")?.as_str()?;
        Some(format!("Search `{pattern}` in {}", path.unwrap_or(".")))
    }

    /// `Found 7 matches in 3 files`, or `Found 120 matches (50 shown, in 3 files)`.
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let matches = result.get("matches")?.as_array()?;
        let mut files: Vec<&str> = matches
            .iter()
            .filter_map(|found| found.get("file").and_then(Value::as_str))
            .collect();
        files.sort_unstable();
        files.dedup();
        let shown = matches.len() as u64;
        let total = number(result, "total_matches").unwrap_or(shown);
        let in_files = counted(files.len() as u64, "file", "files");
        if total == 0 {
            return Some(Summary::ok("Found no matches".to_owned()));
        }
        if total > shown {
            return Some(Summary::ok(format!(
                "Found {} matches ({} shown, in {in_files})",
                thousands(total),
                thousands(shown)
            )));
        }
        Some(Summary::ok(format!(
            "Found {} in {in_files}",
            counted(total, "match", "matches")
        )))
    }

    /// `file:line: content`, one match a line.
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        let matches = result.get("matches")?.as_array()?;
        Some(
            matches
                .iter()
                .map(|found| {
                    format!(
                        "{}:{}: {}",
                        found.get("file").and_then(Value::as_str).unwrap_or(""),
                        found.get("line").unwrap_or(&Value::Null),
                        found.get("content").and_then(Value::as_str).unwrap_or("")
                    )
                })
                .collect(),
        )
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let pattern = args.str("pattern")?;
        if pattern.is_empty() {
            // It would match every line of every file.
            return Err(ToolError::failed(
                "the pattern is empty: give the text or regex to search for (list_files lists \
                 files)",
            ));
        }
        let path = args.opt_str("path")?.unwrap_or(".");
        let file_pattern = args
            .opt_str("file_pattern")?
            .filter(|glob| !glob.trim().is_empty());
        let context = match args.int("context_lines")? {
            Some(n) if n < 0 => {
                return Err(args.invalid(format!(
                    "argument `context_lines` must be at least 0, got {n}"
                )));
            }
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(50),
            None => 2,
        };
        let max_results = positive(args, "max_results")?
            .unwrap_or(50)
            .min(MAX_RESULTS);
        let asked_context = context;
        let context = context.min((MAX_RESULT_LINES / max_results).saturating_sub(1) / 2);
        let matcher = RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .map_err(|e| ToolError::failed(format!("invalid regex `{pattern}`: {e}")))?;
        let filter = match file_pattern {
            Some(glob) => Some(
                GlobBuilder::new(glob.trim_start_matches("./"))
                    .literal_separator(false)
                    .build()
                    .map_err(|e| ToolError::failed(format!("invalid file_pattern `{glob}`: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let base = ctx.resolve(path)?;
        let found = Mutex::new(Found::new(max_results));
        let scope = Scope {
            matcher: &matcher,
            context,
            limit: max_results,
        };
        if base.is_file() {
            let mut searcher = searcher();
            let mut reader = guarded::Reader::new(&ctx.sandbox);
            let mut bytes = Vec::new();
            if reader.read_into(&base, &mut bytes).is_ok() {
                if let Some(file) = search_bytes(&mut searcher, &bytes, &scope, || base.clone()) {
                    found.lock().map(|mut f| f.add(file)).ok();
                }
            }
        } else if base.is_dir() {
            walk(&base, &ctx.sandbox, || {
                let found = &found;
                let scope = &scope;
                let filter = filter.clone();
                let base = &base;
                let sandbox = &ctx.sandbox;
                let mut searcher = searcher();
                let mut bytes = Vec::new();
                move |file: &FileEntry<'_>| {
                    if filter.as_ref().is_some_and(|f| !f.is_match(file.relative)) {
                        return;
                    }
                    let path = || base.join(file.relative);
                    let shown = || path().display().to_string();
                    if guarded::read_at(sandbox, file.dir, file.name, &shown, &mut bytes).is_err() {
                        return;
                    }
                    if let Some(file) = search_bytes(&mut searcher, &bytes, scope, path) {
                        if let Ok(mut found) = found.lock() {
                            found.add(file);
                        }
                    }
                }
            });
        } else {
            return Err(ToolError::failed(format!("`{path}` does not exist")));
        }
        let found = found
            .into_inner()
            .unwrap_or_else(|_| Found::new(max_results));
        let total = found.total;
        let matches: Vec<Value> = found
            .finish()
            .into_iter()
            .map(|m| {
                json!({
                    "file": ctx.display_path(&m.file),
                    "line": m.line,
                    "content": m.content,
                    "context_before": m.before,
                    "context_after": m.after,
                })
            })
            .collect();
        let mut result =
            json!({"matches": matches, "total_matches": total, "truncated": total > max_results});
        if context < asked_context {
            result["context_lines"] = json!(context);
            result["note"] = json!(format!(
                "context_lines was narrowed from {asked_context} to {context} so that the result stays under {MAX_RESULT_LINES} lines; ask for fewer max_results for more context"
            ));
        }
        Ok(result)
    }
}

/// What every file is searched with.
struct Scope<'a> {
    matcher: &'a RegexMatcher,
    /// Lines of context before and after each match.
    context: usize,
    /// The most matches kept.
    limit: usize,
}

/// The matches of one file: how many, and the first ones with their context.
struct FileMatches {
    total: usize,
    kept: Vec<Match>,
}

/// The matches kept so far: the first `limit` by file and line, and how many there were.
struct Found {
    limit: usize,
    total: usize,
    kept: Vec<Match>,
}

impl Found {
    fn new(limit: usize) -> Self {
        Found {
            limit,
            total: 0,
            kept: Vec::new(),
        }
    }

    /// Adds a file's matches, dropping all but the first `limit` once twice that many are held.
    fn add(&mut self, file: FileMatches) {
        self.total += file.total;
        self.kept.extend(file.kept);
        if self.kept.len() > 2 * self.limit {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.kept
            .sort_by(|a, b| a.file.cmp(&b.file).then(a.line.cmp(&b.line)));
        self.kept.truncate(self.limit);
    }

    fn finish(mut self) -> Vec<Match> {
        self.trim();
        self.kept
    }
}

fn searcher() -> Searcher {
    SearcherBuilder::new().line_number(true).build()
}

/// The matches in one file's `bytes` (the first `scope.limit` with their context, the
/// others counted), or `None` for binary files and files without matches; `path` gives the
/// file's path for its matches.
fn search_bytes(
    searcher: &mut Searcher,
    bytes: &[u8],
    scope: &Scope<'_>,
    path: impl FnOnce() -> PathBuf,
) -> Option<FileMatches> {
    if bytes.contains(&0) {
        return None;
    }
    let mut hits = Vec::new();
    let mut total = 0usize;
    searcher
        .search_slice(
            scope.matcher,
            bytes,
            Lossy(|line_number, _| {
                total += 1;
                if hits.len() < scope.limit {
                    hits.push(line_number);
                }
                Ok(true)
            }),
        )
        .ok()?;
    if hits.is_empty() {
        return None;
    }
    let context = scope.context;
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let shown = |i: usize| cut(lines.get(i).copied().unwrap_or(""));
    let path = path();
    let kept = hits
        .into_iter()
        .map(|line| {
            let index = usize::try_from(line).unwrap_or(1).saturating_sub(1);
            let start = index.saturating_sub(context);
            let end = (index + 1 + context).min(lines.len());
            Match {
                file: path.clone(),
                line,
                content: shown(index),
                before: (start..index).map(shown).collect(),
                after: (index + 1..end).map(shown).collect(),
            }
        })
        .collect();
    Some(FileMatches { total, kept })
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        line.to_string()
    } else {
        line.chars().take(MAX_LINE_CHARS).collect::<String>() + " [line cut]"
    }
}
