//! Prompt files: `.ybs/prompts/NAME.md` of the project and `prompts/NAME.md` beside the user
//! config file (`~/.config/ybs/prompts/`) become REPL commands `/NAME [ARGS]`. The file's
//! text is the message, with `$ARGUMENTS` replaced by all the arguments and `$1`..`$9` by each.
//! A project file wins over a user file of the same name; a name that a built-in command has
//! is refused with a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::frontends::repl::slash::COMMANDS;
use ybs_agent::config::ConfigLocations;

/// Commands the REPL handles itself besides the slash commands of [`COMMANDS`].
pub const REPL_COMMANDS: [&str; 2] = ["edit", "image"];

/// One prompt file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

impl PromptFile {
    /// The first non-empty line, for `/help`.
    pub fn summary(&self) -> &str {
        (self.text.lines().map(str::trim))
            .find(|line| !line.is_empty())
            .unwrap_or_default()
    }

    /// The text with `$ARGUMENTS` and `$1`..`$9` replaced from `args` (split at whitespace;
    /// a missing one is empty).
    pub fn expand(&self, args: &str) -> String {
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut text = self.text.replace("$ARGUMENTS", args.trim());
        // From $9 down, so `$1` does not eat the start of `$10`-like text.
        for n in (1..=9).rev() {
            let word = words.get(n - 1).copied().unwrap_or_default();
            text = text.replace(&format!("${n}"), word);
        }
        text
    }
}

/// The prompt files by name, and a warning for each that could not be used.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    /// The usable files by command name.
    pub by_name: BTreeMap<String, PromptFile>,
    /// Files refused (a clash with a built-in command, unreadable).
    pub warnings: Vec<String>,
}

/// The directories searched, user first so that the project's files win.
pub fn directories(locations: &ConfigLocations) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(user) = locations.user_file() {
        if let Some(parent) = user.parent() {
            dirs.push(parent.join("prompts"));
        }
    }
    dirs.push(locations.cwd.join(".ybs").join("prompts"));
    dirs
}

/// Loads the prompt files of `dirs` (later directories win).
pub fn load(dirs: &[PathBuf]) -> Prompts {
    let mut prompts = Prompts::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        for path in paths {
            add(&path, &mut prompts);
        }
    }
    prompts
}

fn add(path: &Path, prompts: &mut Prompts) {
    if path.extension().and_then(|e| e.to_str()) != Some("md") {
        return;
    }
    let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
        return;
    };
    let name = name.to_ascii_lowercase();
    let built_in = COMMANDS.iter().any(|(known, _, _)| *known == name);
    if built_in || REPL_COMMANDS.contains(&name.as_str()) {
        prompts.warnings.push(format!(
            "prompt file {} is not used: /{name} is a built-in command; rename the file",
            path.display()
        ));
        return;
    }
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let file = PromptFile {
                path: path.to_owned(),
                text,
            };
            prompts.by_name.insert(name, file);
        }
        Err(error) => prompts.warnings.push(format!(
            "cannot read prompt file {}: {error}",
            path.display()
        )),
    }
}

impl Prompts {
    /// The message of a typed line `/NAME ARGS` when NAME is a prompt file.
    pub fn message(&self, line: &str) -> Option<String> {
        let command = line.trim().strip_prefix('/')?;
        if command.starts_with('/') {
            return None;
        }
        let (name, args) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let file = self.by_name.get(&name.to_ascii_lowercase())?;
        Some(file.expand(args))
    }

    /// The `/help` section listing them, empty when there are none.
    pub fn help(&self) -> String {
        if self.by_name.is_empty() {
            return String::new();
        }
        let width = self.by_name.keys().map(String::len).max().unwrap_or(0);
        let mut text = String::from("Prompt files:\n");
        for (name, file) in &self.by_name {
            text.push_str(&format!("  /{name:<width$}  {}\n", file.summary()));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn arguments_are_substituted() {
        let file = PromptFile {
            path: "r.md".into(),
            text: "Review $1 for $2.\nAll: $ARGUMENTS; none: [$3]".into(),
        };
        assert_eq!(
            file.expand(" src/a.rs  bugs "),
            "Review src/a.rs for bugs.\nAll: src/a.rs  bugs; none: []"
        );
    }

    #[test]
    fn the_project_wins_and_built_in_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (user, project) = (dir.path().join("user"), dir.path().join("project"));
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(user.join("review.md"), "user review").unwrap();
        std::fs::write(user.join("only.md"), "\n  Only the user's\nmore").unwrap();
        std::fs::write(project.join("review.md"), "project review $1").unwrap();
        std::fs::write(project.join("help.md"), "clash").unwrap();
        std::fs::write(project.join("edit.md"), "clash too").unwrap();
        std::fs::write(project.join("notes.txt"), "not a prompt").unwrap();
        let prompts = load(&[user, project]);
        assert_eq!(
            prompts.message("/review x").as_deref(),
            Some("project review x")
        );
        assert_eq!(
            prompts.message("/only").as_deref(),
            Some("\n  Only the user's\nmore")
        );
        assert_eq!(prompts.message("/help"), None);
        assert_eq!(prompts.message("//review"), None);
        assert_eq!(prompts.message("/notes"), None);
        assert_eq!(prompts.message("/edit"), None);
        assert_eq!(prompts.warnings.len(), 2);
        assert!(prompts.warnings[0].contains("/edit is a built-in command"));
        assert!(prompts.warnings[1].contains("/help is a built-in command"));
        let help = prompts.help();
        assert!(help.contains("/only    Only the user's"), "{help}");
        assert!(help.contains("/review  project review $1"), "{help}");
    }
}
