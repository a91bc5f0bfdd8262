//! The map's entries in the order they are worth their tokens: definitions rather than whole
//! files, so that a small budget names the most used definitions of many files instead of
//! every definition of a few.
//!
//! Per tier of [`rank`](crate::rank::rank) (mentioned files, then files near the working
//! directory, then the rest): the files of the mentioned tier whole; in the other tiers first
//! the definitions other files use, most used first ([`definition_scores`]), then the names
//! of the files not named yet, by file rank, then the definitions nobody else uses.

use std::collections::HashMap;

use crate::rank::{Ranked, Tier, definition_scores};
use crate::source::MappedFile;

/// One step of the map: a file's definitions of one name (a type and its `impl`, say), or
/// the file's name alone when `definitions` is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file's index in the input.
    pub file: usize,
    /// Indexes into its definitions, in source order.
    pub definitions: Vec<usize>,
}

/// At most this many definitions of one name make one used entry (a type and its first
/// `impl`); further ones (the type's trait `impl`s) wait with the unused definitions.
const GROUP_LINES: usize = 2;

/// The entries of `files` in map order; `ranked` is their [`rank`](crate::rank::rank).
pub fn entries(files: &[MappedFile], ranked: &[Ranked]) -> Vec<Entry> {
    let mut ranks = vec![0.0; files.len()];
    let mut position = vec![0usize; files.len()];
    for (at, r) in ranked.iter().enumerate() {
        ranks[r.index] = r.score;
        position[r.index] = at;
    }
    let scores = definition_scores(files, &ranks);
    let mut out = Vec::new();
    let mut start = 0;
    while start < ranked.len() {
        let tier = group_tier(ranked[start].tier);
        let end = (start..ranked.len())
            .find(|&at| group_tier(ranked[at].tier) != tier)
            .unwrap_or(ranked.len());
        let tier_files: Vec<usize> = ranked[start..end].iter().map(|r| r.index).collect();
        if tier == Tier::Mentioned {
            for &file in &tier_files {
                push_whole(&mut out, files, file);
            }
        } else {
            push_tier(&mut out, files, &tier_files, &scores, &position);
        }
        start = end;
    }
    out
}

/// The tiers the entries are grouped by: referenced and other files are one group (the
/// definition scores order them).
fn group_tier(tier: Tier) -> Tier {
    match tier {
        Tier::Referenced | Tier::Other => Tier::Referenced,
        tier => tier,
    }
}

/// A file's definitions grouped by name, in order of each name's first definition.
fn groups(file: &MappedFile) -> Vec<(&str, Vec<usize>)> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (index, definition) in file.symbols.definitions.iter().enumerate() {
        let name = definition.name.as_str();
        match at.get(name) {
            Some(&group) => groups[group].1.push(index),
            None => {
                at.insert(name, groups.len());
                groups.push((name, vec![index]));
            }
        }
    }
    groups
}

fn push_whole(out: &mut Vec<Entry>, files: &[MappedFile], file: usize) {
    let groups = groups(&files[file]);
    if groups.is_empty() {
        out.push(Entry {
            file,
            definitions: Vec::new(),
        });
    }
    for (_, definitions) in groups {
        out.push(Entry { file, definitions });
    }
}

fn push_tier(
    out: &mut Vec<Entry>,
    files: &[MappedFile],
    tier_files: &[usize],
    scores: &[HashMap<&str, f64>],
    position: &[usize],
) {
    // (score, the file's place in the rank, the file, its definitions of the name)
    let mut used: Vec<(f64, usize, usize, Vec<usize>)> = Vec::new();
    let mut unused: Vec<Entry> = Vec::new();
    for &file in tier_files {
        for (name, definitions) in groups(&files[file]) {
            match scores[file].get(name) {
                Some(&score) if score > 0.0 => {
                    let rest = definitions.get(GROUP_LINES..).unwrap_or_default().to_vec();
                    let first = definitions[..definitions.len().min(GROUP_LINES)].to_vec();
                    used.push((score, position[file], file, first));
                    if !rest.is_empty() {
                        unused.push(Entry {
                            file,
                            definitions: rest,
                        });
                    }
                }
                _ => unused.push(Entry { file, definitions }),
            }
        }
    }
    used.sort_by(|a, b| {
        (b.0.total_cmp(&a.0))
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| a.3.cmp(&b.3))
    });
    let mut named = vec![false; files.len()];
    for (_, _, file, definitions) in used {
        named[file] = true;
        out.push(Entry { file, definitions });
    }
    for &file in tier_files.iter().filter(|&&file| !named[file]) {
        out.push(Entry {
            file,
            definitions: Vec::new(),
        });
    }
    out.extend(unused);
}

#[cfg(test)]
mod tests;
