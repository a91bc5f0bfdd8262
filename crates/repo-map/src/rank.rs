//! Ranking files: the ones the conversation mentions, then the ones under the folder the
//! session started in, then the ones whose definitions other files reference (PageRank over
//! the reference graph), then the rest by path. The PageRank restarts more often at the
//! mentioned and near files, so what they use ranks higher too; [`definition_scores`] hands
//! each file's rank on to the definitions it uses, which is how the map picks definitions
//! rather than whole files.
//!
//! The graph has an edge from file A to file B for each name A uses that B defines, weighted
//! by one over the number of files defining that name, so that a common name (`new`, `run`)
//! defined everywhere says little about any one of them, and by how specific the name is
//! (`spawn_blocking` more than `io`). A name defined in more than
//! [`MAX_DEFINERS`] files says nothing and is left out: it would add an edge from every file
//! using it to every file defining it, quadratic in a large project.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use crate::source::MappedFile;

/// A name defined in more files than this adds no edge.
pub const MAX_DEFINERS: usize = 16;

/// PageRank's damping factor: the chance of following a reference rather than jumping.
const DAMPING: f64 = 0.85;

/// Iterations at most; the ranks of a few thousand files settle in far fewer.
const MAX_ITERATIONS: usize = 60;

/// The iteration stops when the ranks move less than this in total.
const TOLERANCE: f64 = 1e-10;

/// How much more often the PageRank restarts at a mentioned or near file than at another.
const FOCUS_RESTART: f64 = 20.0;

/// Why a file is where it is in the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// The conversation names the file.
    Mentioned,
    /// The file is under the folder the session started in.
    Near,
    /// Other files use names the file defines.
    Referenced,
    /// Nothing points at the file.
    Other,
}

/// A file's place in the map.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// Its index in the input.
    pub index: usize,
    /// Its tier (the first sort key).
    pub tier: Tier,
    /// Its PageRank (the second sort key, higher first); the ranks sum to 1.
    pub score: f64,
    /// How many other files reference one of its definitions.
    pub referrers: usize,
}

/// The files in map order: by tier, then score (highest first), then path. `mentioned` holds
/// paths as in [`MappedFile::path`]; `near` is a folder as a path prefix (`src/net`, empty for
/// none) whose files come right after the mentioned ones. The order is a pure function of the
/// input.
pub fn rank(files: &[MappedFile], mentioned: &BTreeSet<String>, near: &str) -> Vec<Ranked> {
    let edges = reference_edges(files);
    let near = near.trim_matches('/');
    let is_near = |path: &str| {
        !near.is_empty()
            && path
                .strip_prefix(near)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let restart: Vec<f64> = (files.iter())
        .map(|file| {
            if mentioned.contains(&file.path) || is_near(&file.path) {
                FOCUS_RESTART
            } else {
                1.0
            }
        })
        .collect();
    let scores = pagerank_from(&edges, &restart);
    let mut referrers = vec![0usize; files.len()];
    for &(_, to, _) in &edges {
        referrers[to] += 1;
    }
    let mut ranked: Vec<Ranked> = (0..files.len())
        .map(|index| Ranked {
            index,
            tier: if mentioned.contains(&files[index].path) {
                Tier::Mentioned
            } else if is_near(&files[index].path) {
                Tier::Near
            } else if referrers[index] > 0 {
                Tier::Referenced
            } else {
                Tier::Other
            },
            score: scores[index],
            referrers: referrers[index],
        })
        .collect();
    ranked.sort_by(|a, b| {
        (a.tier.cmp(&b.tier))
            .then_with(|| b.score.total_cmp(&a.score))
            .then_with(|| b.referrers.cmp(&a.referrers))
            .then_with(|| files[a.index].path.cmp(&files[b.index].path))
    });
    ranked
}

/// Which files define each name (each file once, in file order).
fn definers(files: &[MappedFile]) -> HashMap<&str, Vec<usize>> {
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, file) in files.iter().enumerate() {
        for definition in &file.symbols.definitions {
            let list = definers.entry(definition.name.as_str()).or_default();
            if list.last() != Some(&index) {
                list.push(index);
            }
        }
    }
    definers
}

/// How much a use of `name` says about its definitions: a long name made of words
/// (`spawn_blocking`, `JoinHandle`) says much, a short one (`io`, `std`, `_`) or a private one
/// (`_inner`) little.
fn specificity(name: &str) -> f64 {
    let words = name.contains('_') || name.chars().skip(1).any(|c| c.is_ascii_uppercase());
    if name.starts_with('_') || name.chars().count() <= 3 {
        0.1
    } else if words && name.chars().count() >= 8 {
        4.0
    } else {
        1.0
    }
}

/// Calls `use_of(from, to, name, weight)` for each name a file uses that another file defines
/// (not more than [`MAX_DEFINERS`] of them), the weight being the name's [`specificity`] over
/// the number of definers.
fn for_each_use<'a>(
    files: &'a [MappedFile],
    definers: &HashMap<&str, Vec<usize>>,
    mut use_of: impl FnMut(usize, usize, &'a str, f64),
) {
    for (from, file) in files.iter().enumerate() {
        for name in &file.symbols.references {
            let Some(targets) = definers.get(name.as_str()) else {
                continue;
            };
            if targets.len() > MAX_DEFINERS {
                continue;
            }
            let weight = specificity(name) / targets.len() as f64;
            for &to in targets.iter().filter(|&&to| to != from) {
                use_of(from, to, name, weight);
            }
        }
    }
}

/// `(from, to, weight)` for each pair of distinct files where `from` uses a name `to`
/// defines, sorted by `(from, to)`; one edge per pair, its weight summed over the names.
pub fn reference_edges(files: &[MappedFile]) -> Vec<(usize, usize, f64)> {
    let definers = definers(files);
    let mut per_file: Vec<HashMap<usize, f64>> = vec![HashMap::new(); files.len()];
    for_each_use(files, &definers, |from, to, _, weight| {
        *per_file[from].entry(to).or_insert(0.0) += weight;
    });
    let mut edges = Vec::new();
    for (from, weights) in per_file.iter().enumerate() {
        let start = edges.len();
        edges.extend(weights.iter().map(|(&to, &weight)| (from, to, weight)));
        edges[start..].sort_by_key(|edge| edge.1);
    }
    edges
}

/// How much each file's definitions of each name are used: `scores[file][name]`, the rank of
/// every file using the name handed on in proportion to the weight of that use among all of
/// the user's uses (the share PageRank sends along its edges). Names nobody else uses are
/// absent.
pub fn definition_scores<'a>(files: &'a [MappedFile], ranks: &[f64]) -> Vec<HashMap<&'a str, f64>> {
    let definers = definers(files);
    let mut out_weight = vec![0.0f64; files.len()];
    for_each_use(files, &definers, |from, _, _, weight| {
        out_weight[from] += weight;
    });
    let mut scores: Vec<HashMap<&str, f64>> = vec![HashMap::new(); files.len()];
    for_each_use(files, &definers, |from, to, name, weight| {
        let share = ranks.get(from).copied().unwrap_or(0.0) * weight / out_weight[from];
        *scores[to].entry(name).or_insert(0.0) += share;
    });
    scores
}

/// The PageRank of `n` nodes over weighted `edges`; a node without outgoing edges spreads
/// its rank evenly.
pub fn pagerank(n: usize, edges: &[(usize, usize, f64)]) -> Vec<f64> {
    pagerank_from(edges, &vec![1.0; n])
}

/// The PageRank over weighted `edges` of as many nodes as `restart` has, where a jump (and
/// the rank of a node without outgoing edges) lands on each node in proportion to its
/// `restart` weight (personalized PageRank).
pub fn pagerank_from(edges: &[(usize, usize, f64)], restart: &[f64]) -> Vec<f64> {
    let n = restart.len();
    let total: f64 = restart.iter().sum();
    if n == 0 || total <= 0.0 {
        return vec![0.0; n];
    }
    let jump: Vec<f64> = restart.iter().map(|weight| weight / total).collect();
    let mut out_weight = vec![0.0f64; n];
    for &(from, _, weight) in edges {
        out_weight[from] += weight;
    }
    let mut rank = jump.clone();
    let mut next = vec![0.0f64; n];
    for _ in 0..MAX_ITERATIONS {
        let dangling: f64 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        let spread = (1.0 - DAMPING) + DAMPING * dangling;
        for (value, jump) in next.iter_mut().zip(&jump) {
            *value = spread * jump;
        }
        for &(from, to, weight) in edges {
            next[to] += DAMPING * rank[from] * weight / out_weight[from];
        }
        let moved: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut rank, &mut next);
        if moved.partial_cmp(&TOLERANCE) != Some(Ordering::Greater) {
            break;
        }
    }
    rank
}

#[cfg(test)]
mod tests;
