//! The repository map of a session (`context.repo_map_tokens`): built with `ybs-repo-map`
//! from the whole repository around the working directory (the files under the working
//! directory ranked first, paths written from it) and the files the conversation mentions,
//! and kept between turns. It is rebuilt only when the files (paths, sizes, modification times) or the
//! mentioned files change, so the system prompt stays byte-identical otherwise and the
//! provider's prompt cache keeps working; a rebuild parses only the files that changed.

use std::path::{Path, PathBuf};

use ybs_context_budget::{CharsPerToken, TokenCounter};
use ybs_core::{Message, Role};
use ybs_repo_map::{Mapper, RepoMap, display_path, fingerprint, mentioned, scan};
use ybs_tools::PathSandbox;

/// The first lines of the map's section of the system prompt.
pub const HEADING: &str = "Repository map: the project's files, most relevant first, with \
their top-level definitions. It is a summary: read a file before changing it.\n\n";

/// The line after the heading when the session started in a subdirectory of the repository.
pub const OUTSIDE: &str = "Paths are written from the working directory; files under `../` \
are outside it, for orientation: the tools may not be allowed to read them.\n\n";

/// What [`RepoMapCache::refresh`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// The files and mentions were as before: the same text.
    Kept,
    /// The map was built anew.
    Rebuilt,
}

/// The map of one session and what it was built from.
#[derive(Debug, Clone)]
pub struct RepoMapCache {
    root: PathBuf,
    /// The working directory relative to `root` (`/` separators; empty when they are one).
    near: String,
    budget: usize,
    sandbox: PathSandbox,
    mapper: Mapper,
    built: Option<Built>,
}

#[derive(Debug, Clone)]
struct Built {
    fingerprint: u64,
    mentioned: Vec<String>,
    map: RepoMap,
    section: Option<String>,
}

impl RepoMapCache {
    /// The cache of a session working in `cwd` with `context.repo_map_tokens` of `tokens`;
    /// `None` when 0 turns the map off. The map covers the git repository around `cwd` (just
    /// `cwd` outside one, or when the repository holds the home directory `home`, as a
    /// repository of dotfiles does). Paths the sandbox blocks are left out of the map.
    pub fn new(cwd: &Path, home: Option<&Path>, tokens: u64, sandbox: PathSandbox) -> Option<Self> {
        if tokens == 0 {
            return None;
        }
        // Blocked paths are resolved, so the walk starts from the resolved root.
        let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let home = home.map(|home| std::fs::canonicalize(home).unwrap_or_else(|_| home.into()));
        let root = crate::project::git_root(&cwd)
            .filter(|root| !home.as_ref().is_some_and(|home| home.starts_with(root)))
            .unwrap_or_else(|| cwd.clone());
        let near = (cwd.strip_prefix(&root).ok())
            .map(|inside| {
                let parts: Vec<String> = (inside.components())
                    .map(|part| part.as_os_str().to_string_lossy().into_owned())
                    .collect();
                parts.join("/")
            })
            .unwrap_or_default();
        Some(RepoMapCache {
            mapper: Mapper::new().near(&near),
            root,
            near,
            budget: usize::try_from(tokens).unwrap_or(usize::MAX),
            sandbox,
            built: None,
        })
    }

    /// Scans the project and rebuilds the map if the files or the files `conversation`
    /// mentions changed since the last build.
    pub fn refresh(&mut self, conversation: &[Message]) -> Refresh {
        let sandbox = self.sandbox.clone();
        let files = scan(&self.root, move |path| sandbox.is_blocked(path));
        let print = fingerprint(&files);
        let text = mention_text(conversation);
        // The conversation names files as seen from the working directory.
        let shown: Vec<String> = (files.iter())
            .map(|file| display_path(&file.path, &self.near))
            .collect();
        let named = mentioned(&text, shown.iter().map(String::as_str));
        let mentioned: Vec<String> = (files.iter().zip(&shown))
            .filter(|(_, shown)| named.contains(*shown))
            .map(|(file, _)| file.path.clone())
            .collect();
        if let Some(built) = &self.built {
            if built.fingerprint == print && built.mentioned == mentioned {
                return Refresh::Kept;
            }
        }
        let counter = CharsPerToken::default();
        let budget = self.budget.saturating_sub(counter.count(HEADING));
        let map = (self.mapper).map(&self.root, &files, &mentioned, budget, &counter);
        let section = (!map.text.is_empty()).then(|| {
            if self.near.is_empty() {
                format!("{HEADING}{}", map.text)
            } else {
                format!("{HEADING}{OUTSIDE}{}", map.text)
            }
        });
        self.built = Some(Built {
            fingerprint: print,
            mentioned,
            map,
            section,
        });
        Refresh::Rebuilt
    }

    /// The map's section of the system prompt (the heading and the map), if anything fits.
    pub fn section(&self) -> Option<&str> {
        self.built.as_ref()?.section.as_deref()
    }

    /// The last map built.
    pub fn map(&self) -> Option<&RepoMap> {
        self.built.as_ref().map(|built| &built.map)
    }

    /// The budget in tokens (`context.repo_map_tokens`).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// What `--dry-run` shows of the map: its size, then the section as sent.
    pub fn describe(&self) -> String {
        let Some(built) = &self.built else {
            return "repo map: not built yet".to_owned();
        };
        let map = &built.map;
        let size = format!(
            "repo map: {} of {} files, {} of {} tokens (context.repo_map_tokens)",
            map.files_shown, map.files_total, map.tokens, self.budget
        );
        match &built.section {
            Some(section) => format!("{size}\n{section}"),
            None => format!("{size}; nothing fits"),
        }
    }
}

/// What the conversation says, where file names are looked for: the user's and the model's
/// text and the arguments of tool calls. Tool results are left out: a `list_files` result
/// names every file and would rank none higher.
fn mention_text(conversation: &[Message]) -> String {
    let mut text = String::new();
    for message in conversation.iter().filter(|m| m.role != Role::Tool) {
        text.push_str(&message.text_content());
        text.push('\n');
        for call in message.tool_calls() {
            text.push_str(&call.arguments.to_string());
            text.push('\n');
        }
    }
    text
}

/// The system prompt with the map's section after it.
pub fn with_map(system: Option<&str>, map: Option<&str>) -> Option<String> {
    match (system, map) {
        (Some(system), Some(map)) => Some(format!("{system}\n\n{map}")),
        (system, map) => system.or(map).map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn cache(dir: &Path, tokens: u64) -> Option<RepoMapCache> {
        let sandbox = PathSandbox::new([dir.display().to_string()], Vec::<String>::new()).unwrap();
        RepoMapCache::new(dir, None, tokens, sandbox)
    }

    #[test]
    fn zero_tokens_turns_the_map_off() {
        let dir = tempfile::tempdir().unwrap();
        assert!(cache(dir.path(), 0).is_none());
    }

    #[test]
    fn the_map_is_kept_until_a_file_or_a_mention_changes() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.rs"), "pub fn alpha() {}\n").unwrap();
        fs::write(dir.path().join("b.py"), "def beta():\n    alpha()\n").unwrap();
        let mut cache = cache(dir.path(), 1024).unwrap();
        let mut conversation = vec![Message::user("hello")];
        assert_eq!(cache.refresh(&conversation), Refresh::Rebuilt);
        let first = cache.section().unwrap().to_owned();
        assert!(first.starts_with(HEADING));
        assert!(first.contains("a.rs:\n  pub fn alpha()\nb.py:\n  def beta()\n"));
        assert_eq!(cache.refresh(&conversation), Refresh::Kept);
        assert_eq!(cache.section().unwrap(), first);

        conversation.push(Message::user("now look at b.py"));
        assert_eq!(cache.refresh(&conversation), Refresh::Rebuilt);
        assert!(
            cache
                .section()
                .unwrap()
                .contains("\nb.py:\n  def beta()\na.rs:")
        );

        fs::write(dir.path().join("c.go"), "package c\nfunc Gamma() {}\n").unwrap();
        assert_eq!(cache.refresh(&conversation), Refresh::Rebuilt);
        assert!(cache.section().unwrap().contains("c.go:\n  func Gamma()\n"));
        assert_eq!(cache.refresh(&conversation), Refresh::Kept);
    }

    #[test]
    fn the_section_fits_the_budget_with_its_heading() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..200 {
            fs::write(
                dir.path().join(format!("m{i:03}.rs")),
                format!("pub fn function_number_{i}(argument: u32) -> u32 {{ argument }}\n"),
            )
            .unwrap();
        }
        let mut cache = cache(dir.path(), 300).unwrap();
        cache.refresh(&[]);
        let section = cache.section().unwrap();
        assert!(CharsPerToken::default().count(section) <= 300);
        assert!(section.contains("more files not shown"));
    }

    /// A repository with `lib/core.rs`, `app/main.rs` using it, and an empty folder.
    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".git")).unwrap();
        fs::create_dir_all(dir.path().join("lib")).unwrap();
        fs::create_dir_all(dir.path().join("app")).unwrap();
        fs::create_dir_all(dir.path().join("empty")).unwrap();
        fs::write(
            dir.path().join("lib/core.rs"),
            "pub fn core_step() {}
",
        )
        .unwrap();
        fs::write(
            dir.path().join("app/main.rs"),
            "fn main() { core_step(); }
",
        )
        .unwrap();
        dir
    }

    fn section_in(root: &Path, cwd: &str, home: Option<&Path>) -> String {
        let sandbox = PathSandbox::new([root.display().to_string()], Vec::<String>::new()).unwrap();
        let mut cache = RepoMapCache::new(&root.join(cwd), home, 1024, sandbox).unwrap();
        cache.refresh(&[Message::user("hello")]);
        cache.section().unwrap_or_default().to_owned()
    }

    #[test]
    fn from_a_subdirectory_the_map_covers_the_repository_nearest_files_first() {
        let repo = repository();
        let map = section_in(repo.path(), "app", None);
        assert!(
            map.ends_with("main.rs:\n  fn main()\n../lib/core.rs:\n  pub fn core_step()\n"),
            "{map}"
        );
        // An empty folder of the repository still gets the repository's map.
        let map = section_in(repo.path(), "empty", None);
        assert!(
            map.contains("../lib/core.rs:\n  pub fn core_step()\n"),
            "{map}"
        );
        assert!(map.contains("../app/main.rs"), "{map}");
    }

    #[test]
    fn a_file_named_from_the_working_directory_counts_as_mentioned() {
        let repo = repository();
        let sandbox =
            PathSandbox::new([repo.path().display().to_string()], Vec::<String>::new()).unwrap();
        let mut cache = RepoMapCache::new(&repo.path().join("lib"), None, 1024, sandbox).unwrap();
        cache.refresh(&[Message::user("what calls core? see ../app/main.rs")]);
        let map = cache.section().unwrap();
        assert!(
            map.ends_with("../app/main.rs:\n  fn main()\ncore.rs:\n  pub fn core_step()\n"),
            "{map}"
        );
    }

    #[test]
    fn a_repository_holding_the_home_directory_is_not_mapped_whole() {
        let repo = repository();
        let map = section_in(repo.path(), "app", Some(repo.path()));
        assert!(map.ends_with("main.rs:\n  fn main()\n"), "{map}");
        assert!(!map.contains("core.rs"), "{map}");
    }

    #[test]
    fn the_map_follows_the_system_prompt() {
        assert_eq!(
            with_map(Some("sys"), Some("map")).as_deref(),
            Some("sys\n\nmap")
        );
        assert_eq!(with_map(Some("sys"), None).as_deref(), Some("sys"));
        assert_eq!(with_map(None, Some("map")).as_deref(), Some("map"));
        assert_eq!(with_map(None, None), None);
    }
}
