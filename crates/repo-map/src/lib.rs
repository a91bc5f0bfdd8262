//! A map of a repository for an LLM's prompt: the project's files, most relevant first, each
//! with its top-level definitions (functions, types, methods: signatures on one line, found
//! with tree-sitter), cut to fit a token budget. It tells a coding agent what exists and
//! where before it reads anything, as aider's repo map does.
//!
//! # Layout
//!
//! - Pure, over [`SourceFile`]s (paths and contents, `source`): `extract` finds the
//!   [`Symbols`] of each file with tree-sitter (for the languages of `lang`), `rank` orders
//!   the files (those the conversation mentions, found by `mention`, then those under the
//!   folder the session started in, then by PageRank over the graph of references between
//!   files), `entries` orders definitions rather than files (the most used definitions of
//!   every file first, then the names of the other files) and `fit` keeps the longest run of
//!   entries that fits in the budget as a [`TokenCounter`] of `ybs-context-budget` counts it.
//!   Started in a folder, its files fill at most two thirds of the budget while the rest of
//!   the repository has files to show (`map`).
//! - The I/O, in `walk`: [`walk::scan`] (ignore files honoured, as ybs's `list_files`),
//!   [`walk::read`], and [`walk::fingerprint`], which tells cheaply whether the files changed
//!   since a map was built.
//! - `map` puts them together: [`build`] over files already read, a [`Mapper`] that rebuilds a
//!   map parsing only the files that changed, [`map_directory`] with the walk.
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

pub mod entries;
pub mod extract;
pub mod fit;
pub mod lang;
mod map;
pub mod mention;
mod parallel;
pub mod rank;
mod source;
pub mod walk;

#[cfg(test)]
mod test_files;

pub use entries::{Entry, entries};
pub use extract::{Definition, Extractor, Symbols};
pub use fit::{Fitted, display_path, fit};
pub use lang::Lang;
pub use map::{Mapper, RepoMap, build, build_from, build_near, extract_all, map_directory};
pub use mention::mentioned;
pub use rank::{Ranked, Tier, rank};
pub use source::{MappedFile, SourceFile};
pub use walk::{FileMeta, fingerprint, scan};
pub use ybs_context_budget::TokenCounter;
