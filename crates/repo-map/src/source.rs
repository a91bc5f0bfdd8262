//! A project's files as the map sees them: paths with their text, then with their symbols.

use crate::extract::Symbols;

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
