//! Where a path written in a chat file points: beside the chat file that names it, then in
//! the working directory.

use std::path::{Path, PathBuf};

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
