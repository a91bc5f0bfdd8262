//! The store's own error: every way reading or writing `.bb7/` and `~/.bb7/` fails. The
//! client sees each as the [`wire::Error`] it converts to, whose text is the `error` reply's
//! `message`; a store error displays as that text, so the strings live in one place.

use std::path::PathBuf;

use crate::wire::error as wire;

/// Everything the store can fail with.
#[derive(Debug)]
pub enum Error {
    /// An action ran before `init` (no project root).
    NotInitialized,
    /// No chat with that id in the store addressed.
    ChatNotFound,
    /// A context or output file that is not there.
    FileNotFound,
    /// The chat is held by another live bb7 process.
    ChatLocked {
        /// The owner's process id.
        pid: u32,
    },
    /// A required path is absent or empty.
    MissingField(&'static str),
    /// A value the store cannot use or encode.
    Invalid(String),
    /// A path that may not be used (absolute where relative is needed, escaping the project,
    /// NUL bytes).
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A `chat.json` (or index) that does not parse. The file is left as it is.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        why: String,
    },
    /// A `chat.json` written by a newer bb7.
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u64,
        /// The newest version this build reads.
        known: u64,
    },
    /// An instruction file that does not parse or may not be read.
    Instructions(String),
    /// A file-system failure, with what was being done.
    Io {
        /// What was being done ("read", "write", ...).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The hard safety guard: a write that would land outside the project root.
    ProjectEscape {
        /// The project root.
        root: PathBuf,
        /// Where the write would have gone.
        destination: PathBuf,
    },
}

impl Error {
    /// An [`Error::Io`] for `what` on `path`.
    pub fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { what, path, source }
    }

    /// Whether the daemon must stop at once (the safety guard tripped).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::ProjectEscape { .. })
    }

    /// The error the client is told, without giving this one up (for its text).
    fn as_wire(&self) -> wire::Error {
        match self {
            Error::NotInitialized => wire::Error::NotInitialized,
            Error::ChatNotFound => wire::Error::ChatNotFound,
            Error::FileNotFound => wire::Error::FileNotFound,
            Error::ChatLocked { pid } => wire::Error::ChatLocked { pid: *pid },
            Error::MissingField(field) => wire::Error::MissingField(field),
            Error::Invalid(why) => wire::Error::Invalid(why.clone()),
            Error::InvalidPath { path, why } => wire::Error::InvalidPath {
                path: path.clone(),
                why,
            },
            Error::Corrupt { path, why } => wire::Error::Corrupt {
                path: path.clone(),
                why: why.clone(),
            },
            Error::NewerVersion { path, found, known } => wire::Error::NewerVersion {
                path: path.clone(),
                found: *found,
                known: *known,
            },
            Error::Instructions(why) => wire::Error::Instructions(why.clone()),
            // The cause's own text, which is all the message shows of it.
            Error::Io { what, path, source } => wire::Error::Io {
                what,
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::ProjectEscape { root, destination } => wire::Error::ProjectEscape {
                root: root.clone(),
                destination: destination.clone(),
            },
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.as_wire(), f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for wire::Error {
    fn from(error: Error) -> wire::Error {
        match error {
            // The cause itself, not a copy of its text.
            Error::Io { what, path, source } => wire::Error::Io { what, path, source },
            other => other.as_wire(),
        }
    }
}

/// Results of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;
