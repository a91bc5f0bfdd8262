//! `list_files`: files matching a glob under a base directory, respecting `.gitignore` and
//! skipping `.git`, sorted.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::GlobBuilder;
use ignore::{WalkBuilder, WalkState};
use serde_json::{Value, json};
use ybs_core::ToolSpec;

use super::shared::{positive, spec};
use crate::protected::FileId;
use crate::{Args, PathSandbox, Tool, ToolContext, ToolError};

/// The `list_files` tool (spec 3.4).
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

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let pattern = args.str("pattern")?;
        let path = args.opt_str("path")?.unwrap_or(".");
        let max_results = positive(args, "max_results")?.unwrap_or(100);
        let base = ctx.resolve(path)?;
        if !base.is_dir() {
            return Err(ToolError::failed(format!("`{path}` is not a directory")));
        }
        let pattern = pattern.trim_start_matches("./");
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::failed(format!("invalid glob pattern `{pattern}`: {e}")))?
            .compile_matcher();
        let mut files: Vec<String> =
            walk_files(&base, &ctx.sandbox, |relative| glob.is_match(relative))
                .iter()
                .map(|p| ctx.display_path(p))
                .collect();
        files.sort();
        let total = files.len();
        files.truncate(max_results);
        Ok(json!({"files": files, "total_matches": total, "truncated": total > max_results}))
    }
}

/// The regular files under `base` (not following symlinks, respecting ignore files, skipping
/// `.git` and blocked paths) whose path relative to `base` passes `keep`, walked in parallel.
pub(crate) fn walk_files<F>(base: &Path, sandbox: &PathSandbox, keep: F) -> Vec<PathBuf>
where
    F: Fn(&Path) -> bool + Sync,
{
    let found = Mutex::new(Vec::new());
    walker(base, sandbox).run(|| {
        let found = &found;
        let keep = &keep;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let relative = entry.path().strip_prefix(base).unwrap_or(entry.path());
                if keep(relative) {
                    if let Ok(mut found) = found.lock() {
                        found.push(entry.into_path());
                    }
                }
            }
            WalkState::Continue
        })
    });
    found.into_inner().unwrap_or_default()
}

/// A parallel walker over `base` with the tools' rules.
pub(crate) fn walker(base: &Path, sandbox: &PathSandbox) -> ignore::WalkParallel {
    let sandbox = sandbox.clone();
    WalkBuilder::new(base)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            entry.file_name() != ".git"
                && !sandbox.is_blocked(entry.path())
                && !(entry.metadata()).is_ok_and(|m| sandbox.is_blocked_id(FileId::from_meta(&m)))
        })
        .build_parallel()
}
