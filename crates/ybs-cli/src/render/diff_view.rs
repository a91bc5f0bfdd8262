//! What a change looks like before and after it is made: the preview shown before a
//! `write_file`, `edit_file` or `run_shell` call is settled (a unified diff against the file
//! as it is, computed with `similar`; a new file's first lines; a command and where it runs),
//! the one-line summary per file after a turn, and the whole diff for `/diff`. Colour only
//! when the renderer has it (not with `NO_COLOR` or off a terminal): plain `+`/`-` otherwise.
//! Every file name, line and command is made inert ([`inert`]) before it is shown. What the
//! preview holds is computed by the agent ([`ybs_agent::preview`]).

use std::path::Path;

use similar::{ChangeTag, TextDiff};
use ybs_tools::protected::is_configuration;
use ybs_tools::summary::counted;

use crate::render::style::{Painter, Role};
use ybs_agent::inert::inert;
pub use ybs_agent::preview::Preview;

/// The most diff lines shown before a confirmation; the rest are counted.
pub const FOLD_LINES: usize = 60;
/// Lines kept at the start of a long hunk before a confirmation.
pub const HUNK_HEAD: usize = 6;
/// Lines kept at the end of a long hunk before a confirmation.
pub const HUNK_TAIL: usize = 3;
/// How many lines of a new file are shown.
pub const NEW_FILE_LINES: usize = 10;
/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;
/// How long a diff may take before `similar` settles for a coarser one (a whole rewrite of a
/// large file must not hold up the confirmation).
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(200);

fn line_diff<'a>(before: &'a str, after: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after)
}

fn count_changes<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>) -> (usize, usize) {
    diff.iter_all_changes()
        .fold((0, 0), |(added, removed), change| match change.tag() {
            ChangeTag::Insert => (added + 1, removed),
            ChangeTag::Delete => (added, removed + 1),
            ChangeTag::Equal => (added, removed),
        })
}

/// The preview as display lines, diffs folded to about `fold` lines ([`folded_diff_lines`]);
/// a file ybs reads as configuration (`.ybs.json`, `.ybs/`, `.chat`) is never folded: it is
/// approved only from what it will really hold.
pub fn render(preview: &Preview, painter: Painter, fold: usize) -> Vec<String> {
    match preview {
        Preview::Shell { command, cwd } => {
            // Every line of the command, each made inert: nothing in it can hide another.
            let mut lines: Vec<String> = (command.split('\n').enumerate())
                .map(|(index, line)| {
                    let mark = if index == 0 { "$" } else { ">" };
                    format!("  {} {}", painter.paint(Role::Dim, mark), inert(line))
                })
                .collect();
            lines.push(painter.paint(Role::Dim, &format!("  in {}", inert(cwd))));
            lines
        }
        Preview::Unshown { path, why } => vec![painter.paint(
            Role::Bold,
            &format!("  {}: no preview ({})", inert(path), inert(why)),
        )],
        Preview::File {
            path,
            before: None,
            after,
        } => {
            let shown = if is_configuration(Path::new(path)) {
                usize::MAX
            } else {
                NEW_FILE_LINES
            };
            new_file(path, after, painter, shown)
        }
        Preview::File {
            path,
            before: Some(before),
            after,
        } if is_configuration(Path::new(path)) => diff_lines(path, before, after, painter),
        Preview::File {
            path,
            before: Some(before),
            after,
        } => folded_diff_lines(path, before, after, painter, fold),
    }
}

/// A new file: its name, size and first `shown` lines.
fn new_file(path: &str, content: &str, painter: Painter, shown: usize) -> Vec<String> {
    let total = content.lines().count();
    let mut lines = vec![painter.paint(
        Role::Bold,
        &format!(
            "  new file {} ({}, {})",
            inert(path),
            counted(total as u64, "line", "lines"),
            counted(content.len() as u64, "byte", "bytes")
        ),
    )];
    for line in content.lines().take(shown) {
        lines.push(painter.paint(Role::Success, &format!("  +{}", inert(line))));
    }
    if total > shown {
        lines.push(painter.paint(Role::Dim, &format!("  … {} more lines", total - shown)));
    }
    lines
}

/// The unified diff of `before` to `after` as display lines, headed by the file's name.
pub fn diff_lines(path: &str, before: &str, after: &str, painter: Painter) -> Vec<String> {
    let diff = line_diff(before, after);
    let mut lines = title(path, &diff, painter);
    for hunk in hunks(&diff, painter) {
        lines.push(hunk.header);
        lines.extend(hunk.body);
    }
    lines
}

/// [`diff_lines`] folded for a confirmation: each long hunk keeps its first [`HUNK_HEAD`] and
/// last [`HUNK_TAIL`] lines, and hunks stop once `fold` lines are shown, the rest counted; a
/// budget too small for the first hunk cuts it, saying so.
pub fn folded_diff_lines(
    path: &str,
    before: &str,
    after: &str,
    painter: Painter,
    fold: usize,
) -> Vec<String> {
    let diff = line_diff(before, after);
    let mut lines = title(path, &diff, painter);
    let hunks = hunks(&diff, painter);
    for (index, hunk) in hunks.iter().enumerate() {
        let folded = fold_hunk(hunk, painter);
        if lines.len() + folded.len() > fold {
            let rest = &hunks[index..];
            let hidden: usize = rest.iter().map(|hunk| hunk.body.len()).sum();
            let noun = if rest.len() == 1 { "hunk" } else { "hunks" };
            let note = if index == 0 {
                // Not even the first hunk fits: show what does, and say the rest is cut.
                let room = fold.saturating_sub(lines.len());
                lines.extend(folded.into_iter().take(room));
                format!(
                    "  … the rest is hidden ({hidden} diff lines in {} {noun})",
                    rest.len()
                )
            } else {
                format!(
                    "  … {} more {noun} hidden ({hidden} diff lines)",
                    rest.len()
                )
            };
            lines.push(painter.paint(Role::Dim, &note));
            break;
        }
        lines.extend(folded);
    }
    lines
}

/// One hunk of a diff: its `@@` line and its lines.
struct Hunk {
    header: String,
    body: Vec<String>,
}

/// `path: +N -M`, and `(no change)` when nothing differs.
fn title<'a>(path: &str, diff: &'a TextDiff<'a, 'a, 'a, str>, painter: Painter) -> Vec<String> {
    let (added, removed) = count_changes(diff);
    let mut lines = vec![painter.paint(
        Role::Bold,
        &format!("  {}: +{added} -{removed}", inert(path)),
    )];
    if added == 0 && removed == 0 {
        lines.push(painter.paint(Role::Dim, "  (no change)"));
    }
    lines
}

fn hunks<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>, painter: Painter) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    for hunk in diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .iter_hunks()
    {
        let header = painter.paint(Role::Dim, &format!("  {}", hunk.header()));
        let mut body = Vec::new();
        for change in hunk.iter_changes() {
            let text = change.value().trim_end_matches(['\n', '\r']);
            let text = inert(text);
            body.push(match change.tag() {
                ChangeTag::Insert => painter.paint(Role::Success, &format!("  +{text}")),
                ChangeTag::Delete => painter.paint(Role::Failure, &format!("  -{text}")),
                ChangeTag::Equal => format!("   {text}"),
            });
            if change.missing_newline() {
                body.push(painter.paint(Role::Dim, "  \\ No newline at end of file"));
            }
        }
        hunks.push(Hunk { header, body });
    }
    hunks
}

/// A hunk's lines with the middle of a long one replaced by a count.
fn fold_hunk(hunk: &Hunk, painter: Painter) -> Vec<String> {
    let mut lines = vec![hunk.header.clone()];
    let body = &hunk.body;
    if body.len() <= HUNK_HEAD + HUNK_TAIL + 1 {
        lines.extend(body.iter().cloned());
        return lines;
    }
    let hidden = body.len() - HUNK_HEAD - HUNK_TAIL;
    lines.extend(body[..HUNK_HEAD].iter().cloned());
    let hidden = counted(hidden as u64, "line", "lines");
    lines.push(painter.paint(Role::Dim, &format!("  … {hidden} hidden …")));
    lines.extend(body[body.len() - HUNK_TAIL..].iter().cloned());
    lines
}

/// Lines added and removed from `before` to `after`.
pub fn counts(before: &str, after: &str) -> (usize, usize) {
    count_changes(&line_diff(before, after))
}

/// `+12 -3 src/main.rs` (a removed file says so).
pub fn summary_line(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    painter: Painter,
) -> String {
    let (added, removed) = counts(before.unwrap_or(""), after.unwrap_or(""));
    let note = match (before, after) {
        (None, Some(_)) => " (new)",
        (Some(_), None) => " (deleted)",
        _ => "",
    };
    format!(
        "{} {} {}{note}",
        painter.paint(Role::Success, &format!("+{added}")),
        painter.paint(Role::Failure, &format!("-{removed}")),
        inert(path)
    )
}

/// `path` relative to `base` when inside it, made inert for the terminal.
pub fn shown_path(path: &Path, base: &Path) -> String {
    let shown = match path.strip_prefix(base) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    };
    inert(&shown).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const PLAIN: Painter = Painter { color: false };

    fn file(before: Option<&str>, after: &str) -> Preview {
        Preview::File {
            path: "src/a.rs".into(),
            before: before.map(Into::into),
            after: after.into(),
        }
    }

    #[test]
    fn a_configuration_file_is_shown_whole_never_folded() {
        // Ten harmless lines, then the entry that runs a program: folding would hide it.
        let mut text: String = (0..10).map(|i| format!("  \"k{i}\": {i},\n")).collect();
        text.push_str("  \"mcp\": {\"servers\": {\"x\": {\"command\": \"sh\"}}}\n");
        for path in [
            ".ybs.json",
            "sub/.ybs.json",
            ".ybs/prompts/p.md",
            "review.chat",
        ] {
            let preview = Preview::File {
                path: path.into(),
                before: None,
                after: text.clone(),
            };
            let lines = render(&preview, PLAIN, FOLD_LINES);
            assert_eq!(lines.len(), 12, "{path}: {lines:?}");
            assert!(lines[11].contains("\"command\": \"sh\""), "{lines:?}");
            let before: String = (0..100).map(|i| format!("{i}\n")).collect();
            let after: String = (0..100).map(|i| format!("x{i}\n")).collect();
            let preview = Preview::File {
                path: path.into(),
                before: Some(before),
                after,
            };
            let lines = render(&preview, PLAIN, 5);
            assert!(lines.iter().all(|l| !l.contains("more")), "{lines:?}");
            assert!(lines.iter().any(|l| l == "  +x99"), "{lines:?}");
        }
        let other = Preview::File {
            path: "notes.txt".into(),
            before: None,
            after: text.clone(),
        };
        let folded = render(&other, PLAIN, FOLD_LINES);
        assert_eq!(folded.last().map(String::as_str), Some("  … 1 more lines"));
    }

    #[test]
    fn an_edit_shows_a_unified_diff_with_counts() {
        let lines = render(&file(Some("a\nb\nc\n"), "a\nB\nc\nd\n"), PLAIN, FOLD_LINES);
        assert_eq!(
            lines,
            [
                "  src/a.rs: +2 -1",
                "  @@ -1,3 +1,4 @@",
                "   a",
                "  -b",
                "  +B",
                "   c",
                "  +d",
            ]
        );
    }

    #[test]
    fn colour_marks_added_and_removed_lines() {
        let painter = Painter { color: true };
        let lines = render(&file(Some("a\n"), "b\n"), painter, FOLD_LINES);
        assert!(
            lines.iter().any(|l| l.contains("\u{1b}[32m  +b")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("\u{1b}[31m  -a")),
            "{lines:?}"
        );
        let plain = render(&file(Some("a\n"), "b\n"), PLAIN, FOLD_LINES);
        assert!(plain.iter().all(|l| !l.contains('\u{1b}')));
    }

    #[test]
    fn a_long_hunk_keeps_its_head_and_tail() {
        let before: String = (0..100).map(|i| format!("{i}\n")).collect();
        let after: String = (0..100).map(|i| format!("x{i}\n")).collect();
        let lines = render(&file(Some(&before), &after), PLAIN, FOLD_LINES);
        // 200 changed lines: 6 shown, 191 hidden, 3 shown.
        assert_eq!(
            lines,
            [
                "  src/a.rs: +100 -100",
                "  @@ -1,100 +1,100 @@",
                "  -0",
                "  -1",
                "  -2",
                "  -3",
                "  -4",
                "  -5",
                "  … 191 lines hidden …",
                "  +x97",
                "  +x98",
                "  +x99",
            ]
        );
    }

    /// A 1,000-line file with one line changed every 20 lines: 50 hunks of 9 lines.
    fn many_hunks() -> (String, String) {
        let before: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let after: String = (0..1000)
            .map(|i| {
                if i % 20 == 10 {
                    format!("x{i}\n")
                } else {
                    format!("{i}\n")
                }
            })
            .collect();
        (before, after)
    }

    #[test]
    fn hunks_stop_at_the_budget_and_the_rest_are_counted() {
        let (before, after) = many_hunks();
        let lines = render(&file(Some(&before), &after), PLAIN, FOLD_LINES);
        // The title and 6 whole hunks of 9 lines fit in 60; the other 44 are counted.
        assert_eq!(lines.len(), 1 + 6 * 9 + 1, "{lines:#?}");
        assert_eq!(lines[1], "  @@ -8,7 +8,7 @@");
        assert_eq!(lines[5], "  -10");
        assert_eq!(lines[6], "  +x10");
        assert_eq!(lines[46], "  @@ -108,7 +108,7 @@");
        assert_eq!(lines[55], "  … 44 more hunks hidden (352 diff lines)");
        assert!(!lines.iter().any(|line| line.contains("lines hidden …")));
        // /diff shows everything.
        assert_eq!(diff_lines("a", &before, &after, PLAIN).len(), 1 + 50 * 9);
    }

    #[test]
    fn the_total_stays_bounded_for_a_small_budget_and_short_hunks_are_whole() {
        let (before, after) = many_hunks();
        for fold in [0, 1, 5, 12, 20, 59, 60, 61] {
            let lines = render(&file(Some(&before), &after), PLAIN, fold);
            assert!(lines.len() <= fold.max(1) + 1, "{fold}: {}", lines.len());
            // Whatever is cut is said to be.
            let last = lines.last().unwrap();
            assert!(last.contains("hidden ("), "{fold}: {lines:#?}");
        }
        // Ten lines in a hunk are shown whole: folding one line away would not help.
        let lines = render(&file(Some("a\n"), "b\nc\nd\ne\nf\ng\nh\ni\nj\n"), PLAIN, 60);
        assert_eq!(lines.len(), 12, "{lines:#?}");
        assert!(!lines.iter().any(|line| line.contains('…')));
    }

    #[test]
    fn a_new_file_shows_its_size_and_first_lines() {
        let content: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let lines = render(&file(None, &content), PLAIN, FOLD_LINES);
        assert_eq!(
            lines[0],
            format!("  new file src/a.rs (12 lines, {} bytes)", content.len())
        );
        assert_eq!(lines[1], "  +line 1");
        assert_eq!(lines[10], "  +line 10");
        assert_eq!(lines[11], "  … 2 more lines");
    }

    /// What the preview computes for an `edit_file` call's arguments.
    fn edited(text: &str, old: &str, new: &str, replace_all: bool) -> Option<String> {
        let args =
            serde_json::json!({"old_text": old, "new_text": new, "replace_all": replace_all});
        let edits = ybs_tools::builtins::edits_of(&args).ok()?;
        Some(ybs_tools::builtins::apply_edits(text, &edits, "f").ok()?.0)
    }

    #[test]
    fn edits_are_previewed_as_the_tool_would_apply_them() {
        let both = serde_json::json!({"edits": [
            {"old_text": "a", "new_text": "b"}, {"old_text": "c", "new_text": "d"}
        ]});
        let edits = ybs_tools::builtins::edits_of(&both).unwrap();
        let applied = ybs_tools::builtins::apply_edits("a c\n", &edits, "f").map(|r| r.0);
        assert_eq!(applied.as_deref(), Ok("b d\n"));
        assert_eq!(edited("a b a", "b", "c", false).as_deref(), Some("a c a"));
        assert_eq!(edited("a b a", "a", "c", false), None);
        assert_eq!(edited("a b a", "a", "c", true).as_deref(), Some("c b c"));
        assert_eq!(
            edited("x\r\ny\r\n", "x\ny", "z\nw", false).as_deref(),
            Some("z\r\nw\r\n")
        );
        assert_eq!(edited("abc", "q", "c", false), None);
    }

    #[test]
    fn summaries_count_lines() {
        assert_eq!(
            summary_line("m.rs", Some("a\nb\n"), Some("a\nc\nd\n"), PLAIN),
            "+2 -1 m.rs"
        );
        assert_eq!(
            summary_line("n.rs", None, Some("a\n"), PLAIN),
            "+1 -0 n.rs (new)"
        );
        assert_eq!(
            summary_line("o.rs", Some("a\n"), None, PLAIN),
            "+0 -1 o.rs (deleted)"
        );
    }

    #[test]
    fn a_shell_call_shows_the_command_and_where_it_runs() {
        let lines = render(
            &Preview::Shell {
                command: "cargo test".into(),
                cwd: "/p".into(),
            },
            PLAIN,
            FOLD_LINES,
        );
        assert_eq!(lines, ["  $ cargo test", "  in /p"]);
    }
}
