//! Agent Skills: a folder with a `SKILL.md` (front matter `name` and `description`, then the
//! instructions) and any files the instructions name (scripts, references, templates), as
//! Claude Code, codex, gemini-cli, goose, opencode and crush read them. Only each skill's
//! name and description go into the system prompt; the model reads a skill's instructions
//! and files when it needs them, through the `skill` tool.

use std::path::{Component, Path, PathBuf};

use super::front_matter::FrontMatter;
use super::place::{Place, is_plain_name};

/// The most bytes of a `SKILL.md` or of one of a skill's files read.
pub const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// The longest description kept in the prompt (Claude Code's own limit).
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// One skill found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name, as the model asks for it.
    pub name: String,
    /// When to use it, from its front matter.
    pub description: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Below which no link is followed when its files are read.
    pub anchor: PathBuf,
    /// Whether a project supplied it.
    pub project: bool,
    /// The digest of its `SKILL.md` when loaded: a project's skill changed since is not read.
    pub digest: String,
}

/// A `SKILL.md` found in a place: its path, text, and the skill it describes (or why not).
pub(super) struct Found {
    pub path: PathBuf,
    pub text: String,
    pub skill: Result<Skill, String>,
}

/// The skills of `place`, in name order; what could not be read is in `warnings`.
pub(super) fn find(place: &Place, warnings: &mut Vec<String>) -> Vec<Found> {
    let fs = ybs_fsguard::Confined::new(&place.anchor);
    let Ok(entries) = fs.list(&place.dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (folder, kind) in entries {
        let dir = place.dir.join(&folder);
        match kind {
            ybs_fsguard::Kind::Dir => {}
            ybs_fsguard::Kind::Symlink => {
                warnings.push(format!(
                    "skill {} is not used: it is a symbolic link, which ybs does not follow",
                    dir.display()
                ));
                continue;
            }
            _ => continue,
        }
        let path = dir.join("SKILL.md");
        let text = match read_text(&fs, &path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                warnings.push(format!("cannot read skill {}: {error}", path.display()));
                continue;
            }
        };
        let skill = parse(&text, &folder, &dir, place);
        found.push(Found { path, text, skill });
    }
    found
}

/// The skill a `SKILL.md` in folder `folder` describes.
fn parse(text: &str, folder: &str, dir: &Path, place: &Place) -> Result<Skill, String> {
    let front = FrontMatter::parse(text);
    let name = front.get("name").unwrap_or(folder).trim().to_owned();
    if !is_plain_name(&name) {
        return Err(format!(
            "its name {name:?} is not letters, digits, `-`, `_`, `.` or `:`"
        ));
    }
    let Some(description) = front.get("description") else {
        return Err("its front matter has no `description`".to_owned());
    };
    Ok(Skill {
        name,
        description: description.chars().take(MAX_DESCRIPTION_CHARS).collect(),
        dir: dir.to_owned(),
        anchor: place.anchor.clone(),
        project: place.project,
        digest: crate::config::digest(text),
    })
}

/// A file's text, read without following a link below the anchor of `fs`, a regular file of
/// at most [`MAX_SKILL_FILE_BYTES`].
fn read_text(fs: &ybs_fsguard::Confined, path: &Path) -> std::io::Result<String> {
    let read = fs.read_capped(path, MAX_SKILL_FILE_BYTES)?;
    if read.truncated {
        return Err(std::io::Error::other(format!(
            "it is larger than {MAX_SKILL_FILE_BYTES} bytes"
        )));
    }
    String::from_utf8(read.bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

impl Skill {
    /// The skill's instructions (`file` `None`), or the text of one of its files by its path
    /// relative to the skill's folder. Nothing outside the folder is read, and no link below
    /// the anchor is followed; a project's `SKILL.md` changed since it was trusted is refused.
    pub fn read(&self, file: Option<&str>) -> Result<String, String> {
        let fs = ybs_fsguard::Confined::new(&self.anchor);
        let Some(file) = file.filter(|file| !file.is_empty() && *file != "SKILL.md") else {
            let path = self.dir.join("SKILL.md");
            let text = read_text(&fs, &path).map_err(|error| {
                format!(
                    "cannot read skill `{}` ({}): {error}",
                    self.name,
                    path.display()
                )
            })?;
            if self.project && crate::config::digest(&text) != self.digest {
                return Err(format!(
                    "skill `{}` changed since it was loaded ({}); the user must trust it again",
                    self.name,
                    path.display()
                ));
            }
            return Ok(FrontMatter::parse(&text).body);
        };
        let relative = Path::new(file);
        let inside = (relative.components()).all(|part| matches!(part, Component::Normal(_)));
        if !inside {
            return Err(format!(
                "`{file}` is not a path inside skill `{}`'s folder",
                self.name
            ));
        }
        let path = self.dir.join(relative);
        read_text(&fs, &path).map_err(|error| {
            format!(
                "cannot read {} of skill `{}`: {error}",
                path.display(),
                self.name
            )
        })
    }

    /// The skill's files (relative to its folder), for the model to know what it may read
    /// or run; links and special files are left out.
    pub fn files(&self) -> Vec<String> {
        let fs = ybs_fsguard::Confined::new(&self.anchor);
        let mut odd = Vec::new();
        fs.walk_files(&self.dir, &mut odd).unwrap_or_default()
    }
}
