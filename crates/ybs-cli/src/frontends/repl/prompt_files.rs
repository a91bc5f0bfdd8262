//! Prompt files: `.ybs/prompts/NAME.md` of the project and `prompts/NAME.md` beside the user
//! config file (`~/.config/ybs/prompts/`) become REPL commands `/NAME [ARGS]`, and so do
//! Claude Code's custom commands (`~/.claude/commands/`, the project's `.claude/commands/`)
//! unchanged. The file's text is the message, with `$ARGUMENTS` replaced by all the
//! arguments and `$1`..`$9` by each. Its front matter, as Claude Code writes it, gives the
//! `description` and `argument-hint` `/help` shows, and `allowed-tools`: calls that run
//! without asking during that command's turn, for the user's own files only (a repository
//! does not get to allow its own commands' calls). A project file wins over a user file of
//! the same name, ybs's folder over Claude Code's; a name that a built-in command has is
//! refused with a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ybs_agent::config::ConfigLocations;
use ybs_agent::permissions::Rule;

/// One prompt file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text, without the front matter.
    pub text: String,
    /// The front matter's `description`.
    pub description: Option<String>,
    /// The front matter's `argument-hint` (`[pr-number] [priority]`).
    pub argument_hint: Option<String>,
    /// The front matter's `allowed-tools`, as written.
    pub allowed_tools: Vec<String>,
    /// Whether the project supplied it.
    pub project: bool,
}

/// What running a prompt file sends, and what its turn allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The message.
    pub message: String,
    /// Permission rules (`run_shell(git add *)`) that hold for this turn only.
    pub allow: Vec<String>,
    /// Why some `allowed-tools` were not used.
    pub notes: Vec<String>,
}

impl PromptFile {
    /// A prompt file read from `path`: its front matter taken apart.
    pub fn parse(path: &Path, text: &str, project: bool) -> PromptFile {
        let front = ybs_agent::extensions::front_matter::FrontMatter::parse(text);
        PromptFile {
            path: path.to_owned(),
            description: front.get("description").map(str::to_owned),
            argument_hint: front.get("argument-hint").map(str::to_owned),
            allowed_tools: front.list("allowed-tools").unwrap_or_default(),
            text: front.body,
            project,
        }
    }

    /// The description, else the first non-empty line, for `/help`.
    pub fn summary(&self) -> &str {
        if let Some(description) = &self.description {
            return description;
        }
        (self.text.lines().map(str::trim))
            .find(|line| !line.is_empty())
            .unwrap_or_default()
    }

    /// The message for `args`, with the rules its `allowed-tools` give the turn.
    pub fn invoke(&self, args: &str) -> Invocation {
        let mut allow = Vec::new();
        let mut notes = Vec::new();
        if self.project && !self.allowed_tools.is_empty() {
            notes.push(format!(
                "allowed-tools of {} not used: a project's command cannot allow its own calls \
                 (each still asks as usual)",
                self.path.display()
            ));
        } else {
            for entry in &self.allowed_tools {
                match ybs_agent::extensions::tool_names::rule(entry) {
                    Some(rule) => allow.push(rule),
                    None => notes.push(format!(
                        "allowed-tools entry {entry:?} of {} not used: ybs has no such tool",
                        self.path.display()
                    )),
                }
            }
        }
        Invocation {
            message: self.expand(args),
            allow,
            notes,
        }
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

/// The largest prompt file read.
const MAX_PROMPT_BYTES: u64 = 1024 * 1024;

/// A directory of prompt files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDir {
    /// Where it is.
    pub path: PathBuf,
    /// For the project's: the project directory, below which no link is followed (a cloned
    /// repository may have planted one to a secret, a FIFO or `/dev/zero`). The user's own
    /// directory is trusted.
    pub project: Option<PathBuf>,
}

/// The directories searched, user first so that the project's files win, Claude Code's
/// before ybs's own so that ybs's win.
pub fn directories(locations: &ConfigLocations) -> Vec<PromptDir> {
    let mut dirs = Vec::new();
    if let Some(home) = &locations.home {
        dirs.push(PromptDir {
            path: home.join(".claude").join("commands"),
            project: None,
        });
    }
    if let Some(user) = locations.user_file() {
        if let Some(parent) = user.parent() {
            dirs.push(PromptDir {
                path: parent.join("prompts"),
                project: None,
            });
        }
    }
    for folder in [".claude/commands", ".ybs/prompts"] {
        let path = locations.cwd.join(folder);
        // A project in the home directory: its `.claude/commands` is the user's own.
        if dirs.iter().any(|dir| dir.path == path) {
            continue;
        }
        dirs.push(PromptDir {
            path,
            project: Some(locations.cwd.clone()),
        });
    }
    dirs
}

/// Loads the prompt files of `dirs` (later directories win).
pub fn load(dirs: &[PromptDir]) -> Prompts {
    let mut prompts = Prompts::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir.path) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        let confined = dir.project.as_deref().map(ybs_fsguard::Confined::new);
        for path in paths {
            add(&path, confined.as_ref(), &mut prompts);
        }
    }
    prompts
}

/// The text of a prompt file: a regular file of at most [`MAX_PROMPT_BYTES`], reached without
/// following a link below the project when it is the project's.
fn read(path: &Path, confined: Option<&ybs_fsguard::Confined>) -> std::io::Result<String> {
    let read = match confined {
        Some(project) => project.read_capped(path, MAX_PROMPT_BYTES)?,
        None => ybs_fsguard::read_file(path, MAX_PROMPT_BYTES, ybs_fsguard::Links::Follow)?,
    };
    if read.truncated {
        return Err(std::io::Error::other(format!(
            "it is larger than {MAX_PROMPT_BYTES} bytes"
        )));
    }
    String::from_utf8(read.bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn add(path: &Path, confined: Option<&ybs_fsguard::Confined>, prompts: &mut Prompts) {
    if path.extension().and_then(|e| e.to_str()) != Some("md") {
        return;
    }
    let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
        return;
    };
    let name = name.to_ascii_lowercase();
    // The name is shown in `/help` and written by Tab completion as it is: one that could
    // not be typed as a command, or that carries terminal controls, is not a command.
    if name.is_empty() || name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        prompts.warnings.push(format!(
            "prompt file {} is not used: a command name has no spaces or control characters",
            path.display()
        ));
        return;
    }
    if super::slash::names().any(|known| known == name) {
        prompts.warnings.push(format!(
            "prompt file {} is not used: /{name} is a built-in command; rename the file",
            path.display()
        ));
        return;
    }
    match read(path, confined) {
        Ok(text) => {
            let file = PromptFile::parse(path, &text, confined.is_some());
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
        self.invoke(line).map(|invocation| invocation.message)
    }

    /// What a typed line `/NAME ARGS` runs when NAME is a prompt file.
    pub fn invoke(&self, line: &str) -> Option<Invocation> {
        let command = line.trim().strip_prefix('/')?;
        if command.starts_with('/') {
            return None;
        }
        let (name, args) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let file = self.by_name.get(&name.to_ascii_lowercase())?;
        Some(file.invoke(args))
    }

    /// The `/help` section listing them, empty when there are none.
    pub fn help(&self) -> String {
        if self.by_name.is_empty() {
            return String::new();
        }
        let usages: Vec<(String, &PromptFile)> = (self.by_name.iter())
            .map(|(name, file)| match &file.argument_hint {
                Some(hint) => (format!("{name} {hint}"), file),
                None => (name.clone(), file),
            })
            .collect();
        let width = usages
            .iter()
            .map(|(usage, _)| usage.len())
            .max()
            .unwrap_or(0);
        let mut text = String::from("Prompt files:\n");
        for (usage, file) in &usages {
            text.push_str(&format!("  /{usage:<width$}  {}\n", file.summary()));
        }
        text
    }
}

/// The permission rules of `invocation`, its notes (and any rule that does not parse) said
/// on `err`.
pub fn turn_rules(invocation: &Invocation, err: &mut dyn std::io::Write) -> Vec<Rule> {
    for note in &invocation.notes {
        let _ = writeln!(err, "ybs: note: {}", crate::render::inert_lines(note));
    }
    let mut rules = Vec::new();
    for text in &invocation.allow {
        match Rule::parse(text) {
            Ok(rule) => rules.push(rule),
            Err(error) => {
                let _ = writeln!(
                    err,
                    "ybs: note: allowed-tools entry {} not used: {error}",
                    crate::render::inert(text)
                );
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn arguments_are_substituted() {
        let file = PromptFile::parse(
            Path::new("r.md"),
            "Review $1 for $2.\nAll: $ARGUMENTS; none: [$3]",
            false,
        );
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
        std::fs::write(user.join("triage.md"), "user triage").unwrap();
        std::fs::write(user.join("only.md"), "\n  Only the user's\nmore").unwrap();
        std::fs::write(project.join("triage.md"), "project triage $1").unwrap();
        std::fs::write(project.join("help.md"), "clash").unwrap();
        std::fs::write(project.join("edit.md"), "clash too").unwrap();
        std::fs::write(project.join("notes.txt"), "not a prompt").unwrap();
        let prompts = load(&[
            PromptDir {
                path: user,
                project: None,
            },
            PromptDir {
                path: project.clone(),
                project: Some(project),
            },
        ]);
        assert_eq!(
            prompts.message("/triage x").as_deref(),
            Some("project triage x")
        );
        assert_eq!(
            prompts.message("/only").as_deref(),
            Some("\n  Only the user's\nmore")
        );
        assert_eq!(prompts.message("/help"), None);
        assert_eq!(prompts.message("//triage"), None);
        assert_eq!(prompts.message("/notes"), None);
        assert_eq!(prompts.message("/edit"), None);
        assert_eq!(prompts.warnings.len(), 2);
        assert!(prompts.warnings[0].contains("/edit is a built-in command"));
        assert!(prompts.warnings[1].contains("/help is a built-in command"));
        let help = prompts.help();
        assert!(help.contains("/only    Only the user's"), "{help}");
        assert!(help.contains("/triage  project triage $1"), "{help}");
    }

    #[test]
    fn names_that_carry_terminal_controls_or_spaces_and_aliases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        // A cloned repository names a prompt file so that `/help` or Tab would write a
        // title-setting escape sequence to the user's terminal.
        std::fs::write(project.join("x\u{1b}]0;pwned\u{7}.md"), "evil").unwrap();
        std::fs::write(project.join("two words.md"), "cannot be typed").unwrap();
        std::fs::write(project.join("quit.md"), "shadows /quit").unwrap();
        std::fs::write(project.join("fine.md"), "kept").unwrap();
        let prompts = load(&[PromptDir {
            path: project.clone(),
            project: Some(project),
        }]);
        let names: Vec<&String> = prompts.by_name.keys().collect();
        assert_eq!(names, ["fine"]);
        assert_eq!(prompts.warnings.len(), 3, "{:?}", prompts.warnings);
        assert!(
            prompts
                .warnings
                .iter()
                .any(|w| w.contains("/quit is a built-in command")),
            "{:?}",
            prompts.warnings
        );
        let help = prompts.help();
        assert!(
            !help.contains('\u{1b}') && !help.contains("pwned"),
            "{help:?}"
        );
        assert_eq!(prompts.message("/quit"), None);
    }

    #[test]
    fn project_prompt_files_that_are_links_or_fifos_are_refused_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let prompts_dir = project.join(".ybs/prompts");
        std::fs::create_dir_all(&prompts_dir).unwrap();
        std::fs::write(dir.path().join("secret"), "SECRET").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), prompts_dir.join("leak.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", prompts_dir.join("zero.md")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            prompts_dir.join("pipe.md"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let prompts = load(&[PromptDir {
            path: prompts_dir.clone(),
            project: Some(project),
        }]);
        assert!(prompts.by_name.is_empty(), "{:?}", prompts.by_name);
        assert_eq!(prompts.warnings.len(), 3, "{:?}", prompts.warnings);
        assert!(
            prompts.warnings[0].contains("leak.md: ")
                && prompts.warnings[0].contains("is a symbolic link")
        );
        assert!(
            prompts.warnings[1].contains("pipe.md: ")
                && prompts.warnings[1].contains("is not a regular file")
        );
        assert!(
            prompts.warnings[2].contains("zero.md: ")
                && prompts.warnings[2].contains("is a symbolic link")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("secret")).unwrap(),
            "SECRET"
        );
    }
}
