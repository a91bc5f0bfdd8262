//! Paths: checking what the client hands us, naming snapshots on disk, and deciding whether a
//! location (after following symlinks) is inside the project.

use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::store::error::{Error, Result};
use ybs_fsguard::confined::{Refused, refusal};

/// Checks a project-relative path from the client: not empty, not absolute, no NUL byte, and no
/// `..` that climbs above where it starts. Returns it with `./` segments removed.
pub fn validate_relative(path: &str) -> Result<String> {
    let invalid = |why| Error::InvalidPath {
        path: path.to_owned(),
        why,
    };
    if path.is_empty() {
        return Err(Error::MissingField("path"));
    }
    if path.contains('\0') {
        return Err(invalid("contains a NUL byte"));
    }
    let as_path = Path::new(path);
    if as_path.is_absolute() {
        return Err(invalid("must be relative to the project root"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for component in as_path.components() {
        match component {
            Component::Normal(part) => {
                parts.push(part.to_str().ok_or_else(|| invalid("is not UTF-8"))?)
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(invalid("escapes the project root"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(invalid("must be relative to the project root"));
            }
        }
    }
    if parts.is_empty() {
        return Err(invalid("names no file"));
    }
    Ok(parts.join("/"))
}

/// `base/relative` for a relative path already checked with [`validate_relative`].
pub fn join(base: &Path, relative: &str) -> Result<PathBuf> {
    let clean = validate_relative(relative)?;
    Ok(base.join(clean))
}

/// File name of an external file's snapshot in `context/_external/`: 16 hex characters of
/// sha256 over the absolute path, plus its extension.
pub fn external_storage_name(absolute: &str) -> String {
    hashed_name(absolute, absolute)
}

/// File name of a section's snapshot in `context/_sections/`: 16 hex characters of sha256 over
/// `path:start:end`, plus the extension of `path`.
pub fn section_storage_name(path: &str, start: u32, end: u32) -> String {
    hashed_name(&section_key(path, start, end), path)
}

/// The key a section is hashed under (also the "path" of its file id).
pub fn section_key(path: &str, start: u32, end: u32) -> String {
    format!("{path}:{start}:{end}")
}

fn hashed_name(key: &str, path_for_extension: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let mut name = hex::encode(&digest[..8]);
    if let Some(ext) = Path::new(path_for_extension)
        .extension()
        .and_then(|ext| ext.to_str())
    {
        name.push('.');
        name.push_str(ext);
    }
    name
}

/// Resolves `path` as the file system would when writing to it: the deepest existing ancestor
/// is canonicalized (following symlinks) and the rest is appended.
pub fn resolve_for_write(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut resolved = real;
            for part in rest.iter().rev() {
                resolved.push(part);
            }
            return resolved;
        }
        match (
            existing.file_name().map(|name| name.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether `path` (resolved with [`resolve_for_write`]) lies inside `root` (canonicalized).
pub fn is_within(root: &Path, path: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    resolve_for_write(path).starts_with(&root)
}

/// The hard safety guard of the spec: a write into the project (or its `.bb7/` outputs) that
/// would resolve outside the project root is [`Error::ProjectEscape`], which stops the daemon.
pub fn guard_write(root: &Path, destination: &Path) -> Result<()> {
    if is_within(root, destination) {
        Ok(())
    } else {
        Err(Error::ProjectEscape {
            root: root.to_path_buf(),
            destination: resolve_for_write(destination),
        })
    }
}

/// The same guard for a write that went through [`ybs_fsguard::confined`]: a link met on the
/// way to `target` is [`Error::ProjectEscape`], any other failure an I/O error.
pub fn escape_or_io(root: &Path, target: &Path, err: std::io::Error) -> Error {
    match refusal(&err) {
        Some(Refused::Symlink(link)) => Error::ProjectEscape {
            root: root.to_path_buf(),
            destination: link.clone(),
        },
        _ => Error::io("write", target)(err),
    }
}

/// Converts an absolute path inside `root` into a project-relative one.
pub fn relative_to(root: &Path, absolute: &Path) -> Option<String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let resolved = resolve_for_write(absolute);
    let rel = resolved.strip_prefix(&root).ok()?;
    let text = rel.to_str()?.to_owned();
    (!text.is_empty()).then_some(text)
}

/// A client path placed in a project: the project-relative path when it resolves inside the
/// project, else the absolute path (as given, or the project root joined with it) marked
/// external.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// What the chat stores.
    pub path: String,
    /// Whether it lies outside the project.
    pub external: bool,
}

/// Places a client path (absolute, or relative to `root`) the one way every action resolves
/// it: symlinks are followed as far as the path exists, so a relative path through an
/// in-project link that points outside is external exactly as its absolute form is.
pub fn place_in_project(root: &Path, path: &str) -> Result<Placed> {
    if path.is_empty() {
        return Err(Error::MissingField("path"));
    }
    if path.contains('\0') {
        return Err(Error::InvalidPath {
            path: path.to_owned(),
            why: "contains a NUL byte",
        });
    }
    let absolute = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        root.join(validate_relative(path)?)
    };
    Ok(match relative_to(root, &absolute) {
        Some(relative) => Placed {
            path: relative,
            external: false,
        },
        None => Placed {
            path: absolute.display().to_string(),
            external: true,
        },
    })
}

/// Whether a project-relative path lies in a directory bb7 must never write from the model's
/// or the client's say-so: a `.bb7/` or a `.git/` at any depth, in any case (a nested
/// repository's `lib/.git/config` can make the next git command there run a program).
pub fn is_reserved(relative: &str) -> bool {
    relative
        .split('/')
        .any(|part| part.eq_ignore_ascii_case(".bb7") || part.eq_ignore_ascii_case(".git"))
}

/// The first directory on the way to `relative` (the project root included) that is laid
/// out as a git directory (`HEAD`, `objects/` and `refs/`, as a bare repository a cloned tree
/// can ship in plain tracked files): git run there reads its `config`, so nothing below it
/// may be written from the model's or the client's say-so. Only `lstat` is used: nothing is
/// opened and no link is followed.
pub fn git_dir_on_the_way(root: &Path, relative: &str) -> Option<String> {
    let parts: Vec<&str> = relative.split('/').collect();
    let looks_like_git_dir = |dir: &Path| {
        let is = |name: &str, dir_wanted: bool| {
            dir.join(name).symlink_metadata().is_ok_and(|meta| {
                if dir_wanted {
                    meta.is_dir()
                } else {
                    meta.is_file()
                }
            })
        };
        is("HEAD", false) && is("objects", true) && is("refs", true)
    };
    (0..parts.len()).find_map(|depth| {
        let below = parts[..depth].join("/");
        looks_like_git_dir(&root.join(&below)).then(|| {
            if below.is_empty() {
                ".".to_owned()
            } else {
                below
            }
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn relative_paths_are_checked() {
        assert_eq!(validate_relative("src/./a.rs").unwrap(), "src/a.rs");
        assert_eq!(validate_relative("src/x/../a.rs").unwrap(), "src/a.rs");
        assert_eq!(
            validate_relative("../a").unwrap_err().to_string(),
            "Invalid path \"../a\": escapes the project root"
        );
        assert_eq!(
            validate_relative("/etc/passwd").unwrap_err().to_string(),
            "Invalid path \"/etc/passwd\": must be relative to the project root"
        );
        assert_eq!(
            validate_relative("").unwrap_err().to_string(),
            "Missing required field: path"
        );
        assert!(validate_relative("a\0b").is_err());
    }

    #[test]
    fn storage_names_keep_the_extension() {
        let name = section_storage_name("src/a.rs", 1, 5);
        assert_eq!(name.len(), 16 + 3);
        assert!(name.ends_with(".rs"));
        assert_ne!(name, section_storage_name("src/a.rs", 1, 6));
        assert_eq!(external_storage_name("/x/Makefile").len(), 16);
    }

    #[test]
    fn relative_and_absolute_forms_place_alike() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        let relative = place_in_project(&root, "out/secret").unwrap();
        let absolute =
            place_in_project(&root, &root.join("out/secret").display().to_string()).unwrap();
        assert!(relative.external);
        assert_eq!(relative, absolute);
        let inside = place_in_project(&root, "alias/a.rs").unwrap();
        assert_eq!(inside.path, "src/a.rs");
        assert!(!inside.external);
        assert!(is_reserved(".bb7/chats/x") && is_reserved(".GIT/config"));
        assert!(
            is_reserved("lib/.git/config") && is_reserved("a/b/.Bb7/x") && is_reserved("a/.git")
        );
        assert!(!is_reserved("a/.github/x") && !is_reserved("a/git/x"));
    }

    #[test]
    fn symlinks_out_of_the_root_are_outside() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        assert!(is_within(
            root.path(),
            &root.path().join("new/dir/file.txt")
        ));
        assert!(!is_within(root.path(), &root.path().join("link/file.txt")));
        assert!(
            guard_write(root.path(), &root.path().join("link/f"))
                .unwrap_err()
                .is_fatal()
        );
    }

    #[test]
    fn a_directory_laid_out_as_a_git_directory_is_found_on_the_way() {
        let root = tempfile::tempdir().unwrap();
        let docs = root.path().join("docs");
        std::fs::create_dir_all(docs.join("objects")).unwrap();
        std::fs::create_dir_all(docs.join("refs")).unwrap();
        std::fs::write(docs.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            git_dir_on_the_way(root.path(), "docs/config").as_deref(),
            Some("docs")
        );
        assert_eq!(git_dir_on_the_way(root.path(), "src/lib.rs"), None);
        // Without `refs/` it is an ordinary directory.
        std::fs::remove_dir(docs.join("refs")).unwrap();
        assert_eq!(git_dir_on_the_way(root.path(), "docs/config"), None);
    }
}
