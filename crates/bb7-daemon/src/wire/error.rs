//! The daemon's error type. Its `Display` text is exactly the `message` of the protocol's
//! `error` reply, so the strings the client matches on (`No active chat`, `Chat not found`,
//! ...) live in one place.

use std::path::PathBuf;

/// Everything an action can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An action ran before `init`.
    #[error("Not initialized")]
    NotInitialized,
    /// `init` on a directory without `.bb7/`, or a project action in global-only mode.
    #[error("Not initialized. Run :BB7Init")]
    NotBb7Project,
    /// `bb7_init` on a directory that already has `.bb7/`.
    #[error("Already initialized")]
    AlreadyInitialized,
    /// An action that needs a chat ran with none selected.
    #[error("No active chat")]
    NoActiveChat,
    /// No chat with that id in the store addressed.
    #[error("Chat not found")]
    ChatNotFound,
    /// A context or output file that is not there.
    #[error("File not found")]
    FileNotFound,
    /// A file or section that is already in context.
    #[error("Context file already exists")]
    FileExists,
    /// Read-only requested on a file whose output is not applied yet.
    #[error("File has pending output. Apply changes before setting read-only.")]
    PendingOutput,
    /// Making an external file writable.
    #[error("external files are always read-only")]
    ExternalReadOnly,
    /// Changing the read-only flag of a section.
    #[error("Sections are always read-only")]
    SectionReadOnly,
    /// The chat is held by another live bb7 process.
    #[error(
        "Chat is locked by another bb7 process (PID {pid}). Close it there or use chat_force_unlock"
    )]
    ChatLocked {
        /// The owner's process id.
        pid: u32,
    },
    /// A state-changing action while a stream runs (only one stream at a time).
    #[error("Another request is already in progress")]
    Busy,
    /// `cancel` when nothing (or another request) is streaming.
    #[error("No active request to cancel")]
    NothingToCancel,
    /// A required request field is absent or empty.
    #[error("Missing required field: {0}")]
    MissingField(&'static str),
    /// A request field has an unusable value.
    #[error("{0}")]
    Invalid(String),
    /// A path given by the client that may not be used (absolute where relative is needed,
    /// escaping the project, NUL bytes).
    #[error("Invalid path {path:?}: {why}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A `chat.json` (or index) that does not parse. The file is left as it is.
    #[error("Cannot read {}: {why}. The file was left untouched; fix or remove it.", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        why: String,
    },
    /// A `chat.json` written by a newer bb7.
    #[error("{} has chat format version {found}, newer than this bb7 understands (up to {known}). Upgrade bb7 to open it; the file was left untouched.", path.display())]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u64,
        /// The newest version this build reads.
        known: u64,
    },
    /// An instruction file that does not parse.
    #[error("{0}")]
    Instructions(String),
    /// A model-calling action handed to a handler that does not serve it
    /// ([`crate::server::dispatch::route`] sends them to [`crate::send`];
    /// `Session::dispatch` alone cannot).
    #[error("Action not available here: {0} (model calls are served by the daemon's server loop)")]
    NotAvailable(String),
    /// A file-system failure, with what was being done.
    #[error("Failed to {what} {}: {source}", path.display())]
    Io {
        /// What was being done ("read", "write", ...).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Updating a section (sections are immutable snapshots).
    #[error("Sections are immutable: remove the section and add it again")]
    SectionImmutable,
    /// The hard safety guard: a write that would land outside the project root. The binary
    /// exits immediately when it sees this.
    #[error("BB-7 fatal: attempted to write outside project root\nproject_root={}\ndestination={}", root.display(), destination.display())]
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
}

/// A provider's error as the client shows it: `<label>: <message>`, the label one of `auth`,
/// `quota`, `net`, `model`, `unknown` (the client offers the fitting action).
pub fn provider_message(error: &ybs_core::LlmError) -> String {
    format!("{}: {}", error.kind.label(), error.message)
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
