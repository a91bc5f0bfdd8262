//! End-to-end test of `edit_file` with a list of edits: the `ybs` binary against the fake
//! LLM, checking the file on disk after a call that applies and one that fails half-way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text, tool_messages};
use serde_json::json;
use ybs_testkit::Turn;

#[test]
fn a_list_of_edits_is_applied_all_or_nothing() {
    let project = Project::new(vec![
        call(
            "c1",
            "edit_file",
            json!({"path": "lib.rs", "edits": [
                {"old_text": "fn one()", "new_text": "fn uno()"},
                // Quoted with the wrong indentation and trailing spaces: still found.
                {"old_text": "  two();  ", "new_text": "  dos();"},
                {"old_text": "x", "new_text": "y", "replace_all": true}
            ]}),
        ),
        call(
            "c2",
            "edit_file",
            json!({"path": "lib.rs", "edits": [
                {"old_text": "fn uno()", "new_text": "fn first()"},
                {"old_text": "not in the file", "new_text": "z"}
            ]}),
        ),
        Turn::text(["Edited."]),
    ]);
    project.write("lib.rs", "fn one() {\n    two();\n    x(); x();\n}\n");
    let output = project.ybs(&["exec", "--yes", "rename"]);
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    // The first call's three edits, the second call's none.
    assert_eq!(
        project.read("lib.rs"),
        "fn uno() {\n    dos();\n    y(); y();\n}\n"
    );
    let results = tool_messages(&project.bodies()[2]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1.contains("\"replacements\":4"), "{results:?}");
    assert!(
        results[1]
            .1
            .contains("edit 2 of 2: old_text was not found in `lib.rs`")
            && results[1]
                .1
                .contains("no edit was applied, the file is unchanged"),
        "{results:?}"
    );
}
