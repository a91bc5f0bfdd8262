//! Ranking files: the ones the conversation mentions, then the ones whose definitions other
//! files reference (PageRank over the reference graph), then the rest by path.
//!
//! The graph has an edge from file A to file B for each name A uses that B defines, weighted
//! by one over the number of files defining that name, so that a common name (`new`, `run`)
//! defined everywhere says little about any one of them. A name defined in more than
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

/// Why a file is where it is in the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// The conversation names the file.
    Mentioned,
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
/// paths as in [`MappedFile::path`]. The order is a pure function of the input.
pub fn rank(files: &[MappedFile], mentioned: &BTreeSet<String>) -> Vec<Ranked> {
    let edges = reference_edges(files);
    let scores = pagerank(files.len(), &edges);
    let mut referrers = vec![0usize; files.len()];
    for &(_, to, _) in &edges {
        referrers[to] += 1;
    }
    let mut ranked: Vec<Ranked> = (0..files.len())
        .map(|index| Ranked {
            index,
            tier: if mentioned.contains(&files[index].path) {
                Tier::Mentioned
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

/// `(from, to, weight)` for each pair of distinct files where `from` uses a name `to`
/// defines, sorted by `(from, to)`; one edge per pair, its weight summed over the names.
pub fn reference_edges(files: &[MappedFile]) -> Vec<(usize, usize, f64)> {
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, file) in files.iter().enumerate() {
        for definition in &file.symbols.definitions {
            let list = definers.entry(definition.name.as_str()).or_default();
            if list.last() != Some(&index) {
                list.push(index);
            }
        }
    }
    let mut edges = Vec::new();
    let mut weights: HashMap<usize, f64> = HashMap::new();
    for (from, file) in files.iter().enumerate() {
        weights.clear();
        for name in &file.symbols.references {
            let Some(targets) = definers.get(name.as_str()) else {
                continue;
            };
            if targets.len() > MAX_DEFINERS {
                continue;
            }
            let weight = 1.0 / targets.len() as f64;
            for &to in targets.iter().filter(|&&to| to != from) {
                *weights.entry(to).or_insert(0.0) += weight;
            }
        }
        let start = edges.len();
        edges.extend(weights.iter().map(|(&to, &weight)| (from, to, weight)));
        edges[start..].sort_by_key(|edge| edge.1);
    }
    edges
}

/// The PageRank of `n` nodes over weighted `edges`; a node without outgoing edges spreads
/// its rank evenly.
pub fn pagerank(n: usize, edges: &[(usize, usize, f64)]) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let mut out_weight = vec![0.0f64; n];
    for &(from, _, weight) in edges {
        out_weight[from] += weight;
    }
    let uniform = 1.0 / n as f64;
    let mut rank = vec![uniform; n];
    let mut next = vec![0.0f64; n];
    for _ in 0..MAX_ITERATIONS {
        let dangling: f64 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        let base = (1.0 - DAMPING) * uniform + DAMPING * dangling * uniform;
        next.iter_mut().for_each(|value| *value = base);
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
