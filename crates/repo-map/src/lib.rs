//! A map of a repository for an LLM's prompt: the project's files, most relevant first, each
//! with its top-level definitions (functions, types, methods: signatures on one line, found
//! with tree-sitter), cut to fit a token budget. It tells a coding agent what exists and
//! where before it reads anything, as aider's repo map does.
//!
//! The work is pure over a list of [`SourceFile`]s (paths and contents): [`build`] extracts
//! the [`Symbols`] of each file, [`rank()`] orders the files (those the conversation mentions,
//! then those whose definitions other files reference, by PageRank over the reference graph,
//! then the rest by path) and [`fit()`] keeps what fits in the budget as a
//! [`TokenCounter`] of `ybs-context-budget` counts it. [`map_directory`] adds the I/O: the
//! walk of [`walk::scan`] (ignore files honoured, as ybs's `list_files`) and [`walk::read`].
//! [`walk::fingerprint`] tells cheaply whether the files changed since a map was built, and a
//! [`Mapper`] rebuilds a map parsing only the files that changed.
//!
//! Definitions are extracted for Rust, Python, JavaScript, TypeScript (and TSX), Go and C
//! ([`Lang`]); other files are listed by name.
//!
//! ```
//! use ybs_context_budget::CharsPerToken;
//! use ybs_repo_map::{SourceFile, build};
//!
//! let files = vec![
//!     SourceFile::new("src/config.rs", "pub struct Config { pub name: String }\n\
//!                                       impl Config { pub fn load(path: &str) -> Config { todo!() } }"),
//!     SourceFile::new("src/main.rs", "fn main() { let c = Config::load(\"x\"); }"),
//!     SourceFile::new("README.md", "# demo"),
//! ];
//! let map = build(&files, &["src/main.rs".to_owned()], 200, &CharsPerToken::default());
//! assert_eq!(
//!     map.text,
//!     "src/main.rs:\n  fn main()\n\
//!      src/config.rs:\n  pub struct Config\n  impl Config\n    pub fn load(path: &str) -> Config\n\
//!      README.md\n"
//! );
//! assert!(map.tokens <= 200);
//! ```

pub mod extract;
pub mod fit;
pub mod lang;
pub mod mention;
mod parallel;
pub mod rank;
pub mod walk;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

pub use extract::{Definition, Extractor, Symbols};
pub use fit::{Block, Fitted, fit};
pub use lang::Lang;
pub use mention::mentioned;
pub use rank::{Ranked, Tier, rank};
pub use walk::{FileMeta, fingerprint, scan};
pub use ybs_context_budget::TokenCounter;

/// A file of the project: its path relative to the root (`/` separators) and its text when
/// it was read (`None`: listed by name only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The path relative to the project root.
    pub path: String,
    /// The file's text, if it is to be parsed.
    pub content: Option<String>,
}

impl SourceFile {
    /// A file with its text.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        SourceFile {
            path: path.into(),
            content: Some(content.into()),
        }
    }

    /// A file listed by name only.
    pub fn name_only(path: impl Into<String>) -> Self {
        SourceFile {
            path: path.into(),
            content: None,
        }
    }
}

/// A file with what it defines and references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedFile {
    /// The path relative to the project root.
    pub path: String,
    /// Its symbols (empty for a file in a language without grammar here).
    pub symbols: Symbols,
}

/// A map fitted to its budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoMap {
    /// The map: one block per file, highest-ranked first; empty when nothing fits.
    pub text: String,
    /// Its size as the counter counts it.
    pub tokens: usize,
    /// How many files the project has.
    pub files_total: usize,
    /// How many of them the map shows.
    pub files_shown: usize,
}

/// The symbols of every file (parsed in parallel, in the order of `files`).
pub fn extract_all(files: &[SourceFile]) -> Vec<MappedFile> {
    parallel::map(files, Extractor::new, |extractor, file| MappedFile {
        path: file.path.clone(),
        symbols: match (Lang::of(&file.path), &file.content) {
            (Some(lang), Some(content)) => extractor.extract(lang, content),
            _ => Symbols::default(),
        },
    })
}

/// The map of `files` within `budget` tokens of `counter`, the files whose paths are in
/// `mentioned` first. The same input gives the same text, byte for byte.
pub fn build(
    files: &[SourceFile],
    mentioned: &[String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap {
    if budget == 0 {
        return RepoMap {
            files_total: files.len(),
            ..RepoMap::default()
        };
    }
    build_from(&extract_all(files), mentioned, budget, counter)
}

/// [`build`] from files whose symbols are already extracted.
pub fn build_from(
    mapped: &[MappedFile],
    mentioned: &[String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap {
    let mentioned: BTreeSet<String> = mentioned.iter().cloned().collect();
    let order = rank(mapped, &mentioned);
    let blocks: Vec<Block> = (order.iter())
        .map(|ranked| block(&mapped[ranked.index]))
        .collect();
    let fitted = fit(&blocks, budget, counter);
    RepoMap {
        text: fitted.text,
        tokens: fitted.tokens,
        files_total: mapped.len(),
        files_shown: fitted.files_shown,
    }
}

/// Maps one directory again and again, parsing only the files whose size or modification
/// time changed since the last map (a session's map after an edit re-reads one file).
#[derive(Debug, Clone, Default)]
pub struct Mapper {
    pub(crate) known: HashMap<String, (FileMeta, Symbols)>,
}

impl Mapper {
    /// A mapper that knows no file yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map of `files` (a [`scan`] of `root`), like [`build`] over [`walk::read`], with the
    /// symbols of unchanged files taken from the last call.
    pub fn map(
        &mut self,
        root: &Path,
        files: &[FileMeta],
        mentioned: &[String],
        budget: usize,
        counter: &dyn TokenCounter,
    ) -> RepoMap {
        let changed: Vec<FileMeta> = (files.iter())
            .filter(
                |meta| !matches!(self.known.get(&meta.path), Some((known, _)) if known == *meta),
            )
            .cloned()
            .collect();
        let fresh = extract_all(&walk::read(root, &changed));
        let mut known = std::mem::take(&mut self.known);
        for (meta, file) in changed.into_iter().zip(fresh) {
            known.insert(meta.path.clone(), (meta, file.symbols));
        }
        // Forget the files that are gone.
        let mut mapped = Vec::with_capacity(files.len());
        for meta in files {
            if let Some((meta, symbols)) = known.remove(&meta.path) {
                mapped.push(MappedFile {
                    path: meta.path.clone(),
                    symbols: symbols.clone(),
                });
                self.known.insert(meta.path.clone(), (meta, symbols));
            }
        }
        build_from(&mapped, mentioned, budget, counter)
    }
}

/// A file's block: its definitions indented by depth.
fn block(file: &MappedFile) -> Block<'_> {
    Block {
        path: &file.path,
        lines: (file.symbols.definitions.iter())
            .map(|definition| {
                format!(
                    "{}{}",
                    "  ".repeat(definition.depth + 1),
                    definition.signature
                )
            })
            .collect(),
    }
}

/// Walks `root` ([`walk::scan`], leaving out what `skip` says), reads the files
/// ([`walk::read`]) and [`build`]s their map, the files that `mentioned_text` names
/// ([`mentioned`]) first.
pub fn map_directory<F>(
    root: &Path,
    skip: F,
    mentioned_text: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap
where
    F: Fn(&Path) -> bool + Send + Sync + 'static,
{
    let files = scan(root, skip);
    let mentioned: Vec<String> =
        mention::mentioned(mentioned_text, files.iter().map(|f| f.path.as_str()))
            .into_iter()
            .collect();
    let sources = walk::read(root, &files);
    build(&sources, &mentioned, budget, counter)
}
