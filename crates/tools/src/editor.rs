//! Files open in an editor. A front end whose client is an editor (an ACP client offering
//! `fs/read_text_file` and `fs/write_text_file`) hands the tools an [`EditorFiles`]: the file
//! tools then read the text the editor holds, unsaved changes included, and write through it,
//! so the editor shows the change in the buffer the user sees. The sandbox applies either
//! way: a path is resolved and checked as for the disk first ([`ybs_fsguard::guarded`]), and a write
//! the editor could not do safely in place goes to the disk as without an editor.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// What an editor does with files for the tools; paths are absolute and already checked.
pub trait EditorFiles: Send + Sync {
    /// The text of `path` as the editor holds it; `None` when it cannot say (the tool then
    /// uses the text on disk).
    fn read(&self, path: &Path) -> Option<String>;
    /// Whether writes go through the editor (else the tools write to disk).
    fn writes(&self) -> bool {
        true
    }
    /// Writes `text` to `path` through the editor; `Err` says why it could not.
    fn write(&self, path: &Path, text: &str) -> Result<(), String>;
}

/// The editor of a session, if any (none by default).
#[derive(Clone, Default)]
pub struct Editor(Option<Arc<dyn EditorFiles>>);

impl Editor {
    /// The editor `files`.
    pub fn new(files: Arc<dyn EditorFiles>) -> Self {
        Editor(Some(files))
    }

    /// Whether there is one.
    pub fn is_some(&self) -> bool {
        self.0.is_some()
    }

    /// The editor's files, if any.
    pub fn files(&self) -> Option<&Arc<dyn EditorFiles>> {
        self.0.as_ref()
    }

    /// The editor's text of `resolved` when it has one, else `disk` (the file's text on disk,
    /// read with the sandbox's checks).
    pub fn text_or(&self, resolved: &Path, disk: String) -> String {
        (self.0.as_ref())
            .and_then(|files| files.read(resolved))
            .unwrap_or(disk)
    }
}

impl fmt::Debug for Editor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Editor(some)"
        } else {
            "Editor(none)"
        })
    }
}
