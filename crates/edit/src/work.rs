//! Bounded matching: a run of quoted lines is found in a file in linear time, and the work a
//! response's edits take is counted against a limit.
//!
//! The line-based passes compare each file line with the quoted lines after normalising both
//! (trimmed, say). Comparing every window line by line costs N x k comparisons (a 40,000-line
//! file and a 20,000-line `old_string` that almost matches everywhere: 800 million), so
//! instead every normalised line is given a number once (hashing each byte once) and the
//! numbers are searched with Knuth-Morris-Pratt: at most 2 (N + k) comparisons. The work is
//! counted in *steps* (one per byte hashed or searched, one per comparison), which the tests
//! read, and a [`MatchWork`] refuses further edits once a response has used its limit.

use std::collections::HashMap;

/// How much matching work one response's edits may take, in steps (about a second of work):
/// far more than an ordinary response needs (an edit of a 1 MB file takes about 5 million,
/// the copy and hashes of its base included), far less than what an adversarial one would
/// make the daemon do.
pub const DEFAULT_WORK_LIMIT: u64 = 1 << 30;

/// The steps a line costs beyond its bytes (splitting it out, hashing, a table lookup): a
/// file of millions of empty lines has few bytes but costs per line, and charging bytes
/// alone let such a file take seventeen times the budget's second.
pub(crate) const LINE_STEPS: usize = 16;

/// The matching work done so far, and the limit past which no further edit is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchWork {
    steps: u64,
    limit: u64,
}

impl Default for MatchWork {
    fn default() -> Self {
        MatchWork::new(DEFAULT_WORK_LIMIT)
    }
}

impl MatchWork {
    /// No work done yet; edits stop being started once `limit` steps are used.
    pub fn new(limit: u64) -> Self {
        MatchWork { steps: 0, limit }
    }

    /// The steps used so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the limit is used up: no further edit may start.
    pub fn exhausted(&self) -> bool {
        self.steps >= self.limit
    }

    /// Counts `steps` more.
    pub(crate) fn charge(&mut self, steps: usize) {
        self.steps = self.steps.saturating_add(steps as u64);
    }

    /// The error text of an edit refused because the limit is used up.
    pub fn exhausted_message(&self) -> String {
        format!(
            "edit matching stopped: this response's edits need more than {} steps of matching \
             work (the limit); send fewer or smaller edits, or write_file the whole file",
            self.limit
        )
    }
}

/// No pattern line has this number.
const NONE: u32 = u32::MAX;

/// Numbers the normalised `pattern` lines (equal lines share a number) and gives each
/// normalised file line the number of the pattern line it equals, or [`NONE`]. Each byte is
/// hashed once; `work` counts them.
pub(crate) fn number_lines(
    file: &[&str],
    pattern: &[&str],
    norm: fn(&str) -> &str,
    work: &mut MatchWork,
) -> (Vec<u32>, Vec<u32>) {
    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(pattern.len());
    let mut numbered = Vec::with_capacity(pattern.len());
    for line in pattern {
        let key = norm(line);
        work.charge(key.len() + LINE_STEPS);
        let next = u32::try_from(ids.len()).unwrap_or(NONE - 1);
        numbered.push(*ids.entry(key).or_insert(next));
    }
    let hay = file
        .iter()
        .map(|line| {
            let key = norm(line);
            work.charge(key.len() + LINE_STEPS);
            ids.get(key).copied().unwrap_or(NONE)
        })
        .collect();
    (hay, numbered)
}

/// Every start `i` (ascending, overlapping ones included) where `hay[i..i + needle.len()]`
/// equals `needle`, by Knuth-Morris-Pratt: at most 2 (hay + needle) comparisons, each counted
/// in `work`. An empty needle occurs at every position.
pub(crate) fn occurrences(hay: &[u32], needle: &[u32], work: &mut MatchWork) -> Vec<usize> {
    let k = needle.len();
    if k == 0 {
        return (0..=hay.len()).collect();
    }
    if k > hay.len() {
        return Vec::new();
    }
    // `fail[j]`: the length of the longest proper border of `needle[..=j]`.
    let mut fail = vec![0usize; k];
    let mut b = 0;
    for j in 1..k {
        while b > 0 && needle[j] != needle[b] {
            work.charge(1);
            b = fail[b - 1];
        }
        work.charge(1);
        if needle[j] == needle[b] {
            b += 1;
        }
        fail[j] = b;
    }
    let mut out = Vec::new();
    let mut j = 0;
    for (i, &line) in hay.iter().enumerate() {
        while j > 0 && line != needle[j] {
            work.charge(1);
            j = fail[j - 1];
        }
        work.charge(1);
        if line == needle[j] {
            j += 1;
        }
        if j == k {
            out.push(i + 1 - k);
            j = fail[j - 1];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(hay: &[u32], needle: &[u32]) -> Vec<usize> {
        (0..=hay.len().saturating_sub(needle.len()))
            .filter(|&i| hay.len() >= needle.len() && hay[i..i + needle.len()] == *needle)
            .collect()
    }

    #[test]
    fn finds_what_the_naive_search_finds() {
        let cases: [(&[u32], &[u32]); 6] = [
            (&[1, 1, 1, 1], &[1, 1]),
            (&[1, 2, 1, 2, 1], &[1, 2, 1]),
            (&[0, 1, 0, 0, 1, 0, 1], &[0, 1, 0]),
            (&[5, 5, 5], &[5, 5, 5, 5]),
            (&[1, 2, 3], &[3]),
            (&[1, 1, 2, 1, 1, 1, 2], &[1, 1, 2]),
        ];
        for (hay, needle) in cases {
            let mut work = MatchWork::default();
            assert_eq!(occurrences(hay, needle, &mut work), naive(hay, needle));
        }
    }

    #[test]
    fn comparisons_stay_linear_on_the_worst_shape() {
        // 40,000 equal lines and a 20,000-line needle that differs only at its end.
        let hay = vec![0u32; 40_000];
        let mut needle = vec![0u32; 20_000];
        needle.push(1);
        let mut work = MatchWork::default();
        assert!(occurrences(&hay, &needle, &mut work).is_empty());
        assert!(work.steps() <= 2 * (40_000 + 20_001), "{}", work.steps());
    }

    #[test]
    fn equal_lines_share_a_number() {
        let mut work = MatchWork::default();
        let (hay, pattern) = number_lines(&[" a", "b", "c "], &["a ", "c"], str::trim, &mut work);
        assert_eq!(pattern, vec![0, 1]);
        assert_eq!(hay, vec![0, NONE, 1]);
        // Five one-byte lines, each charged its byte and a line's fixed cost.
        assert_eq!(work.steps(), 5 * (1 + LINE_STEPS as u64));
    }
}
