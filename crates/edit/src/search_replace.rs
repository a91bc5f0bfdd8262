//! Search/replace matching: five passes, first pass with a match wins.

use std::fmt;

use super::text::{self, Line};
use super::work::{self, MatchWork};

/// One search/replace edit of a file, as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchReplace {
    /// The text to find. Empty only to fill an empty file.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every match instead of requiring a unique one.
    pub replace_all: bool,
}

impl SearchReplace {
    /// An edit that requires a unique match.
    pub fn new(old_string: impl Into<String>, new_string: impl Into<String>) -> Self {
        SearchReplace {
            old_string: old_string.into(),
            new_string: new_string.into(),
            replace_all: false,
        }
    }

    /// The same edit with `replace_all` set.
    pub fn replace_all(mut self, replace_all: bool) -> Self {
        self.replace_all = replace_all;
        self
    }

    /// An edit whose old text equals its new text: bb7 drops these without looking at the file.
    pub fn is_noop(&self) -> bool {
        self.old_string == self.new_string
    }
}

/// The matching pass that found `old_string`, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchPass {
    /// 1. Byte-for-byte substring.
    Exact,
    /// 2. Whole lines equal after trimming trailing whitespace on both sides.
    TrailingWhitespace,
    /// 3. Whole lines equal after trimming leading and trailing whitespace; `new_string` is
    ///    re-indented by the indentation difference.
    Indentation,
    /// 4. `old_string` of 2+ lines whose first and/or last line is cut off: at least 8
    ///    characters that are a prefix of the real line (the first line may also be a suffix,
    ///    when the model started quoting mid-line); inner lines compared trimmed; re-indented
    ///    like pass 3. Unquoted text of the real first line before a suffix, and of the real
    ///    last line after a prefix, is kept; a first line quoted as a prefix is replaced whole.
    CutOff,
    /// 5. Substring after normalising CRLF to LF in both the file and `old_string`.
    Normalized,
}

/// The result of a successful search/replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The whole new file content.
    pub content: String,
    /// How many matches were replaced (1 unless `replace_all`).
    pub replacements: usize,
    /// The pass that matched (`None` when an empty file was filled).
    pub pass: Option<MatchPass>,
}

/// Why a search/replace edit could not be applied. `Display` gives bb7's exact wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchReplaceError {
    /// No pass found `old_string`.
    NotFound,
    /// The first pass that matched found several matches and `replace_all` was not set.
    NotUnique {
        /// How many matches.
        count: usize,
        /// The 1-based line of each match's start.
        lines: Vec<usize>,
    },
    /// The last pass (raw substring) matched several times and `replace_all` was not set.
    NotUniqueSubstring,
    /// `old_string` was empty but the file is not.
    EmptyOldString,
    /// The response's edits used up their matching work ([`MatchWork`]): this edit was not
    /// tried.
    WorkLimit {
        /// The limit, in steps.
        limit: u64,
    },
}

/// At most this many line numbers are listed in a "not unique" message.
const MAX_LISTED_LINES: usize = 20;

impl fmt::Display for SearchReplaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchReplaceError::NotFound => f.write_str("old_string not found in file"),
            SearchReplaceError::NotUnique { count, lines } => {
                write!(
                    f,
                    "old_string not unique ({count} matches at lines {})",
                    list_lines(lines)
                )
            }
            // The first bb7's words for a raw-substring (last pass) ambiguity.
            SearchReplaceError::NotUniqueSubstring => {
                f.write_str("old_string not unique (multiple substring matches)")
            }
            SearchReplaceError::EmptyOldString => {
                f.write_str("old_string is empty but file has content")
            }
            SearchReplaceError::WorkLimit { limit } => {
                f.write_str(&MatchWork::new(*limit).exhausted_message())
            }
        }
    }
}

impl std::error::Error for SearchReplaceError {}

/// `1, 5, 9` (cut with `, ...` after [`MAX_LISTED_LINES`]).
pub(crate) fn list_lines(lines: &[usize]) -> String {
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect();
    if lines.len() > MAX_LISTED_LINES {
        shown.push("...".to_owned());
    }
    shown.join(", ")
}

/// One match: the byte range to replace and the text to put there (already re-indented and
/// with the file's line endings).
#[derive(Debug, Clone)]
struct Match {
    start: usize,
    end: usize,
    replacement: String,
}

/// Applies one search/replace edit to `content`.
///
/// The passes of [`MatchPass`] are tried in order and the first that finds anything decides:
/// several matches are an error unless `replace_all`, and later passes are not consulted.
/// `new_string` is written with the file's line endings, and the file keeps its
/// trailing-newline state. An empty `old_string` fills an empty file with `new_string`.
pub fn apply_search_replace(
    content: &str,
    edit: &SearchReplace,
) -> Result<Replaced, SearchReplaceError> {
    apply_search_replace_with(content, edit, &mut MatchWork::default())
}

/// [`apply_search_replace`], counting its work in `work`: it takes time linear in the sizes
/// of `content` and `old_string`, and is not tried (a [`SearchReplaceError::WorkLimit`]) when
/// `work` is already used up.
pub fn apply_search_replace_with(
    content: &str,
    edit: &SearchReplace,
    work: &mut MatchWork,
) -> Result<Replaced, SearchReplaceError> {
    if work.exhausted() {
        return Err(SearchReplaceError::WorkLimit {
            limit: work.limit(),
        });
    }
    if edit.old_string.is_empty() {
        if content.is_empty() {
            return Ok(Replaced {
                content: edit.new_string.clone(),
                replacements: 1,
                pass: None,
            });
        }
        return Err(SearchReplaceError::EmptyOldString);
    }
    let eol = text::eol(content);
    let lines = text::lines(content);
    work.charge(content.len() + work::LINE_STEPS * lines.len());
    let passes = [
        MatchPass::Exact,
        MatchPass::TrailingWhitespace,
        MatchPass::Indentation,
        MatchPass::CutOff,
        MatchPass::Normalized,
    ];
    for pass in passes {
        let matches = find(content, &lines, edit, pass, eol, work)?;
        if matches.is_empty() {
            continue;
        }
        if matches.len() > 1 && !edit.replace_all && pass == MatchPass::Normalized {
            return Err(SearchReplaceError::NotUniqueSubstring);
        }
        if matches.len() > 1 && !edit.replace_all {
            let starts: Vec<usize> = matches.iter().map(|m| m.start).collect();
            return Err(SearchReplaceError::NotUnique {
                count: matches.len(),
                lines: text::line_numbers(content, &starts),
            });
        }
        // Matches are sorted and disjoint: assemble in one pass.
        let mut out = String::with_capacity(content.len());
        let mut at = 0;
        for m in &matches {
            out.push_str(&content[at..m.start]);
            out.push_str(&m.replacement);
            at = m.end;
        }
        out.push_str(&content[at..]);
        return Ok(Replaced {
            content: text::keep_trailing_newline(content, out, eol),
            replacements: matches.len(),
            pass: Some(pass),
        });
    }
    Err(SearchReplaceError::NotFound)
}

fn find(
    content: &str,
    lines: &[Line],
    edit: &SearchReplace,
    pass: MatchPass,
    eol: &str,
    work: &mut MatchWork,
) -> Result<Vec<Match>, SearchReplaceError> {
    let new = || text::with_eol(&edit.new_string, eol);
    if matches!(pass, MatchPass::Exact | MatchPass::Normalized) {
        // Substring search (two-way): linear in both texts.
        work.charge(content.len() + edit.old_string.len());
    }
    match pass {
        MatchPass::Exact => {
            let ranges = content
                .match_indices(edit.old_string.as_str())
                .map(|(at, s)| (at, at + s.len()))
                .filter(|&(start, end)| !splits_crlf(content, start) && !splits_crlf(content, end));
            replace_each(ranges, new, work)
        }
        MatchPass::Normalized => {
            replace_each(normalized_matches(content, &edit.old_string), new, work)
        }
        _ => line_matches(content, lines, edit, pass, eol, work),
    }
}

/// The matches of `ranges`, each replaced by `new()`; each replacement is counted as work, and
/// when the work is used up (a `replace_all` of a long `new_string` matching thousands of
/// times) no more is built: `WorkLimit`.
fn replace_each(
    ranges: impl IntoIterator<Item = (usize, usize)>,
    new: impl Fn() -> String,
    work: &mut MatchWork,
) -> Result<Vec<Match>, SearchReplaceError> {
    let mut out = Vec::new();
    for (start, end) in ranges {
        let replacement = new();
        work.charge(replacement.len());
        out.push(Match {
            start,
            end,
            replacement,
        });
        if work.exhausted() {
            return Err(SearchReplaceError::WorkLimit {
                limit: work.limit(),
            });
        }
    }
    Ok(out)
}

/// Whether byte offset `at` falls between the `\r` and `\n` of a CRLF (a match may not
/// begin or end there: it would leave a lone `\r`).
fn splits_crlf(content: &str, at: usize) -> bool {
    let b = content.as_bytes();
    at > 0 && at < b.len() && b[at - 1] == b'\r' && b[at] == b'\n'
}

/// Pass 5: substring search with CRLF normalised to LF on both sides, mapped back to byte
/// ranges of the original content (a normalised `\n` maps to its `\r`).
fn normalized_matches(content: &str, old: &str) -> Vec<(usize, usize)> {
    let old = old.replace("\r\n", "\n");
    // `map[i]` is the original offset of normalised offset `i`.
    let mut norm = String::with_capacity(content.len());
    let mut map = Vec::with_capacity(content.len() + 1);
    let bytes = content.as_bytes();
    for (i, c) in content.char_indices() {
        if c == '\r' && bytes.get(i + 1) == Some(&b'\n') {
            continue;
        }
        let origin = if c == '\n' && i > 0 && bytes[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        for k in 0..c.len_utf8() {
            map.push(origin + k);
        }
        norm.push(c);
    }
    map.push(content.len());
    norm.match_indices(old.as_str())
        .map(|(at, s)| (map[at], map[at + s.len()]))
        .collect()
}

/// The minimum length, in characters, of a cut-off first or last line in pass 4.
const MIN_CUT_OFF_CHARS: usize = 8;

/// How a line of `old_string` matched a file line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineMatch {
    /// Equal under the pass's comparison.
    Whole,
    /// Pass 4: the quoted line is a strict prefix of the real one (the model stopped early).
    Prefix,
    /// Pass 4, first line only: the quoted line is a strict suffix of the real one (the model
    /// started quoting mid-line).
    Suffix,
}

/// Where a line sits in `old_string`, for pass 4's cut-off rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    First,
    Inner,
    Last,
}

/// How a file line (`real`, without terminator) matches a line of `old_string` in a pass.
fn line_eq(pass: MatchPass, real: &str, old: &str, edge: Edge) -> Option<LineMatch> {
    match pass {
        MatchPass::TrailingWhitespace => {
            (real.trim_end() == old.trim_end()).then_some(LineMatch::Whole)
        }
        MatchPass::Indentation => (real.trim() == old.trim()).then_some(LineMatch::Whole),
        MatchPass::CutOff => {
            let (r, o) = (real.trim(), old.trim());
            if r == o {
                return Some(LineMatch::Whole);
            }
            if edge == Edge::Inner || o.chars().count() < MIN_CUT_OFF_CHARS {
                return None;
            }
            if r.starts_with(o) {
                Some(LineMatch::Prefix)
            } else if edge == Edge::First && r.ends_with(o) {
                Some(LineMatch::Suffix)
            } else {
                None
            }
        }
        MatchPass::Exact | MatchPass::Normalized => None,
    }
}

/// Passes 2-4: windows of whole file lines compared line by line, non-overlapping, left to
/// right. The lines every window must match whole (all of them; for pass 4 the inner ones)
/// are found in linear time ([`work::occurrences`]); only those candidates have their first
/// and last lines checked, so each file line is looked at a bounded number of times.
fn line_matches(
    content: &str,
    lines: &[Line],
    edit: &SearchReplace,
    pass: MatchPass,
    eol: &str,
    work: &mut MatchWork,
) -> Result<Vec<Match>, SearchReplaceError> {
    let (old, trailing_nl) = text::split_text(&edit.old_string);
    let k = old.len();
    if k == 0 || k > lines.len() || (pass == MatchPass::CutOff && k < 2) {
        return Ok(Vec::new());
    }
    let line_text = |l: &Line| &content[l.start..l.end];
    let edge = |j: usize| match j {
        0 => Edge::First,
        j if j == k - 1 => Edge::Last,
        _ => Edge::Inner,
    };
    let norm: fn(&str) -> &str = match pass {
        MatchPass::TrailingWhitespace => str::trim_end,
        _ => str::trim,
    };
    // The quoted lines compared whole: all but pass 4's cut-off edges (`k >= 2` there).
    let (whole, edges) = if pass == MatchPass::CutOff {
        (1..k - 1, vec![0, k - 1])
    } else {
        (0..k, Vec::new())
    };
    let texts: Vec<&str> = lines.iter().map(line_text).collect();
    let (hay, needle) = work::number_lines(&texts, &old[whole.clone()], norm, work);
    // A window starting at `i` has its whole-compared lines at `i + whole.start`.
    let last_start = lines.len() - k;
    let candidates = work::occurrences(&hay, &needle, work)
        .into_iter()
        .filter_map(|at| at.checked_sub(whole.start))
        .filter(|&i| i <= last_start);
    let mut out = Vec::new();
    let mut free = 0;
    for i in candidates {
        if i < free {
            continue;
        }
        // Pass 4's edges (not compared whole), checked before anything is allocated: a
        // rejected candidate costs two line comparisons.
        let mut found = [LineMatch::Whole; 2];
        let fits = edges.iter().zip(found.iter_mut()).all(|(&j, slot)| {
            work.charge(texts[i + j].len() + old[j].len());
            line_eq(pass, texts[i + j], old[j], edge(j))
                .map(|m| *slot = m)
                .is_some()
        });
        if !fits {
            continue;
        }
        // Accepted windows do not overlap: together they allocate at most N entries.
        let mut how = vec![LineMatch::Whole; k];
        for (&j, m) in edges.iter().zip(found) {
            how[j] = m;
        }
        let quoted = Quoted {
            lines: &old,
            how: &how,
            trailing_nl,
        };
        let found = line_match(content, &lines[i..i + k], &quoted, edit, pass, eol);
        work.charge(found.replacement.len());
        out.push(found);
        if work.exhausted() {
            return Err(SearchReplaceError::WorkLimit {
                limit: work.limit(),
            });
        }
        free = i + k;
    }
    Ok(out)
}

/// The model's `old_string` lines and how each matched its file line.
struct Quoted<'a> {
    lines: &'a [&'a str],
    how: &'a [LineMatch],
    trailing_nl: bool,
}

/// The byte range and replacement of a line-based match over `window`, the matched file lines.
fn line_match(
    content: &str,
    window: &[Line],
    quoted: &Quoted<'_>,
    edit: &SearchReplace,
    pass: MatchPass,
    eol: &str,
) -> Match {
    let (old, how) = (quoted.lines, quoted.how);
    let k = window.len();
    let real = |j: usize| &content[window[j].start..window[j].end];
    let mut new = edit.new_string.replace("\r\n", "\n");
    let first_is_suffix = how[0] == LineMatch::Suffix;
    let start = if first_is_suffix {
        // Keep the start of the real first line, which the model did not quote.
        window[0].start + real(0).trim_end().len() - old[0].trim().len()
    } else {
        window[0].start
    };
    if matches!(pass, MatchPass::Indentation | MatchPass::CutOff) {
        // Re-indent by the first non-blank quoted line that starts at a line start.
        let from = usize::from(first_is_suffix);
        if let Some(f) = (from..k).find(|&j| !old[j].trim().is_empty()) {
            let (was, is) = (text::indent(old[f]), text::indent(real(f)));
            new = match (first_is_suffix, new.split_once('\n')) {
                (true, Some((head, rest))) => format!("{head}\n{}", text::reindent(rest, was, is)),
                (true, None) => new,
                (false, _) => text::reindent(&new, was, is),
            };
        }
    }
    let last = window[k - 1];
    let end = if how[k - 1] == LineMatch::Prefix {
        // Keep the rest of the real last line, which the model did not quote.
        if quoted.trailing_nl && new.ends_with('\n') {
            new.pop();
        }
        last.start + text::indent(real(k - 1)).len() + old[k - 1].trim().len()
    } else if quoted.trailing_nl {
        last.term_end
    } else {
        last.end
    };
    Match {
        start,
        end,
        replacement: text::with_eol(&new, eol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_maps_offsets_back() {
        let c = "é a\r\nb c\r\n";
        assert_eq!(normalized_matches(c, "a\nb"), vec![(3, 7)]);
        assert_eq!(&c[3..7], "a\r\nb");
    }

    #[test]
    fn lists_at_most_twenty_lines() {
        let v: Vec<usize> = (1..=25).collect();
        assert!(list_lines(&v).ends_with("19, 20, ..."));
    }
}
