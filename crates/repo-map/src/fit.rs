//! Fitting the ranked files into a token budget, highest-ranked first.
//!
//! Each file is a block: its path, then one line per definition. A block that does not fit
//! whole keeps as many of its first definitions as fit (with a count of the rest), or only
//! its path; the first file whose path alone does not fit ends the map, and a last line says
//! how many files were left out. The text is counted once more at the end and shortened
//! until it fits, so the result is never over the budget whatever the counter.

use ybs_context_budget::TokenCounter;

/// One file of the map, in rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// The file's path.
    pub path: &'a str,
    /// Its definitions, each already indented.
    pub lines: Vec<String>,
}

impl Block<'_> {
    /// The block with its first `shown` definitions.
    fn render(&self, shown: usize) -> String {
        if shown == 0 || self.lines.is_empty() {
            return format!("{}\n", self.path);
        }
        let mut text = format!("{}:\n", self.path);
        for line in &self.lines[..shown] {
            text.push_str(line);
            text.push('\n');
        }
        let hidden = self.lines.len() - shown;
        if hidden > 0 {
            text.push_str(&format!("  … {hidden} more\n"));
        }
        text
    }
}

/// What [`fit`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fitted {
    /// The map's text; empty when not even the first path fits.
    pub text: String,
    /// Its size as the counter counts it (at most the budget).
    pub tokens: usize,
    /// How many files it shows (by name at least).
    pub files_shown: usize,
}

/// The blocks, in order, that fit in `budget` tokens as `counter` counts them.
pub fn fit(blocks: &[Block], budget: usize, counter: &dyn TokenCounter) -> Fitted {
    if budget == 0 || blocks.is_empty() {
        return Fitted::default();
    }
    let full: Vec<String> = blocks.iter().map(|b| b.render(b.lines.len())).collect();
    let whole = full.concat();
    let tokens = counter.count(&whole);
    if tokens <= budget {
        return Fitted {
            text: whole,
            tokens,
            files_shown: blocks.len(),
        };
    }
    // Room is kept for the last line saying how many files are left out.
    let reserve = counter.count(&omitted(blocks.len())).min(budget);
    let mut left = budget - reserve;
    let mut pieces: Vec<String> = Vec::new();
    for (block, text) in blocks.iter().zip(full) {
        let cost = counter.count(&text);
        if cost <= left {
            left -= cost;
            pieces.push(text);
            continue;
        }
        match largest_prefix(block, left, counter) {
            Some((text, cost)) => {
                left -= cost;
                pieces.push(text);
            }
            None => break,
        }
    }
    // Counts of pieces need not add up exactly (a BPE may merge across them): check the
    // whole and drop files from the end until it fits.
    loop {
        let mut text = pieces.concat();
        if pieces.len() < blocks.len() {
            text.push_str(&omitted(blocks.len() - pieces.len()));
        }
        let tokens = counter.count(&text);
        if tokens <= budget {
            return Fitted {
                text,
                tokens,
                files_shown: pieces.len(),
            };
        }
        if pieces.pop().is_none() {
            return Fitted::default();
        }
    }
}

/// The block with the most definitions that costs at most `left`: `(text, cost)`, or `None`
/// when not even its path fits.
fn largest_prefix(
    block: &Block,
    left: usize,
    counter: &dyn TokenCounter,
) -> Option<(String, usize)> {
    let cost_of = |shown: usize| {
        let text = block.render(shown);
        let cost = counter.count(&text);
        (text, cost)
    };
    let (mut best, cost) = cost_of(0);
    if cost > left {
        return None;
    }
    let mut best_cost = cost;
    // The cost grows with the number of lines shown: search for the last count that fits.
    let (mut low, mut high) = (1usize, block.lines.len().saturating_sub(1));
    while low <= high {
        let middle = low + (high - low) / 2;
        let (text, cost) = cost_of(middle);
        if cost <= left {
            best = text;
            best_cost = cost;
            low = middle + 1;
        } else {
            high = middle - 1;
        }
    }
    Some((best, best_cost))
}

/// The last line of a map that leaves files out.
fn omitted(count: usize) -> String {
    format!("… {count} more files not shown\n")
}

#[cfg(test)]
mod tests;
