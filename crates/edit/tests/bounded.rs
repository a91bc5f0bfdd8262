//! Edit matching is bounded: the adversarial shapes that made the tolerant
//! matcher compare N x k lines (a long file of equal lines and a long `old_string` that almost
//! matches at every line, many anchors over a long file, many edits of one file) take work
//! linear in their input, counted by [`MatchWork`], and a response whose edits use up the
//! limit fails with one clear error instead of running on. No timing: the tests read the work
//! counter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use ybs_core::{ToolCall, file_id};
use ybs_edit::{
    AnchoredChange, DiffMode, MatchPass, MatchWork, MemoryLookup, PendingBuffer, SearchReplace,
    SearchReplaceError, apply_anchored_with, apply_search_replace_with,
};

/// 40,000 lines of `    x`, and 20,000 lines of `x` ending in a line the file lacks: every
/// window of passes 2-4 matches for 20,000 lines before it fails.
fn adversarial() -> (String, String) {
    let file = "    x\n".repeat(40_000);
    let old = format!("{}y\n", "x\n".repeat(20_000));
    (file, old)
}

#[test]
fn a_long_near_match_takes_linear_work() {
    let (file, old) = adversarial();
    let mut work = MatchWork::default();
    let err = apply_search_replace_with(&file, &SearchReplace::new(old.as_str(), "z"), &mut work)
        .unwrap_err();
    assert_eq!(err, SearchReplaceError::NotFound);
    // Five passes over both texts, a constant number of steps per byte: the N x k shape
    // would be 800 million line comparisons for the passes 2-4 alone.
    let input = (file.len() + old.len()) as u64;
    assert!(work.steps() <= 30 * input, "{} steps", work.steps());
    assert!(work.steps() < 10_000_000, "{} steps", work.steps());
}

#[test]
fn a_long_match_is_still_found_by_each_line_pass() {
    let file = format!("{}  end  \n", "    x\n".repeat(40_000));
    let old = format!("{}end\n", "x\n".repeat(20_000));
    let mut work = MatchWork::default();
    let edit = SearchReplace::new(old.as_str(), "done\n");
    let got = apply_search_replace_with(&file, &edit, &mut work).unwrap();
    assert_eq!(got.pass, Some(MatchPass::Indentation));
    assert_eq!(got.replacements, 1);
    assert!(
        got.content.ends_with("    x\n    done\n"),
        "{}",
        &got.content[..40]
    );
    assert!(work.steps() <= 30 * (file.len() + old.len()) as u64);
}

#[test]
fn many_anchors_over_a_long_file_take_linear_work_each() {
    // A long file of nearly equal lines; 50 changes whose anchors each need all three passes
    // and match only near the end.
    let mut file = String::new();
    for n in 0..20_000 {
        file.push_str(&format!("    line {n}\n"));
    }
    let changes: Vec<AnchoredChange> = (0..50)
        .map(|n| AnchoredChange {
            start: vec![format!("line {}", 19_900 + n)],
            end: None,
            content: Some(vec![format!("changed {n}")]),
        })
        .collect();
    let mut work = MatchWork::default();
    let out = apply_anchored_with(&file, &changes, &mut work).unwrap();
    assert!(out.contains("    changed 49\n"));
    let per_change = 3 * 4 * file.len() as u64;
    assert!(
        work.steps() <= 50 * per_change,
        "{} steps for 50 changes",
        work.steps()
    );
}

#[test]
fn a_spent_limit_stops_anchored_changes_with_a_clear_error() {
    let change = |line: &str| AnchoredChange {
        start: vec![line.to_owned()],
        end: None,
        content: None,
    };
    let mut work = MatchWork::new(1);
    apply_anchored_with("z\n", &[change("z")], &mut work).unwrap();
    assert!(work.exhausted());
    let steps = work.steps();
    let err = apply_anchored_with(&"a\nb\n".repeat(1000), &[change("a")], &mut work).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("change 0: edit matching stopped: this response's edits need more"),
        "{err}"
    );
    assert_eq!(work.steps(), steps, "nothing more was looked at");
}

fn edit_call(path: &str, id: &str, old: &str, new: &str) -> ToolCall {
    let args = json!({"edits": [{"path": path, "file_id": id,
        "old_string": old, "new_string": new}]});
    ToolCall::from_raw_arguments("call", "edit_file", &args.to_string())
}

#[test]
fn a_response_past_the_limit_fails_once_with_a_clear_error_and_stops_matching() {
    // 60,000 edit calls of a 100 KB file: unbounded, 60,000 full scans of the file.
    let content = "fn item() {}\n".repeat(8_000);
    let lookup = MemoryLookup::new().with_context("src/big.rs", content.as_str());
    let id = file_id("src/big.rs", &content);
    let calls: Vec<ToolCall> = (0..60_000)
        .map(|_| edit_call("src/big.rs", &id, "missing text", "x"))
        .collect();
    let limit = 50_000_000;
    let mut buffer =
        PendingBuffer::new(DiffMode::SearchReplaceMulti, &lookup).with_work_limit(limit);
    for call in &calls {
        let _ = buffer.apply(call);
    }
    let work = buffer.work();
    // The limit, plus at most the one edit that crossed it.
    assert!(work.exhausted());
    assert!(
        work.steps() <= limit + 20 * content.len() as u64,
        "{} steps",
        work.steps()
    );
    let err = buffer.finish().unwrap_err();
    assert_eq!(err.tool_calls.len(), 60_000, "every call failed");
    let stopped: Vec<&String> = err
        .errors
        .iter()
        .filter(|e| e.contains("edit matching stopped"))
        .collect();
    assert_eq!(stopped.len(), 1, "said once: {:?}", &err.errors[..3]);
    assert!(
        stopped[0].starts_with("edit_file edit 0 (src/big.rs, base="),
        "{}",
        stopped[0]
    );
    let not_found = err.errors.len() - 1;
    assert!((1..60_000).contains(&not_found), "{not_found}");
}

#[test]
fn an_ordinary_response_stays_far_below_the_default_limit() {
    let content: String = (0..8_000)
        .map(|n| format!("fn item_{n}() {{}}\n"))
        .collect();
    let lookup = MemoryLookup::new().with_context("src/big.rs", content.as_str());
    let mut buffer = PendingBuffer::new(DiffMode::SearchReplaceMulti, &lookup);
    let id = file_id("src/big.rs", &content);
    for n in 0..20 {
        let old = format!("fn item_{}() {{}}\n", n * 100);
        let call = edit_call("src/big.rs", &id, &old, &format!("fn edited_{n}() {{}}\n"));
        buffer.apply(&call).unwrap_or_else(|e| panic!("{e:?}"));
    }
    assert!(buffer.work().steps() < buffer.work().limit() / 20);
    let writes = buffer.finish().unwrap();
    assert!(
        writes[0]
            .content
            .contains("fn edited_19() {}\nfn item_1901() {}\n")
    );
}

#[test]
fn a_replace_all_that_would_grow_past_the_limit_stops_building() {
    // 100,000 matches of a 1 MB `new_string` would make 100 GB.
    let file = "x\n".repeat(100_000);
    let edit = SearchReplace::new("x", "y".repeat(1 << 20)).replace_all(true);
    let mut work = MatchWork::new(64 << 20);
    let err = apply_search_replace_with(&file, &edit, &mut work).unwrap_err();
    assert_eq!(err, SearchReplaceError::WorkLimit { limit: 64 << 20 });
    assert!(work.steps() < (64 << 20) + (2 << 20), "{}", work.steps());
}

// A file of a million empty lines has a million bytes but costs per line: every line is
// charged its bytes and a fixed cost, so a response cannot make the matcher work through
// tens of millions of lines on a budget sized for bytes.
#[test]
fn empty_lines_are_charged_per_line_not_per_byte() {
    let file = "\n".repeat(1_000_000);
    let mut work = MatchWork::default();
    let err = apply_search_replace_with(&file, &SearchReplace::new("a\nb\n", "z"), &mut work)
        .unwrap_err();
    assert_eq!(err, SearchReplaceError::NotFound);
    assert!(work.steps() >= 16 * 1_000_000, "{} steps", work.steps());
}
