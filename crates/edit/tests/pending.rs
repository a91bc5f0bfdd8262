//! Tests of applying a whole response to the pending buffer: base precedence, `file_id`
//! checks, all-or-nothing batches, no-ops, error strings and the `diff_error` parts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_core::{ToolCall, file_id};
use ybs_edit::{DiffMode, FileWrite, MemoryLookup, PendingBuffer, apply_response};

/// A JSON string literal.
fn js(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn call(name: &str, json: &str) -> ToolCall {
    let c = ToolCall::from_raw_arguments("call", name, json);
    assert!(c.arguments_error.is_none(), "bad test JSON: {json}");
    c
}

fn write(path: &str, content: &str) -> ToolCall {
    call(
        "write_file",
        &format!(r#"{{"path":{},"content":{}}}"#, js(path), js(content)),
    )
}

/// One `{path, file_id, old_string, new_string}` object.
fn edit_obj(path: &str, id: &str, old: &str, new: &str) -> String {
    format!(
        r#"{{"path":{},"file_id":{},"old_string":{},"new_string":{}}}"#,
        js(path),
        js(id),
        js(old),
        js(new)
    )
}

fn multi(edits: &[String]) -> ToolCall {
    call(
        "edit_file",
        &format!(r#"{{"edits":[{}]}}"#, edits.join(",")),
    )
}

fn single(path: &str, id: &str, old: &str, new: &str) -> ToolCall {
    call("edit_file", &edit_obj(path, id, old, new))
}

fn fw(path: &str, content: &str) -> FileWrite {
    FileWrite {
        path: path.to_owned(),
        content: content.to_owned(),
    }
}

const A: &str = "alpha\nbeta\ngamma\ndelta\n";

fn id(path: &str, content: &str) -> String {
    file_id(path, content)
}

#[test]
fn multi_edit_batch_failing_at_edit_3_applies_nothing() {
    let lookup = MemoryLookup::new()
        .with_context("a.txt", A)
        .with_context("b.txt", "bee\n");
    let calls = [
        write("new.txt", "fresh\n"),
        multi(&[
            edit_obj("a.txt", &id("a.txt", A), "alpha", "ALPHA"),
            edit_obj("b.txt", &id("b.txt", "bee\n"), "bee", "BEE"),
            edit_obj("a.txt", &id("a.txt", A), "epsilon", "EPSILON"),
            edit_obj("a.txt", &id("a.txt", A), "delta", "DELTA"),
        ]),
    ];
    let err = apply_response(DiffMode::SearchReplaceMulti, &calls, &lookup).unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file edit 2 (a.txt, base=pending): old_string not found in file".to_owned()]
    );
    assert_eq!(err.tool_calls.len(), 1);
    assert_eq!(err.tool_calls[0].tool, "edit_file");
    assert_eq!(err.tool_calls[0].path, "a.txt");
    assert_eq!(err.tool_calls[0].call, calls[1]);
    assert_eq!(
        err.tool_calls[0].call.arguments["edits"][2]["old_string"],
        "epsilon"
    );

    // The same with a buffer: the failing call leaves nothing behind, the earlier call stays
    // pending, and `finish` refuses to hand out any write.
    let mut buffer = PendingBuffer::new(DiffMode::SearchReplaceMulti, &lookup);
    buffer.apply(&calls[0]).unwrap();
    let errs = buffer.apply(&calls[1]).unwrap_err();
    assert_eq!(errs, err.errors);
    assert_eq!(buffer.pending("a.txt"), None);
    assert_eq!(buffer.pending("b.txt"), None);
    assert_eq!(buffer.pending("new.txt"), Some("fresh\n"));
    assert!(buffer.finish().is_err());
}

#[test]
fn successful_multi_edit_sees_earlier_results() {
    let lookup = MemoryLookup::new()
        .with_context("a.txt", A)
        .with_context("b.txt", "bee\n");
    let calls = [multi(&[
        edit_obj("a.txt", &id("a.txt", A), "alpha", "ALPHA"),
        edit_obj("b.txt", &id("b.txt", "bee\n"), "bee", "BEE"),
        edit_obj("a.txt", &id("a.txt", A), "ALPHA\nbeta", "AB"),
    ])];
    let writes = apply_response(DiffMode::SearchReplaceMulti, &calls, &lookup).unwrap();
    assert_eq!(
        writes,
        vec![fw("a.txt", "AB\ngamma\ndelta\n"), fw("b.txt", "BEE\n")]
    );
}

#[test]
fn base_precedence_pending_then_output_then_context() {
    let ctx = "from context\n";
    let out = "from output\n";
    let lookup = MemoryLookup::new()
        .with_context("f.txt", ctx)
        .with_output("f.txt", out)
        .with_context("g.txt", ctx);

    // Output wins over context: editing text that only the context has fails, with base=output.
    let err = apply_response(
        DiffMode::SearchReplace,
        &[single("f.txt", &id("f.txt", out), "context", "x")],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file f.txt (base=output): old_string not found in file"]
    );
    let ok = apply_response(
        DiffMode::SearchReplace,
        &[single("f.txt", &id("f.txt", out), "output", "x")],
        &lookup,
    )
    .unwrap();
    assert_eq!(ok, vec![fw("f.txt", "from x\n")]);

    // Context when there is no output.
    let err = apply_response(
        DiffMode::SearchReplace,
        &[single("g.txt", &id("g.txt", ctx), "zzz", "x")],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file g.txt (base=context): old_string not found in file"]
    );

    // A pending write earlier in the response wins over both; the model may quote the id it
    // was shown (of the output) or that of its own pending write.
    let calls = [
        write("f.txt", "rewritten\n"),
        single("f.txt", &id("f.txt", out), "rewritten", "edited"),
        single("f.txt", &id("f.txt", "edited\n"), "edited", "again"),
    ];
    let ok = apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap();
    assert_eq!(ok, vec![fw("f.txt", "again\n")]);
    let calls = [
        write("f.txt", "rewritten\n"),
        single("f.txt", &id("f.txt", out), "output", "x"),
    ];
    let err = apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file f.txt (base=pending): old_string not found in file"]
    );
}

#[test]
fn file_id_mismatch() {
    let lookup = MemoryLookup::new()
        .with_context("a.txt", A)
        .with_output("o.txt", "out\n")
        .with_context("o.txt", "ctx\n");
    let cases = [
        (
            single("a.txt", "deadbeef", "alpha", "x"),
            format!(
                "edit_file a.txt: file_id mismatch: got deadbeef, expected {} (base=context). Use the writable @file id for this path.",
                id("a.txt", A)
            ),
        ),
        (
            // The id of the context version does not match when an output file exists.
            single("o.txt", &id("o.txt", "ctx\n"), "out", "x"),
            format!(
                "edit_file o.txt: file_id mismatch: got {}, expected {} (base=output). Use the writable @file id for this path.",
                id("o.txt", "ctx\n"),
                id("o.txt", "out\n")
            ),
        ),
        (
            // The id covers the path: the right content under another path's id fails.
            single("a.txt", &id("b.txt", A), "alpha", "x"),
            format!(
                "edit_file a.txt: file_id mismatch: got {}, expected {} (base=context). Use the writable @file id for this path.",
                id("b.txt", A),
                id("a.txt", A)
            ),
        ),
    ];
    for (call, want) in cases {
        let err = apply_response(DiffMode::SearchReplace, &[call], &lookup).unwrap_err();
        assert_eq!(err.errors, vec![want]);
    }
    // Case and surrounding spaces do not matter.
    let upper = format!(" {} ", id("a.txt", A).to_uppercase());
    assert!(
        apply_response(
            DiffMode::SearchReplace,
            &[single("a.txt", &upper, "alpha", "x")],
            &lookup
        )
        .is_ok()
    );
}

#[test]
fn file_id_of_a_file_first_written_in_this_response() {
    let lookup = MemoryLookup::new();
    let calls = [
        write("n.txt", "one\n"),
        single("n.txt", &id("n.txt", "one\n"), "one", "two"),
    ];
    assert_eq!(
        apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap(),
        vec![fw("n.txt", "two\n")]
    );
    let calls = [
        write("n.txt", "one\n"),
        single("n.txt", "00000000", "one", "two"),
    ];
    let err = apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap_err();
    assert_eq!(
        err.errors,
        vec![format!(
            "edit_file n.txt: file_id mismatch: got 00000000, expected {} (base=pending). Use the writable @file id for this path.",
            id("n.txt", "one\n")
        )]
    );
}

#[test]
fn noops() {
    let lookup = MemoryLookup::new().with_context("a.txt", A);
    let a = id("a.txt", A);
    // All no-ops: the call fails.
    let err = apply_response(
        DiffMode::SearchReplaceMulti,
        &[multi(&[edit_obj("a.txt", &a, "beta", "beta")])],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file edit 0 (a.txt, base=context): all edits are no-ops"]
    );
    let err = apply_response(
        DiffMode::SearchReplaceMulti,
        &[multi(&[
            edit_obj("a.txt", &a, "x", "x"),
            edit_obj("a.txt", &a, "missing", "missing"),
        ])],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file edit 0 (a.txt, base=context): all edits are no-ops"]
    );
    let err = apply_response(
        DiffMode::SearchReplace,
        &[single("a.txt", &a, "beta", "beta")],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file a.txt (base=context): all edits are no-ops"]
    );

    // A no-op among real edits is dropped unchecked (even with a text that is not there).
    let calls = [multi(&[
        edit_obj("a.txt", &a, "not there", "not there"),
        edit_obj("a.txt", &a, "beta", "BETA"),
    ])];
    let ok = apply_response(DiffMode::SearchReplaceMulti, &calls, &lookup).unwrap();
    assert_eq!(ok, vec![fw("a.txt", "alpha\nBETA\ngamma\ndelta\n")]);
}

#[test]
fn replace_all_through_the_buffer() {
    let lookup = MemoryLookup::new().with_context("r.txt", "x y x\n");
    let json = format!(
        r#"{{"path":"r.txt","file_id":{},"old_string":"x","new_string":"z","replace_all":true}}"#,
        js(&id("r.txt", "x y x\n"))
    );
    let ok = apply_response(
        DiffMode::SearchReplace,
        &[call("edit_file", &json)],
        &lookup,
    )
    .unwrap();
    assert_eq!(ok, vec![fw("r.txt", "z y z\n")]);
    let err = apply_response(
        DiffMode::SearchReplace,
        &[single("r.txt", &id("r.txt", "x y x\n"), "x", "z")],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file r.txt (base=context): old_string not unique (2 matches at lines 1, 1)"]
    );
}

#[test]
fn errors_of_several_calls_are_all_reported_each_as_its_call_reads() {
    let lookup = MemoryLookup::new().with_context("a.txt", A);
    let a = id("a.txt", A);
    let calls = [
        single("a.txt", &a, "alpha", "ALPHA"),
        single("a.txt", &a, "nope", "x"),
        write("w.txt", "w\n"),
        single("missing.txt", "12345678", "x", "y"),
        ToolCall::from_raw_arguments("call", "edit_file", "{not json"),
        call("delete_file", r#"{"path":"a.txt"}"#),
        write("w.txt", "again\n"),
        single("../escape.txt", "12345678", "x", "y"),
        call(
            "edit_file",
            r#"{"path":"a.txt","file_id":"x","old_string":1,"new_string":"y"}"#,
        ),
    ];
    let err = apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap_err();
    let json_err = calls[4].arguments_error.clone().unwrap();
    assert_eq!(
        err.errors,
        vec![
            "edit_file a.txt (base=pending): old_string not found in file".to_owned(),
            "edit_file missing.txt (base=none): file not found in the chat's output or context; \
             create new files with write_file"
                .to_owned(),
            format!("edit_file ? (base=none): arguments are not valid JSON ({json_err})"),
            "delete_file (a.txt): unknown tool `delete_file`: use write_file or edit_file"
                .to_owned(),
            "write_file (w.txt): write_file was already called for this path in this response; \
             send one complete write_file per file"
                .to_owned(),
            "edit_file ../escape.txt (base=none): path \"../escape.txt\" must be relative to the \
             project root and stay inside it"
                .to_owned(),
            "edit_file a.txt (base=none): `old_string` must be a string".to_owned(),
        ]
    );
    let tools: Vec<(&str, &str)> = err
        .tool_calls
        .iter()
        .map(|t| (t.tool.as_str(), t.path.as_str()))
        .collect();
    assert_eq!(
        tools,
        vec![
            ("edit_file", "a.txt"),
            ("edit_file", "missing.txt"),
            ("edit_file", ""),
            ("delete_file", "a.txt"),
            ("write_file", "w.txt"),
            ("edit_file", "../escape.txt"),
            ("edit_file", "a.txt"),
        ]
    );
    assert_eq!(err.to_string(), err.errors.join("\n"));
}

#[test]
fn argument_shapes_per_mode() {
    let lookup = MemoryLookup::new().with_context("a.txt", A);
    let a = id("a.txt", A);
    let cases: Vec<(DiffMode, ToolCall, &str)> = vec![
        (
            DiffMode::Off,
            single("a.txt", &a, "alpha", "x"),
            "edit_file a.txt (base=none): edit_file is not available (diff_mode is off): use write_file",
        ),
        (
            DiffMode::SearchReplaceMulti,
            call("edit_file", r#"{"path":"a.txt","file_id":"x"}"#),
            "edit_file edit 0 (a.txt, base=none): missing `edits` (an array of {path, file_id, old_string, new_string})",
        ),
        (
            DiffMode::SearchReplaceMulti,
            multi(&[]),
            "edit_file edit 0 (?, base=none): `edits` is empty: give at least one edit",
        ),
        (
            DiffMode::SearchReplace,
            call(
                "edit_file",
                r#"{"path":"a.txt","old_string":"alpha","new_string":"b"}"#,
            ),
            "edit_file a.txt: file_id missing: expected d129a2ec for a.txt (base=context). \
             Include file_id from the current writable @file id.",
        ),
        (
            DiffMode::SearchReplace,
            call(
                "edit_file",
                r#"{"path":"a.txt","file_id":"x","old_string":"a","new_string":"b","replace_all":"yes"}"#,
            ),
            "edit_file a.txt (base=none): `replace_all` must be a boolean",
        ),
        (
            DiffMode::SearchReplace,
            call("edit_file", "[1]"),
            "edit_file ? (base=none): arguments must be a JSON object",
        ),
        (
            DiffMode::Anchored,
            call(
                "edit_file",
                r#"{"path":"a.txt","file_id":"x","changes":[{"start":"a"}]}"#,
            ),
            "edit_file a.txt: change 1: `start` must be an array of strings",
        ),
        (
            DiffMode::SearchReplace,
            call("write_file", r#"{"path":"a.txt"}"#),
            "write_file (a.txt): missing `content`",
        ),
        (
            DiffMode::SearchReplace,
            write("/etc/passwd", "x"),
            "write_file (/etc/passwd): path \"/etc/passwd\" must be relative to the project root and stay inside it",
        ),
    ];
    for (mode, c, want) in cases {
        let err = apply_response(mode, &[c], &lookup).unwrap_err();
        assert_eq!(err.errors, vec![want.to_owned()], "{mode}");
    }
}

#[test]
fn both_search_replace_shapes_are_read_in_both_modes() {
    let lookup = MemoryLookup::new().with_context("a.txt", A);
    let a = id("a.txt", A);
    for mode in [DiffMode::SearchReplace, DiffMode::SearchReplaceMulti] {
        let calls = [
            single("a.txt", &a, "alpha", "ALPHA"),
            multi(&[
                edit_obj("a.txt", &a, "beta", "BETA"),
                edit_obj("a.txt", &a, "gamma", "GAMMA"),
            ]),
        ];
        let ok = apply_response(mode, &calls, &lookup).unwrap();
        assert_eq!(
            ok,
            vec![fw("a.txt", "ALPHA\nBETA\nGAMMA\ndelta\n")],
            "{mode}"
        );
        assert_eq!(ok[0].file_id(), id("a.txt", "ALPHA\nBETA\nGAMMA\ndelta\n"));
    }
}

#[test]
fn lookup_by_reference() {
    let lookup = MemoryLookup::new().with_context("a.txt", A);
    let by_ref: &MemoryLookup = &lookup;
    let calls = [single("a.txt", &id("a.txt", A), "alpha", "x")];
    assert!(apply_response(DiffMode::SearchReplace, &calls, &by_ref).is_ok());
}

#[test]
fn anchored_mode_through_the_buffer() {
    let lookup = MemoryLookup::new().with_output("a.txt", A);
    let a = id("a.txt", A);
    let ok_call = call(
        "edit_file",
        &format!(
            r#"{{"path":"a.txt","file_id":{},"changes":[{{"start":["beta"],"end":["gamma"],"content":null}},{{"start":["delta"],"content":["DELTA"]}}]}}"#,
            js(&a)
        ),
    );
    let ok = apply_response(DiffMode::Anchored, &[ok_call], &lookup).unwrap();
    assert_eq!(ok, vec![fw("a.txt", "alpha\nDELTA\n")]);
    let overlap = call(
        "edit_file",
        &format!(
            r#"{{"path":"a.txt","file_id":{},"changes":[{{"start":["alpha"],"end":["gamma"],"content":null}},{{"start":["beta"],"content":["x"]}}]}}"#,
            js(&a)
        ),
    );
    let err = apply_response(DiffMode::Anchored, &[overlap], &lookup).unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file a.txt: change 1: regions overlap (lines 1-3 and 2-2) (start: \"beta\")"]
    );
}

#[test]
fn writes_keep_crlf_and_come_in_first_touch_order() {
    let lookup = MemoryLookup::new()
        .with_context("win.txt", "a\r\nb\r\n")
        .with_context("z.txt", "z\n");
    let calls = [
        single("z.txt", &id("z.txt", "z\n"), "z", "zz"),
        write("win.txt", "new\nlines\n"),
        write("./dir//n.txt", "n"),
        single(
            "win.txt",
            &id("win.txt", "a\r\nb\r\n"),
            "lines",
            "rows\nmore",
        ),
    ];
    let ok = apply_response(DiffMode::SearchReplace, &calls, &lookup).unwrap();
    assert_eq!(
        ok,
        vec![
            fw("z.txt", "zz\n"),
            fw("win.txt", "new\r\nrows\r\nmore\r\n"),
            fw("dir/n.txt", "n")
        ]
    );
}

#[test]
fn empty_old_string_fills_an_empty_file_only() {
    let lookup = MemoryLookup::new()
        .with_context("e.txt", "")
        .with_context("a.txt", A);
    let ok = apply_response(
        DiffMode::SearchReplace,
        &[single("e.txt", &id("e.txt", ""), "", "hello\n")],
        &lookup,
    )
    .unwrap();
    assert_eq!(ok, vec![fw("e.txt", "hello\n")]);
    let err = apply_response(
        DiffMode::SearchReplace,
        &[single("a.txt", &id("a.txt", A), "", "x")],
        &lookup,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        vec!["edit_file a.txt (base=context): old_string is empty but file has content"]
    );
}

#[test]
fn empty_response_writes_nothing() {
    let lookup = MemoryLookup::new();
    assert_eq!(
        apply_response(DiffMode::default(), &[], &lookup).unwrap(),
        vec![]
    );
}

#[test]
fn multi_edits_are_numbered_per_call_and_a_call_stops_at_its_first_failure() {
    let lookup = MemoryLookup::new()
        .with_context("a.txt", A)
        .with_context("b.txt", "bee\n");
    let a = id("a.txt", A);
    let calls = [
        multi(&[edit_obj("b.txt", &id("b.txt", "bee\n"), "bee", "BEE")]),
        multi(&[
            // A no-op is dropped before numbering.
            edit_obj("a.txt", &a, "same", "same"),
            edit_obj("a.txt", &a, "alpha", "ALPHA"),
            edit_obj("a.txt", "0000", "beta", "BETA"),
            edit_obj("a.txt", &a, "nope", "x"),
        ]),
        multi(&[edit_obj("a.txt", "", "gamma", "G")]),
    ];
    let err = apply_response(DiffMode::SearchReplaceMulti, &calls, &lookup).unwrap_err();
    assert_eq!(
        err.errors,
        vec![
            format!(
                "edit_file edit 1 (a.txt): file_id mismatch: got 0000, expected {a} \
                 (base=context). Use the writable @file id for this path."
            ),
            format!(
                "edit_file edit 0 (a.txt): file_id missing: expected {a} for a.txt \
                 (base=context). Include file_id from the current writable @file id."
            ),
        ]
    );
}

#[test]
fn an_anchored_change_without_content_deletes_its_region() {
    let lookup = MemoryLookup::new().with_context("a.txt", "one\ntwo\nthree\n");
    let a = id("a.txt", "one\ntwo\nthree\n");
    let change = format!(r#"{{"path":"a.txt","file_id":"{a}","changes":[{{"start":["two"]}}]}}"#);
    let writes =
        apply_response(DiffMode::Anchored, &[call("edit_file", &change)], &lookup).unwrap();
    assert_eq!(writes, vec![fw("a.txt", "one\nthree\n")]);
}
