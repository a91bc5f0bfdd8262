//! Fitting the map into a token budget: the longest run of [`Entry`]s, from the first, whose
//! text fits.
//!
//! The text names each file of the chosen entries once, in the order of its first entry,
//! with the chosen definitions in source order (a method brings the line of its `impl` or
//! class along); a last line says how many files were left out. Paths are written relative
//! to the folder the session started in ([`display_path`]). The whole text is counted, so
//! the result is never over the budget whatever the counter.

use std::collections::{BTreeSet, HashMap};

use ybs_context_budget::TokenCounter;

use crate::entries::Entry;
use crate::source::MappedFile;

/// What [`fit`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fitted {
    /// The map's text; empty when not even the first entry fits.
    pub text: String,
    /// Its size as the counter counts it (at most the budget).
    pub tokens: usize,
    /// How many files it shows (by name at least).
    pub files_shown: usize,
}

/// The longest prefix of `entries` (over `files`) whose text fits in `budget` tokens as
/// `counter` counts them, paths written relative to the folder `near` (empty: the root).
pub fn fit(
    files: &[MappedFile],
    entries: &[Entry],
    near: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> Fitted {
    let count = fitting(files, entries, near, budget, counter);
    if count == 0 {
        return Fitted::default();
    }
    let (text, files_shown) = render(files, &entries[..count], near, files.len());
    let tokens = counter.count(&text);
    Fitted {
        text,
        tokens,
        files_shown,
    }
}

/// How many of `entries`, from the first, [`fit`] keeps in `budget`.
pub fn fitting(
    files: &[MappedFile],
    entries: &[Entry],
    near: &str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> usize {
    if budget == 0 || entries.is_empty() {
        return 0;
    }
    let total = files.len();
    let fits = |count: usize| {
        let (text, _) = render(files, &entries[..count], near, total);
        counter.count(&text) <= budget
    };
    if fits(entries.len()) {
        return entries.len();
    }
    // The text grows with the entries it holds: the last count that fits, by bisection.
    let (mut best, mut low, mut high) = (0, 1usize, entries.len() - 1);
    while low <= high {
        let middle = low + (high - low) / 2;
        if fits(middle) {
            best = middle;
            low = middle + 1;
        } else {
            high = middle - 1;
        }
    }
    best
}

/// The text of `entries` and how many files it names; `total` files in all.
fn render(files: &[MappedFile], entries: &[Entry], near: &str, total: usize) -> (String, usize) {
    let mut order: Vec<usize> = Vec::new();
    let mut chosen: HashMap<usize, BTreeSet<usize>> = HashMap::new();
    for entry in entries {
        let lines = chosen.entry(entry.file).or_insert_with(|| {
            order.push(entry.file);
            BTreeSet::new()
        });
        let definitions = &files[entry.file].symbols.definitions;
        for &index in &entry.definitions {
            lines.insert(index);
            // The enclosing definitions, for a member: its `impl`, class or module.
            let mut depth = definitions.get(index).map_or(0, |d| d.depth);
            for outer in (0..index).rev() {
                if depth == 0 {
                    break;
                }
                if definitions[outer].depth < depth {
                    depth = definitions[outer].depth;
                    lines.insert(outer);
                }
            }
        }
    }
    let mut text = String::new();
    for file in &order {
        let path = display_path(&files[*file].path, near);
        let lines = &chosen[file];
        if lines.is_empty() {
            text.push_str(&format!("{path}\n"));
            continue;
        }
        text.push_str(&format!("{path}:\n"));
        for &index in lines {
            let definition = &files[*file].symbols.definitions[index];
            text.push_str(&"  ".repeat(definition.depth + 1));
            text.push_str(&definition.signature);
            text.push('\n');
        }
    }
    if order.len() < total {
        text.push_str(&format!("… {} more files not shown\n", total - order.len()));
    }
    (text, order.len())
}

/// `path` (relative to the root) as seen from the folder `near` of the root: `src/lib.rs` for
/// `app/src/lib.rs` seen from `app`, `../lib/core.rs` for `lib/core.rs`.
pub fn display_path(path: &str, near: &str) -> String {
    let near = near.trim_matches('/');
    if near.is_empty() {
        return path.to_owned();
    }
    if let Some(inside) = path
        .strip_prefix(near)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        return inside.to_owned();
    }
    format!("{}{path}", "../".repeat(near.split('/').count()))
}

#[cfg(test)]
mod tests;
