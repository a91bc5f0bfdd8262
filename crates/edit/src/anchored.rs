//! Anchored edits (diff_mode `anchored`): regions located by a few quoted lines.

use std::fmt;

use super::search_replace::list_lines;
use super::text::{self, Line};
use super::work::{self, MatchWork};

/// The most lines a `start` or `end` anchor may have.
pub const MAX_ANCHOR_LINES: usize = 10;

/// One change of an anchored edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchoredChange {
    /// The first lines of the region (1 to [`MAX_ANCHOR_LINES`]).
    pub start: Vec<String>,
    /// The last lines of the region, searched after `start`; `None` means the region is
    /// exactly the `start` lines.
    pub end: Option<Vec<String>>,
    /// The lines that replace the region; `None` (or no lines) deletes it.
    pub content: Option<Vec<String>>,
}

/// Which anchor of a change an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The `start` lines.
    Start,
    /// The `end` lines.
    End,
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Anchor::Start => "start",
            Anchor::End => "end",
        })
    }
}

/// Why an anchored edit could not be applied. Change numbers are 0-based, as in the first
/// bb7. `Display` gives
/// the message placed after `edit_file edit <i> (...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchoredError {
    /// The call had no changes.
    NoChanges,
    /// An anchor was empty or longer than [`MAX_ANCHOR_LINES`].
    AnchorLength {
        /// The change.
        change: usize,
        /// Which anchor.
        anchor: Anchor,
        /// How many lines it had.
        lines: usize,
    },
    /// An anchor matched nowhere (for `end`: nowhere after `start`).
    NotFound {
        /// The change.
        change: usize,
        /// Which anchor.
        anchor: Anchor,
    },
    /// An anchor matched more than once.
    NotUnique {
        /// The change.
        change: usize,
        /// Which anchor.
        anchor: Anchor,
        /// The 1-based line of each match.
        lines: Vec<usize>,
    },
    /// The response's edits used up their matching work ([`MatchWork`]): this change was
    /// not looked for.
    WorkLimit {
        /// The change.
        change: usize,
        /// The limit, in steps.
        limit: u64,
    },
    /// Two changes' regions share lines.
    Overlap {
        /// The change whose region starts first in the file.
        first: usize,
        /// The change whose region starts inside `first`'s.
        second: usize,
        /// 1-based inclusive line range of `first`.
        first_lines: (usize, usize),
        /// 1-based inclusive line range of `second`.
        second_lines: (usize, usize),
    },
}

impl fmt::Display for AnchoredError {
    // In the first bb7's words, so that a model used to its errors reads ours the same way.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = |anchor: &Anchor| match anchor {
            Anchor::Start => "",
            Anchor::End => "end: ",
        };
        match self {
            AnchoredError::NoChanges => f.write_str("changes is empty: give at least one change"),
            AnchoredError::AnchorLength {
                change,
                anchor,
                lines: 0,
            } => write!(f, "change {change}: empty {anchor} anchor"),
            AnchoredError::AnchorLength {
                change,
                anchor,
                lines,
            } => write!(
                f,
                "change {change}: {anchor} anchor too long ({lines} lines, max {MAX_ANCHOR_LINES})"
            ),
            AnchoredError::NotFound { change, anchor } => {
                write!(f, "change {change}: {}anchor not found", prefix(anchor))
            }
            AnchoredError::NotUnique {
                change,
                anchor,
                lines,
            } => write!(
                f,
                "change {change}: {}anchor not unique (lines {})",
                prefix(anchor),
                list_lines(lines)
            ),
            AnchoredError::WorkLimit { change, limit } => write!(
                f,
                "change {change}: {}",
                MatchWork::new(*limit).exhausted_message()
            ),
            AnchoredError::Overlap {
                second,
                first_lines,
                second_lines,
                ..
            } => write!(
                f,
                "change {second}: regions overlap (lines {}-{} and {}-{})",
                first_lines.0, first_lines.1, second_lines.0, second_lines.1
            ),
        }
    }
}

impl AnchoredError {
    /// The (0-based) change the error is about, if it is about one.
    pub fn change(&self) -> Option<usize> {
        match self {
            AnchoredError::NoChanges => None,
            AnchoredError::AnchorLength { change, .. }
            | AnchoredError::NotFound { change, .. }
            | AnchoredError::NotUnique { change, .. }
            | AnchoredError::WorkLimit { change, .. } => Some(*change),
            AnchoredError::Overlap { second, .. } => Some(*second),
        }
    }
}

/// The error with the first line of its change's `start` anchor, as the first bb7 shows it:
/// `change 0: anchor not found (start: "fn main() {" ...)` (`...` when the anchor has more
/// lines).
pub fn describe_anchored_error(err: &AnchoredError, changes: &[AnchoredChange]) -> String {
    let mut text = err.to_string();
    if let Some(start) = err.change().and_then(|i| changes.get(i)).map(|c| &c.start) {
        if let Some(first) = start.first() {
            text.push_str(&format!(" (start: {first:?}"));
            if start.len() > 1 {
                text.push_str(" ...");
            }
            text.push(')');
        }
    }
    text
}

impl std::error::Error for AnchoredError {}

/// A located region: line indexes `first..=last`, and the indentation shift to apply to the
/// content when the start anchor matched only ignoring indentation.
struct Region {
    change: usize,
    first: usize,
    last: usize,
    reindent: Option<(String, String)>,
}

/// Applies all `changes` to `content`, all or nothing.
///
/// Each anchor is looked up line by line: exact, then ignoring trailing whitespace, then
/// ignoring all surrounding whitespace (the content is then re-indented by the difference);
/// the first of these that matches decides and must match once. `end` is searched after the
/// `start` lines. Overlapping regions are an error. Regions are replaced bottom-up, with the
/// file's line endings; the file keeps its trailing-newline state.
pub fn apply_anchored(content: &str, changes: &[AnchoredChange]) -> Result<String, AnchoredError> {
    apply_anchored_with(content, changes, &mut MatchWork::default())
}

/// [`apply_anchored`], counting its work in `work`: each change takes time linear in the
/// size of `content`, and no change is looked for once `work` is used up (a
/// [`AnchoredError::WorkLimit`]).
pub fn apply_anchored_with(
    content: &str,
    changes: &[AnchoredChange],
    work: &mut MatchWork,
) -> Result<String, AnchoredError> {
    if changes.is_empty() {
        return Err(AnchoredError::NoChanges);
    }
    let eol = text::eol(content);
    let lines = text::lines(content);
    let texts: Vec<&str> = lines.iter().map(|l| &content[l.start..l.end]).collect();
    let mut regions = Vec::with_capacity(changes.len());
    for (idx, change) in changes.iter().enumerate() {
        if work.exhausted() {
            return Err(AnchoredError::WorkLimit {
                change: idx,
                limit: work.limit(),
            });
        }
        if idx == 0 {
            // Splitting the file into lines costs per line, not only per byte.
            work.charge(content.len() + work::LINE_STEPS * lines.len());
        }
        regions.push(locate(&texts, change, idx, work)?);
    }
    let mut order: Vec<&Region> = regions.iter().collect();
    order.sort_by_key(|r| (r.first, r.change));
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.first <= a.last {
            return Err(AnchoredError::Overlap {
                first: a.change,
                second: b.change,
                first_lines: (a.first + 1, a.last + 1),
                second_lines: (b.first + 1, b.last + 1),
            });
        }
    }
    let mut out = content.to_owned();
    for region in order.iter().rev() {
        let change = &changes[region.change];
        let (first, last): (Line, Line) = (lines[region.first], lines[region.last]);
        let replacement = match &change.content {
            None => String::new(),
            Some(new_lines) if new_lines.is_empty() => String::new(),
            Some(new_lines) => {
                let mut joined = new_lines.join("\n").replace("\r\n", "\n");
                if let Some((from, to)) = &region.reindent {
                    joined = text::reindent(&joined, from, to);
                }
                joined.push('\n');
                text::with_eol(&joined, eol)
            }
        };
        out.replace_range(first.start..last.term_end, &replacement);
    }
    Ok(text::keep_trailing_newline(content, out, eol))
}

fn locate(
    texts: &[&str],
    change: &AnchoredChange,
    number: usize,
    work: &mut MatchWork,
) -> Result<Region, AnchoredError> {
    let start = anchor_lines(&change.start, number, Anchor::Start)?;
    let (first, reindent) = find_anchor(texts, &start, (0, number, Anchor::Start), work)?;
    let after_start = first + start.len();
    let last = match &change.end {
        None => after_start - 1,
        Some(end) => {
            let end = anchor_lines(end, number, Anchor::End)?;
            let (at, _) = find_anchor(texts, &end, (after_start, number, Anchor::End), work)?;
            at + end.len() - 1
        }
    };
    Ok(Region {
        change: number,
        first,
        last,
        reindent,
    })
}

/// The anchor's lines (entries containing newlines are split), checked for length.
fn anchor_lines(
    anchor: &[String],
    change: usize,
    which: Anchor,
) -> Result<Vec<String>, AnchoredError> {
    let lines: Vec<String> = anchor
        .iter()
        .flat_map(|l| {
            l.split('\n')
                .map(|s| s.strip_suffix('\r').unwrap_or(s).to_owned())
        })
        .collect();
    if lines.is_empty() || lines.len() > MAX_ANCHOR_LINES {
        return Err(AnchoredError::AnchorLength {
            change,
            anchor: which,
            lines: lines.len(),
        });
    }
    Ok(lines)
}

/// Finds `anchor` at or after line index `from` (`at` is `(from, change, which)`); returns
/// its first line index and, for the whitespace-insensitive pass, the (model, file)
/// indentation pair for re-indenting. Each pass is linear in the file ([`work::occurrences`]).
#[allow(clippy::type_complexity)]
fn find_anchor(
    texts: &[&str],
    anchor: &[String],
    (from, change, which): (usize, usize, Anchor),
    work: &mut MatchWork,
) -> Result<(usize, Option<(String, String)>), AnchoredError> {
    let passes: [fn(&str) -> &str; 3] = [|l| l, str::trim_end, str::trim];
    let quoted: Vec<&str> = anchor.iter().map(String::as_str).collect();
    let rest = texts.get(from..).unwrap_or_default();
    for (pass, norm) in passes.iter().enumerate() {
        let (hay, needle) = work::number_lines(rest, &quoted, *norm, work);
        let hits: Vec<usize> = work::occurrences(&hay, &needle, work)
            .into_iter()
            .map(|at| at + from)
            .collect();
        match hits.as_slice() {
            [] => continue,
            [at] => {
                let reindent = (pass == 2)
                    .then(|| {
                        let f = anchor.iter().position(|l| !l.trim().is_empty())?;
                        Some((
                            text::indent(&anchor[f]).to_owned(),
                            text::indent(texts[at + f]).to_owned(),
                        ))
                    })
                    .flatten();
                return Ok((*at, reindent));
            }
            _ => {
                return Err(AnchoredError::NotUnique {
                    change,
                    anchor: which,
                    lines: hits.iter().map(|h| h + 1).collect(),
                });
            }
        }
    }
    Err(AnchoredError::NotFound {
        change,
        anchor: which,
    })
}
