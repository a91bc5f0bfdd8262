//! Building the map: the symbols of every file, ranked, fitted to the budget; a [`Mapper`] that
//! re-parses only what changed; [`map_directory`] with the walk's I/O.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use ybs_context_budget::TokenCounter;

use crate::entries::{Entry, entries};
use crate::extract::{Extractor, Symbols};
use crate::fit::{fit, fitting};
use crate::lang::Lang;
use crate::mention;
use crate::parallel;
use crate::rank::{Ranked, Tier, rank};
use crate::source::{MappedFile, SourceFile};
use crate::walk::{self, FileMeta, scan};

/// A map fitted to its budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoMap {
    /// The map: one block per file, highest-ranked first; empty when nothing fits.
    pub text: String,
    /// Its size as the counter counts it.
    pub tokens: usize,
    /// How many files the project has.
    pub files_total: usize,
    /// How many of them the map shows.
    pub files_shown: usize,
}

/// The symbols of every file (parsed in parallel, in the order of `files`).
pub fn extract_all(files: &[SourceFile]) -> Vec<MappedFile> {
    parallel::map(files, Extractor::new, |extractor, file| MappedFile {
        path: file.path.clone(),
        symbols: match (Lang::of(&file.path), &file.content) {
            (Some(lang), Some(content)) => extractor.extract(lang, content),
            _ => Symbols::default(),
        },
    })
}

/// The map of `files` within `budget` tokens of `counter`, the files whose paths are in
/// `mentioned` first. The same input gives the same text, byte for byte.
pub fn build(
    files: &[SourceFile],
    mentioned: &[String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap {
    if budget == 0 {
        return RepoMap {
            files_total: files.len(),
            ..RepoMap::default()
        };
    }
    build_from(&extract_all(files), mentioned, budget, counter)
}

/// [`build`] from files whose symbols are already extracted.
pub fn build_from(
    mapped: &[MappedFile],
    mentioned: &[String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap {
    build_near(mapped, mentioned, "", budget, counter)
}

/// [`build_from`] with the files under the folder `near` (a path prefix such as `src/net`)
/// ranked right after the mentioned ones and paths written relative to it: the map of a
/// session started in that folder.
pub fn build_near(
    mapped: &[MappedFile],
    mentioned: &[String],
    near: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap {
    let mentioned: BTreeSet<String> = mentioned.iter().cloned().collect();
    let order = rank(mapped, &mentioned, near);
    let ordered = entries(mapped, &order);
    let ordered = share_with_the_rest(mapped, &order, ordered, near, budget, counter);
    let fitted = fit(mapped, &ordered, near, budget, counter);
    RepoMap {
        text: fitted.text,
        tokens: fitted.tokens,
        files_total: mapped.len(),
        files_shown: fitted.files_shown,
    }
}

/// The part of the budget the files near the folder a session started in (with the mentioned
/// ones) may fill while the rest of the repository has files to show, as a fraction.
const NEAR_SHARE: (usize, usize) = (2, 3);

/// `entries` reordered so that the mentioned and near files take at most [`NEAR_SHARE`] of
/// `budget` before the rest of the repository has its turn (their further entries come after
/// it): a session started in a small folder still sees what the repository around it
/// holds. The mentioned files' entries always stay first.
fn share_with_the_rest(
    mapped: &[MappedFile],
    order: &[Ranked],
    mut entries: Vec<Entry>,
    near: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> Vec<Entry> {
    if near.is_empty() {
        return entries;
    }
    let mut tiers = vec![Tier::Other; mapped.len()];
    for ranked in order {
        tiers[ranked.index] = ranked.tier;
    }
    let focused = |entry: &Entry| matches!(tiers[entry.file], Tier::Mentioned | Tier::Near);
    let split = (entries.iter())
        .position(|entry| !focused(entry))
        .unwrap_or(entries.len());
    if split == entries.len() {
        return entries;
    }
    let mentioned = (entries[..split].iter())
        .take_while(|entry| tiers[entry.file] == Tier::Mentioned)
        .count();
    let share = budget * NEAR_SHARE.0 / NEAR_SHARE.1;
    let kept = fitting(mapped, &entries[..split], near, share, counter).max(mentioned);
    let later: Vec<Entry> = entries.drain(kept..split).collect();
    entries.extend(later);
    entries
}

/// Maps one directory again and again, parsing only the files whose size or modification
/// time changed since the last map (a session's map after an edit re-reads one file).
#[derive(Debug, Clone, Default)]
pub struct Mapper {
    known: HashMap<String, (FileMeta, Symbols)>,
    near: String,
}

impl Mapper {
    /// A mapper that knows no file yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The mapper with the files under `folder` (relative to the root, `/` separators; empty
    /// for none) ranked right after the mentioned ones and paths written relative to it, as
    /// [`build_near`] does.
    pub fn near(mut self, folder: &str) -> Self {
        self.near = folder.trim_matches('/').to_owned();
        self
    }

    /// The map of `files` (a [`scan`] of `root`), like [`build`] over [`walk::read`], with the
    /// symbols of unchanged files taken from the last call.
    pub fn map(
        &mut self,
        root: &Path,
        files: &[FileMeta],
        mentioned: &[String],
        budget: usize,
        counter: &dyn TokenCounter,
    ) -> RepoMap {
        let changed: Vec<FileMeta> = (files.iter())
            .filter(
                |meta| !matches!(self.known.get(&meta.path), Some((known, _)) if known == *meta),
            )
            .cloned()
            .collect();
        let fresh = extract_all(&walk::read(root, &changed));
        let mut known = std::mem::take(&mut self.known);
        for (meta, file) in changed.into_iter().zip(fresh) {
            known.insert(meta.path.clone(), (meta, file.symbols));
        }
        // Forget the files that are gone.
        let mut mapped = Vec::with_capacity(files.len());
        for meta in files {
            if let Some((meta, symbols)) = known.remove(&meta.path) {
                mapped.push(MappedFile {
                    path: meta.path.clone(),
                    symbols: symbols.clone(),
                });
                self.known.insert(meta.path.clone(), (meta, symbols));
            }
        }
        build_near(&mapped, mentioned, &self.near, budget, counter)
    }
}

/// Walks `root` ([`walk::scan`], leaving out what `skip` says), reads the files
/// ([`walk::read`]) and [`build`]s their map, the files that `mentioned_text` names
/// ([`mentioned`](crate::mentioned)) first.
pub fn map_directory<F>(
    root: &Path,
    skip: F,
    mentioned_text: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> RepoMap
where
    F: Fn(&Path) -> bool + Send + Sync + 'static,
{
    let files = scan(root, skip);
    let mentioned: Vec<String> =
        mention::mentioned(mentioned_text, files.iter().map(|f| f.path.as_str()))
            .into_iter()
            .collect();
    let sources = walk::read(root, &files);
    build(&sources, &mentioned, budget, counter)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::walk::read;
    use crate::walk::tests::project;

    #[test]
    fn map_directory_puts_the_mentioned_file_first() {
        let dir = project();
        let counter = ybs_context_budget::CharsPerToken::default();
        let map = map_directory(dir.path(), |_| false, "look at src/util.py", 500, &counter);
        assert_eq!(
            map.text,
            "src/util.py:\n  def f()\n.gitignore\nREADME.md\nsrc/main.rs:\n  fn main()\n"
        );
        assert_eq!((map.files_total, map.files_shown), (4, 4));
        let off = map_directory(dir.path(), |_| false, "", 0, &counter);
        assert!(off.text.is_empty());
    }

    #[test]
    fn a_small_budget_names_the_used_definitions_of_many_files_not_all_of_a_few() {
        // 60 files of 25 functions each; every file uses one function of the next file.
        let files: Vec<SourceFile> = (0..60)
            .map(|i| {
                let mut text = format!(
                    "fn entry_point_{i}() {{ entry_point_{}(); }}\n",
                    (i + 1) % 60
                );
                for j in 0..24 {
                    text.push_str(&format!(
                        "fn helper_number_{i}_{j}(value: u64) -> u64 {{ value }}\n"
                    ));
                }
                SourceFile::new(format!("src/m{i:02}.rs"), text)
            })
            .collect();
        let counter = ybs_context_budget::CharsPerToken::default();
        let map = build(&files, &[], 1024, &counter);
        assert!(map.tokens <= 1024);
        // Each file's used function costs about 10 tokens, a whole file about 250: every
        // file is named with its used function, and what is left of the budget goes to the
        // other functions.
        assert_eq!(map.files_shown, 60, "{}", map.text);
        assert!(
            map.text.contains("src/m17.rs:\n  fn entry_point_17()\n"),
            "{}",
            map.text
        );
        assert!(!map.text.contains("helper_number_17_"), "{}", map.text);
    }

    #[test]
    fn started_in_a_small_folder_the_map_keeps_a_share_for_the_rest_of_the_repository() {
        // Three files of 30 definitions each in `tool/`, used by nothing; 40 files elsewhere,
        // each used by the next.
        let mut files: Vec<SourceFile> = (0..3)
            .map(|i| {
                let text: String = (0..30)
                    .map(|j| format!("fn tool_function_{i}_{j}(value: u64) -> u64 {{ value }}\n"))
                    .collect();
                SourceFile::new(format!("tool/t{i}.rs"), text)
            })
            .collect();
        files.extend((0..40).map(|i| {
            SourceFile::new(
                format!("src/m{i:02}.rs"),
                format!("fn entry_{i}() {{ entry_{}(); }}\n", (i + 1) % 40),
            )
        }));
        let counter = ybs_context_budget::CharsPerToken::default();
        let mapped = extract_all(&files);
        let outside = |text: &str| text.lines().filter(|line| line.starts_with("../")).count();
        // Before: the near files' entries first, whole, until the budget ends.
        let order = rank(&mapped, &BTreeSet::new(), "tool");
        let unshared = fit(&mapped, &entries(&mapped, &order), "tool", 512, &counter);
        let shared = build_near(&mapped, &[], "tool", 512, &counter);
        println!(
            "files outside tool/ named at 512 tokens: {} before, {} after; tokens {} and {}",
            outside(&unshared.text),
            outside(&shared.text),
            unshared.tokens,
            shared.tokens
        );
        assert!(shared.tokens <= 512);
        assert!(outside(&shared.text) >= 20, "{}", shared.text);
        assert!(outside(&unshared.text) < outside(&shared.text));
        // The folder's files still come first.
        assert!(
            shared.text.starts_with("t0.rs:\n  fn tool_function_0_0"),
            "{}",
            shared.text
        );
        // Without a folder, or with a budget that holds everything, nothing changes.
        let all = build_near(&mapped, &[], "tool", 100_000, &counter);
        let whole = fit(
            &mapped,
            &entries(&mapped, &order),
            "tool",
            100_000,
            &counter,
        );
        assert_eq!(all.text, whole.text);
    }

    #[test]
    fn a_mapper_reparses_changed_files_and_forgets_removed_ones() {
        let dir = project();
        let counter = ybs_context_budget::CharsPerToken::default();
        let mut mapper = Mapper::new();
        let map = |mapper: &mut Mapper| {
            let files = scan(dir.path(), |_| false);
            mapper.map(dir.path(), &files, &[], 500, &counter).text
        };
        let first = map(&mut mapper);
        let sources = read(dir.path(), &scan(dir.path(), |_| false));
        assert_eq!(first, build(&sources, &[], 500, &counter).text);
        assert_eq!(map(&mut mapper), first);
        fs::write(
            dir.path().join("src/main.rs"),
            "fn main() {}
fn second() {}
",
        )
        .unwrap();
        fs::remove_file(dir.path().join("src/util.py")).unwrap();
        let second = map(&mut mapper);
        assert!(
            second.contains("src/main.rs:\n  fn main()\n  fn second()\n"),
            "{second}"
        );
        assert!(!second.contains("util.py"), "{second}");
        assert_eq!(mapper.known.len(), 3);
    }
}
