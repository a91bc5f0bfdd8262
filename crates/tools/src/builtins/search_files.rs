//! `search_files`: regex search over file contents with context lines, respecting
//! `.gitignore`, skipping binary files, searching files in parallel.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::GlobBuilder;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, SearcherBuilder, sinks::Lossy};
use ignore::WalkState;
use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::list_files::{relative_to, walker};
use super::shared::{positive, spec};
use crate::{Args, Tool, ToolContext, ToolError, safe_fs};

/// Lines longer than this many characters are cut in results.
const MAX_LINE_CHARS: usize = 500;

/// The `search_files` tool (spec 3.5).
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

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let pattern = args.str("pattern")?;
        let path = args.opt_str("path")?.unwrap_or(".");
        let file_pattern = args.opt_str("file_pattern")?;
        let context = match args.int("context_lines")? {
            Some(n) if n < 0 => {
                return Err(args.invalid(format!(
                    "argument `context_lines` must be at least 0, got {n}"
                )));
            }
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(50),
            None => 2,
        };
        let max_results = positive(args, "max_results")?.unwrap_or(50);
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
        let found = Mutex::new(Vec::new());
        if base.is_file() {
            let mut searcher = searcher();
            let mut reader = safe_fs::Reader::new(&ctx.sandbox);
            if let Some(matches) = search_file(&mut searcher, &mut reader, &matcher, &base, context)
            {
                found.lock().map(|mut f| f.extend(matches)).ok();
            }
        } else if base.is_dir() {
            walker(&base, &ctx.sandbox).run(|| {
                let found = &found;
                let matcher = matcher.clone();
                let filter = filter.clone();
                let base = &base;
                let mut searcher = searcher();
                let mut reader = safe_fs::Reader::new(&ctx.sandbox);
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return WalkState::Continue;
                    }
                    let relative = relative_to(base, &entry);
                    if filter.as_ref().is_some_and(|f| !f.is_match(relative)) {
                        return WalkState::Continue;
                    }
                    if let Some(matches) =
                        search_file(&mut searcher, &mut reader, &matcher, entry.path(), context)
                    {
                        if let Ok(mut found) = found.lock() {
                            found.extend(matches);
                        }
                    }
                    WalkState::Continue
                })
            });
        } else {
            return Err(ToolError::failed(format!("`{path}` does not exist")));
        }
        let mut found = found.into_inner().unwrap_or_default();
        found.sort_by(|a, b| a.file.cmp(&b.file).then(a.line.cmp(&b.line)));
        let total = found.len();
        let matches: Vec<Value> = found
            .into_iter()
            .take(max_results)
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
        Ok(json!({"matches": matches, "total_matches": total, "truncated": total > max_results}))
    }
}

fn searcher() -> Searcher {
    SearcherBuilder::new().line_number(true).build()
}

/// The matches in one file, or `None` for files that cannot be read safely (symlink races,
/// hard links), binary files and files without matches.
fn search_file(
    searcher: &mut Searcher,
    reader: &mut safe_fs::Reader<'_>,
    matcher: &RegexMatcher,
    path: &Path,
    context: usize,
) -> Option<Vec<Match>> {
    let bytes = reader.read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    let mut hits = Vec::new();
    searcher
        .search_slice(
            matcher,
            &bytes,
            Lossy(|line_number, _| {
                hits.push(line_number);
                Ok(true)
            }),
        )
        .ok()?;
    if hits.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let shown = |i: usize| cut(lines.get(i).copied().unwrap_or(""));
    Some(
        hits.into_iter()
            .map(|line| {
                let index = usize::try_from(line).unwrap_or(1).saturating_sub(1);
                let start = index.saturating_sub(context);
                let end = (index + 1 + context).min(lines.len());
                Match {
                    file: path.to_path_buf(),
                    line,
                    content: shown(index),
                    before: (start..index).map(shown).collect(),
                    after: (index + 1..end).map(shown).collect(),
                }
            })
            .collect(),
    )
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        line.to_string()
    } else {
        line.chars().take(MAX_LINE_CHARS).collect::<String>() + " [line cut]"
    }
}
