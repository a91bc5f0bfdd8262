//! Where a path written in a chat file points: beside the chat file that names it, then in
//! the working directory; and whether the caller lets the chat read it ([`Access`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::{ExpandError, Source};

/// The check a file must pass before a chat brings it into the conversation (`file`,
/// `directory`, `image`, `pdf`, `import`, `continue`, `last`): the caller's, such as its
/// tools' path sandbox. `Err` says why the file may not be read. The default allows all.
#[derive(Clone, Default)]
pub struct Access(Option<Arc<AccessCheck>>);

/// A check of [`Access`].
type AccessCheck = dyn Fn(&Path) -> Result<(), String> + Send + Sync;

impl Access {
    /// Access limited by `check`.
    pub fn new(check: impl Fn(&Path) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Access(Some(Arc::new(check)))
    }

    /// Whether the message at `at` may read `path`.
    pub(super) fn allow(&self, at: &Source, path: &Path) -> Result<(), ExpandError> {
        match &self.0 {
            Some(check) => check(path).map_err(|reason| ExpandError::Denied {
                at: at.clone(),
                path: path.to_owned(),
                reason,
            }),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Access(checked)"
        } else {
            "Access(all)"
        })
    }
}

/// Finds `written` relative to the directory of `from`, then `working_dir` (absolute paths as
/// they are), keeping the first candidate that `fits`.
pub(super) fn resolve(
    working_dir: &Path,
    from: &Path,
    written: &str,
    fits: fn(&Path) -> bool,
) -> Option<PathBuf> {
    let path = Path::new(written);
    if path.is_absolute() {
        return fits(path).then(|| path.to_owned());
    }
    let beside = from
        .parent()
        .map(|dir| dir.join(path))
        .filter(|candidate| fits(candidate));
    beside.or_else(|| {
        let candidate = working_dir.join(path);
        fits(&candidate).then_some(candidate)
    })
}
