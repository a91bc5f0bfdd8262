//! `list_files`: files matching a glob under a base directory, respecting `.gitignore` and
//! skipping `.git`, sorted.

use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Mutex;

use globset::GlobBuilder;
use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{positive, spec};
use super::walk::{FileEntry, walk};
use crate::declaration::{ActionKind, Declaration};
use crate::summary::{Change, Summary, counted, number, thousands};
use crate::{Args, PathSandbox, Tool, ToolContext, ToolError};

/// The `list_files` tool.
pub struct ListFiles {
    spec: ToolSpec,
}

impl ListFiles {
    /// The tool with its spec schema.
    pub fn new() -> Self {
        ListFiles {
            spec: spec(
                "list_files",
                "List files matching a glob pattern. Use to explore directory structure.",
                json!({
                    "pattern": {"type": "string", "description": "Glob pattern (e.g., '**/*.swift', 'src/*.ts')", "required": true},
                    "path": {"type": "string", "description": "Base directory to search from", "required": false, "default": "."},
                    "max_results": {"type": "integer", "description": "Maximum files to return", "required": false, "default": 100}
                }),
            ),
        }
    }
}

impl Default for ListFiles {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ListFiles {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration::looking(ActionKind::Search)
    }

    fn title(&self, arguments: &Value) -> Option<String> {
        let path = arguments.get("path").and_then(Value::as_str);
        Some(format!("List {}", path.unwrap_or(".")))
    }

    /// `Listed 42 files`, or `Listed 100 of 420 files`.
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let listed = result.get("files")?.as_array()?.len() as u64;
        let total = number(result, "total_matches").unwrap_or(listed);
        if total > listed {
            return Some(Summary::ok(format!(
                "Listed {} of {} files",
                thousands(listed),
                thousands(total)
            )));
        }
        Some(Summary::ok(format!(
            "Listed {}",
            counted(listed, "file", "files")
        )))
    }

    /// The files, one a line.
    fn result_lines(&self, result: &Value) -> Option<Vec<String>> {
        let files = result.get("files")?.as_array()?;
        Some(
            files
                .iter()
                .map(|file| match file.as_str() {
                    Some(text) => text.to_owned(),
                    None => file.to_string(),
                })
                .collect(),
        )
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let pattern = args.str("pattern")?;
        let path = args.opt_str("path")?.unwrap_or(".");
        let max_results = positive(args, "max_results")?.unwrap_or(100);
        let base = ctx.resolve(path)?;
        if !base.is_dir() {
            return Err(ToolError::failed(format!("`{path}` is not a directory")));
        }
        let pattern = pattern.trim().trim_start_matches("./");
        // An empty pattern (or `.`, the directory itself) would match no file, and a model
        // told "0 files" concludes the project is empty: it means every file. (Small models
        // send "" for a required string.)
        let pattern = match pattern {
            "" | "." => "**",
            _ => pattern,
        };
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::failed(format!("invalid glob pattern `{pattern}`: {e}")))?
            .compile_matcher();
        // Each file is shown as `display_path` shows it: the base as shown, then the path
        // below it (the base alone when it is the working directory).
        let shown_base = ctx.display_path(&base);
        let (mut files, total) = walk_files(&base, &ctx.sandbox, max_results, |relative| {
            glob.is_match(relative)
        });
        if shown_base != "." {
            let separator = if shown_base.ends_with('/') { "" } else { "/" };
            for file in &mut files {
                *file = format!("{shown_base}{separator}{file}");
            }
        }
        Ok(json!({"files": files, "total_matches": total, "truncated": total > max_results}))
    }
}

/// The first `limit` (in sorted order) of the regular files under `base` (the confined walk
/// of [`super::walk`]: not following symlinks, respecting ignore files, skipping `.git` and
/// blocked paths) whose path relative to `base` passes `keep`, and how many passed. Each is that relative
/// path (lossily as text); only the ones among the first `limit` so far are copied, so a
/// large tree costs no allocation per file.
pub(crate) fn walk_files<F>(
    base: &Path,
    sandbox: &PathSandbox,
    limit: usize,
    keep: F,
) -> (Vec<String>, usize)
where
    F: Fn(&Path) -> bool + Sync,
{
    let found = Mutex::new(Collected {
        first: BinaryHeap::new(),
        total: 0,
        limit,
    });
    walk(base, sandbox, || {
        let keep = &keep;
        let mut local = Local {
            found: Collected {
                first: BinaryHeap::new(),
                total: 0,
                limit,
            },
            into: &found,
        };
        move |file: &FileEntry<'_>| {
            if keep(file.relative) {
                local.found.add(file.relative.to_string_lossy());
            }
        }
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    (found.first.into_sorted_vec(), found.total)
}

/// The files found: the first `limit` in sorted order (the largest on top, to be replaced
/// first) and how many there were in all.
struct Collected {
    first: BinaryHeap<String>,
    total: usize,
    limit: usize,
}

impl Collected {
    fn add(&mut self, file: std::borrow::Cow<'_, str>) {
        self.total += 1;
        if self.first.len() < self.limit {
            self.first.push(file.into_owned());
        } else if let Some(mut last) = self.first.peek_mut() {
            if *file < **last {
                *last = file.into_owned();
            }
        }
    }

    fn merge(&mut self, other: &mut Collected) {
        // `add` counts each file of `other.first` again.
        self.total += other.total - other.first.len();
        for file in other.first.drain() {
            self.add(file.into());
        }
    }
}

/// The files one walking thread found, merged into the shared ones when the thread is done
/// (one lock per thread rather than per file).
struct Local<'a> {
    found: Collected,
    into: &'a Mutex<Collected>,
}

impl Drop for Local<'_> {
    fn drop(&mut self) {
        if let Ok(mut into) = self.into.lock() {
            into.merge(&mut self.found);
        }
    }
}
