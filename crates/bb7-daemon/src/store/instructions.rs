//! Instruction files. The project file `.bb7/instructions` is markdown with two directives at
//! column 0: `@@` comment lines (dropped) and `@include <path>` (or `@include "path"`), which
//! inserts a project file verbatim, one level deep. Directives inside fenced blocks (lines
//! starting with ```` ``` ```` or `~~~`) are plain text. Include paths must be relative and
//! stay inside the project, also after following symlinks, and name a regular file (a FIFO,
//! socket or device would block the daemon or leak). `.bb7/instructions` itself is read
//! beneath the project root without following links: a link there is refused like an
//! include that leaves the project. The global file is plain markdown.

use std::path::{Path, PathBuf};

use crate::store::consent::{self, IncludeConsent};
use crate::store::error::{Error, Result};
use crate::store::tracked::{Tracked, Unvouched};
use ybs_fsguard::confined::{Confined, Refused, refusal};

/// The most instructions may hold once includes are expanded: they go with every message.
pub const MAX_EXPANDED: usize = 1 << 20;

/// The most `@include` lines instructions may hold: each is resolved, read, checked with git
/// and listed for the user, so a file of empty includes must not cost seconds per request.
pub const MAX_INCLUDES: usize = 1000;

/// Expands a project instruction file. `display` names the file in errors, which read
/// `{display}:{line}: {what}`; instructions over [`MAX_EXPANDED`] bytes are such an error
/// (an include is read no further than the room left). An include that git does not vouch
/// for ([`Tracked`]: untracked, ignored, in `.git`, named like a secret) is such an error too
/// unless `allowed`, the includes the user consented to, holds its path (as the directive
/// writes it) with the digest of what it sends now ([`consent::digest`]).
pub fn expand(
    text: &str,
    project_root: &Path,
    display: &str,
    allowed: &[IncludeConsent],
) -> Result<String> {
    expand_listing(text, project_root, display, allowed, &mut Vec::new())
}

/// [`expand`], listing each included file (as written) and its size in `included`; past an
/// include refused for want of consent it goes on listing (the user is shown them all).
fn expand_listing(
    text: &str,
    project_root: &Path,
    display: &str,
    allowed: &[IncludeConsent],
    included_files: &mut Vec<Included>,
) -> Result<String> {
    // Read (the index) only once an include needs it.
    let mut tracked: Option<Tracked> = None;
    let mut refused: Option<Error> = None;
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for (number, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let fail = |what: String| Error::Instructions(format!("{display}:{}: {what}", number + 1));
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            out.push_str(raw);
            continue;
        }
        if in_fence {
            out.push_str(raw);
            continue;
        }
        if line.starts_with("@@") {
            continue;
        }
        match include_target(line) {
            None if out.len() + raw.len() > MAX_EXPANDED => return Err(fail(too_large())),
            None => out.push_str(raw),
            Some(Err(what)) => return Err(fail(what.to_owned())),
            Some(Ok(_)) if included_files.len() >= MAX_INCLUDES => {
                return Err(fail(format!(
                    "instructions hold more than {MAX_INCLUDES} @include lines"
                )));
            }
            Some(Ok(target)) => {
                let resolved =
                    resolve_include(project_root, &target).map_err(|what| fail(what.to_owned()))?;
                let room = MAX_EXPANDED.saturating_sub(out.len());
                let included =
                    read_include(&resolved, room).map_err(|err| match refusal(&err) {
                        Some(Refused::NotRegular(_)) => {
                            fail(format!("include is not a regular file: {target}"))
                        }
                        Some(_) => fail("include path escapes project root".to_owned()),
                        None if err.kind() == std::io::ErrorKind::NotFound => {
                            fail(format!("include file not found: {target}"))
                        }
                        None if err.kind() == std::io::ErrorKind::FileTooLarge => fail(too_large()),
                        None => fail(format!("include read failed: {err}")),
                    })?;
                let needs_consent = tracked
                    .get_or_insert_with(|| Tracked::new(&resolved.0))
                    .check(&resolved.1);
                let relative = resolved.1.strip_prefix(&resolved.0).unwrap_or(&resolved.1);
                let digest = consent::digest(&relative.to_string_lossy(), included.as_bytes());
                let consented = consent::allows(allowed, &target, &digest);
                included_files.push(Included {
                    path: target.clone(),
                    bytes: included.len(),
                    needs_consent,
                    digest: needs_consent.map(|_| digest),
                });
                if let Some(why) = needs_consent.filter(|_| !consented) {
                    refused.get_or_insert_with(|| fail(consent_needed(&target, why)));
                    continue;
                }
                out.push_str(&included);
                if raw.ends_with('\n') && !included.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    match refused {
        Some(err) => Err(err),
        None => Ok(out),
    }
}

fn consent_needed(target: &str, why: Unvouched) -> String {
    format!(
        "include {target} {}: it is sent only once you allow it (the plugin asks before the \
         first send; a client without that question cannot: remove the @include, or track \
         the file with git)",
        why.describe()
    )
}

fn too_large() -> String {
    format!(
        "instructions exceed {} KiB once includes are expanded",
        MAX_EXPANDED / 1024
    )
}

/// Drops `@@` comment lines outside fences (used for the global file).
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for raw in text.split_inclusive('\n') {
        if raw.starts_with("```") || raw.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && raw.starts_with("@@") {
            continue;
        }
        out.push_str(raw);
    }
    out
}

/// `None` when the line is no include directive, else its path or what is wrong with it.
fn include_target(line: &str) -> Option<std::result::Result<String, &'static str>> {
    let rest = line.strip_prefix("@include")?;
    if rest.is_empty() {
        return Some(Err("@include missing path"));
    }
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(Err("@include missing path"));
    }
    let Some(quoted) = rest.strip_prefix('"') else {
        return Some(Ok(rest.to_owned()));
    };
    let Some(end) = quoted.find('"') else {
        return Some(Err("@include missing closing quote"));
    };
    if !quoted[end + 1..].trim().is_empty() {
        return Some(Err("@include trailing text after quoted path"));
    }
    let path = &quoted[..end];
    if path.is_empty() {
        return Some(Err("@include missing path"));
    }
    Some(Ok(path.to_owned()))
}

/// Reads a resolved include (`root` and the resolved path are canonical, so walking it
/// without following links only fails if a link was swapped in since it was resolved).
/// More than `room` bytes is a `FileTooLarge` error.
fn read_include((root, path): &(PathBuf, PathBuf), room: usize) -> std::io::Result<String> {
    let (bytes, more) = Confined::new(root).read_at_most(path, room as u64)?;
    if more {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    String::from_utf8(bytes)
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err))
}

fn resolve_include(
    root: &Path,
    target: &str,
) -> std::result::Result<(PathBuf, PathBuf), &'static str> {
    if Path::new(target).is_absolute() {
        return Err("include path must be relative to project root");
    }
    let clean = crate::store::paths::validate_relative(target)
        .map_err(|_| "include path escapes project root")?;
    let root = root
        .canonicalize()
        .map_err(|_| "project root cannot be resolved")?;
    let joined = root.join(clean);
    match joined.canonicalize() {
        Ok(real) if real.starts_with(&root) => Ok((root, real)),
        Ok(_) => Err("include path escapes project root"),
        // Missing files are reported by the read, with the path as written.
        Err(_) => Ok((root, joined)),
    }
}

/// What `chat_get` reports in `instructions_info` and `get_customization_info` builds on.
/// Empty strings are left out, as the first bb7 does (its client treats `""` as an error).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct InstructionsInfo {
    /// Absolute path of the global file.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub global_path: String,
    /// Whether it exists.
    pub global_exists: bool,
    /// Absolute path of the project file ("" for global chats or without a project).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub project_path: String,
    /// Whether it exists.
    pub project_exists: bool,
    /// Why it does not parse ("" when it does).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub project_error: String,
    /// Every file the project file includes, in order, with its size: these go with every
    /// message, so the user can see what a shipped file makes the daemon send.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub project_includes: Vec<Included>,
}

/// A file an `@include` brought in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Included {
    /// The path as the directive names it (relative to the project root).
    pub path: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Why it is sent only with the user's consent (`allow_includes`), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_consent: Option<Unvouched>,
    /// What it sends ([`consent::digest`]), when it needs consent: a consent names it, so
    /// a change asks again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// Collects [`InstructionsInfo`]; `project_root` is `None` for global chats; `allowed` are
/// the includes the user consented to ([`expand`]).
pub fn info(
    global_path: &Path,
    project_root: Option<&Path>,
    allowed: &[IncludeConsent],
) -> InstructionsInfo {
    let mut info = InstructionsInfo {
        global_path: global_path.display().to_string(),
        global_exists: global_path.is_file(),
        ..InstructionsInfo::default()
    };
    if let Some(root) = project_root {
        let path = project_file(root);
        info.project_path = path.display().to_string();
        // A link or FIFO there "exists" and is reported as an error by the load.
        info.project_exists = matches!(Confined::new(root).kind(&path), Ok(Some(_)));
        if info.project_exists {
            if let Err(err) = load_project_listing(root, allowed, &mut info.project_includes) {
                info.project_error = err.to_string();
            }
        }
    }
    info
}

/// `.bb7/instructions` under `root`.
pub fn project_file(root: &Path) -> PathBuf {
    root.join(".bb7").join("instructions")
}

/// The expanded project instructions ("" when the file does not exist); `allowed` as for
/// [`expand`].
pub fn load_project(root: &Path, allowed: &[IncludeConsent]) -> Result<String> {
    load_project_listing(root, allowed, &mut Vec::new())
}

fn load_project_listing(
    root: &Path,
    allowed: &[IncludeConsent],
    included: &mut Vec<Included>,
) -> Result<String> {
    let path = project_file(root);
    match Confined::new(root).read_to_string(&path) {
        Ok(text) => expand_listing(&text, root, &path.display().to_string(), allowed, included),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => match refusal(&err) {
            Some(Refused::Symlink(_)) => Err(Error::Instructions(format!(
                "{}: is a symbolic link; refused (like an include that leaves the project)",
                path.display()
            ))),
            _ => Err(Error::Instructions(format!("{}: {err}", path.display()))),
        },
    }
}

/// Template written by `prepare_instructions` for a new project file.
pub const PROJECT_TEMPLATE: &str = "@@ BB-7 project instructions\n\
@@\n\
@@ What this file holds (without its comments, with its includes expanded) goes\n\
@@ with every request of this project: keep it short and to the point.\n\
@@ Lines that start with @@ are comments; they are never sent.\n\
@@ To pull another file in, use the @include directive:\n\
@@\n\
@@ @include <path>                a file, relative to the project root\n\
@@ @include \"path with spaces\"    the quoted form, for names with spaces\n\
@@\n\
@@ Included files must lie inside the project; they are inserted as they are\n\
@@ and not read for directives again. Directives inside fenced code blocks\n\
@@ (``` or ~~~) are plain text.\n\
@@\n\
@@ For example:\n\
@@ @include ARCHITECTURE.md\n\
\n\
# Project context (Markdown is fine)\n\
\n";

/// Template written by `prepare_instructions` for a new global file.
pub const GLOBAL_TEMPLATE: &str = "@@ BB-7 global instructions\n\
@@\n\
@@ This file goes with every request, in every project. Put here what is true\n\
@@ whatever the project: your background and experience, your tools and\n\
@@ environment, how you like answers written, what you want to learn more about.\n\
@@ Lines that start with @@ are comments; they are never sent.\n\
\n";

/// Template written by `prepare_instructions` for a new system prompt override (the
/// built-in prompt follows it, to edit).
pub const SYSTEM_TEMPLATE: &str = "@@ BB-7 system prompt override\n\
@@\n\
@@ When this file has anything besides comments, it replaces the built-in system\n\
@@ prompt completely. Change it carefully: the system prompt decides how BB-7\n\
@@ behaves.\n\
@@ Lines that start with @@ are comments; they are never sent.\n\
\n";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "NOTES").unwrap();
        std::fs::write(dir.path().join("with space.md"), "SPACED\n").unwrap();
        dir
    }

    #[test]
    fn comments_includes_and_fences() {
        let dir = project();
        let text = "intro\n@@ hidden\n@include notes.md\n```\n@include nothing\n@@ kept\n```\n@include \"with space.md\"\n@includes is text\n";
        let out = expand(text, dir.path(), "I", &[]).unwrap();
        assert_eq!(
            out,
            "intro\nNOTES\n```\n@include nothing\n@@ kept\n```\nSPACED\n@includes is text\n"
        );
    }

    #[test]
    fn bad_includes_are_reported_with_line_numbers() {
        let dir = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "S").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        let err = |text: &str| expand(text, dir.path(), "I", &[]).unwrap_err().to_string();
        assert_eq!(
            err("a\n@include /etc/passwd\n"),
            "I:2: include path must be relative to project root"
        );
        assert_eq!(
            err("@include ../x\n"),
            "I:1: include path escapes project root"
        );
        assert_eq!(
            err("@include link\n"),
            "I:1: include path escapes project root"
        );
        assert_eq!(
            err("@include missing.md\n"),
            "I:1: include file not found: missing.md"
        );
        assert_eq!(err("@include\n"), "I:1: @include missing path");
        std::fs::write(dir.path().join("big.txt"), "x".repeat(1 << 19)).unwrap();
        assert_eq!(
            err(&"@include big.txt\n".repeat(3)),
            "I:2: instructions exceed 1024 KiB once includes are expanded"
        );
        assert_eq!(err("@include \"a\n"), "I:1: @include missing closing quote");
        assert_eq!(
            err("@include \"a\" b\n"),
            "I:1: @include trailing text after quoted path"
        );
    }

    #[test]
    fn info_leaves_out_empty_strings() {
        let dir = project();
        let json = serde_json::to_value(info(
            Path::new("/nonexistent/instructions.md"),
            Some(dir.path()),
            &[],
        ))
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"global_path": "/nonexistent/instructions.md",
                "global_exists": false,
                "project_path": project_file(dir.path()).display().to_string(),
                "project_exists": false})
        );
        let json = serde_json::to_value(info(Path::new("/nonexistent/instructions.md"), None, &[]))
            .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"global_path": "/nonexistent/instructions.md",
                "global_exists": false, "project_exists": false})
        );
    }

    #[test]
    fn info_reports_parse_errors() {
        let dir = project();
        std::fs::create_dir_all(dir.path().join(".bb7")).unwrap();
        std::fs::write(project_file(dir.path()), "@include nope\n").unwrap();
        let info = info(
            Path::new("/nonexistent/instructions.md"),
            Some(dir.path()),
            &[],
        );
        assert!(info.project_exists);
        assert!(!info.global_exists);
        assert!(
            info.project_error
                .ends_with(":1: include file not found: nope"),
            "{}",
            info.project_error
        );
        assert_eq!(strip_comments("@@ a\nb\n"), "b\n");
    }
}
