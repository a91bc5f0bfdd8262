//! Which files a conversation mentions: their path (relative, or at the end of a longer
//! path) or their file name when no other file has that name.

use std::collections::{BTreeSet, HashMap, HashSet};

/// The paths of `paths` that `text` mentions, sorted.
///
/// A path counts when it appears whole as a word (`src/lib.rs`, `./src/lib.rs`,
/// `/home/me/project/src/lib.rs`); a file name with an extension (`lib.rs`) counts when it
/// names exactly one file, so that `mod.rs` or `index.ts` in a big project names nothing.
pub fn mentioned<'a>(text: &str, paths: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let mut words: HashSet<&str> = HashSet::new();
    for word in text.split(|c: char| !is_path_char(c)) {
        let word = word.trim_end_matches('.').trim_start_matches("./");
        if word.is_empty() {
            continue;
        }
        words.insert(word);
        // Every tail after a `/`, so an absolute or longer path names the relative one.
        for (at, _) in word.match_indices('/') {
            words.insert(&word[at + 1..]);
        }
    }
    let paths: Vec<&str> = paths.into_iter().collect();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for path in &paths {
        *by_name.entry(file_name(path)).or_default() += 1;
    }
    (paths.iter())
        .filter(|path| {
            let name = file_name(path);
            words.contains(*path)
                || (by_name.get(name) == Some(&1) && has_extension(name) && words.contains(name))
        })
        .map(|path| (*path).to_owned())
        .collect()
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn has_extension(name: &str) -> bool {
    name.trim_start_matches('.').contains('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: [&str; 5] = [
        "src/lib.rs",
        "src/a/mod.rs",
        "src/b/mod.rs",
        "Makefile",
        "docs/guide.md",
    ];

    fn of(text: &str) -> Vec<String> {
        mentioned(text, FILES).into_iter().collect()
    }

    #[test]
    fn whole_paths_relative_or_absolute_are_mentions() {
        assert_eq!(of("look at src/lib.rs."), ["src/lib.rs"]);
        assert_eq!(of("open ./src/a/mod.rs"), ["src/a/mod.rs"]);
        assert_eq!(
            of("{\"path\":\"/home/me/p/src/b/mod.rs\"}"),
            ["src/b/mod.rs"]
        );
        assert_eq!(of("see Makefile"), ["Makefile"]);
    }

    #[test]
    fn a_unique_file_name_is_a_mention_and_a_shared_one_is_not() {
        assert_eq!(of("the guide.md says"), ["docs/guide.md"]);
        assert!(of("fix mod.rs").is_empty());
        assert!(of("src/lib.rsx and mylib.rs and library").is_empty());
    }
}
