//! Table-driven tests of bb7's search/replace matching: each of the five passes, re-indent,
//! CRLF files, files without a trailing newline, unicode, `replace_all` and every error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_edit::{MatchPass, SearchReplace, SearchReplaceError, apply_search_replace};

/// One successful case: file, old, new, replace_all, expected file, expected pass, replacements.
struct Ok {
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    all: bool,
    want: &'static str,
    pass: Option<MatchPass>,
    count: usize,
}

fn check_ok(cases: &[Ok]) {
    for c in cases {
        let edit = SearchReplace::new(c.old, c.new).replace_all(c.all);
        let got = apply_search_replace(c.file, &edit).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(got.content, c.want, "{}: content", c.name);
        assert_eq!(got.pass, c.pass, "{}: pass", c.name);
        assert_eq!(got.replacements, c.count, "{}: replacements", c.name);
    }
}

use MatchPass::*;

#[test]
fn pass_1_exact() {
    check_ok(&[
        Ok {
            name: "whole line",
            file: "fn a() {}\nfn b() {}\n",
            old: "fn b() {}",
            new: "fn c() {}",
            all: false,
            want: "fn a() {}\nfn c() {}\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "inside a line",
            file: "let x = 1;\n",
            old: "x = 1",
            new: "y = 2",
            all: false,
            want: "let y = 2;\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "several lines with newline",
            file: "a\nb\nc\n",
            old: "a\nb\n",
            new: "x\n",
            all: false,
            want: "x\nc\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "delete a line",
            file: "a\nb\nc\n",
            old: "b\n",
            new: "",
            all: false,
            want: "a\nc\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "exact wins over a later pass that would also match",
            file: "x \nx\n",
            old: "x\n",
            new: "y\n",
            all: false,
            want: "x \ny\n",
            pass: Some(Exact),
            count: 1,
        },
    ]);
}

#[test]
fn pass_2_trailing_whitespace() {
    check_ok(&[
        Ok {
            name: "file has trailing spaces and tabs",
            file: "a  \nb\t\nc\n",
            old: "a\nb",
            new: "A\nB",
            all: false,
            want: "A\nB\nc\n",
            pass: Some(TrailingWhitespace),
            count: 1,
        },
        Ok {
            name: "old has trailing spaces",
            file: "x\ny\nz\n",
            old: "x   \ny",
            new: "w",
            all: false,
            want: "w\nz\n",
            pass: Some(TrailingWhitespace),
            count: 1,
        },
        Ok {
            name: "old ends with newline: the line's newline is consumed",
            file: "keep\ndrop  \nkeep2\n",
            old: "drop\n",
            new: "",
            all: false,
            want: "keep\nkeep2\n",
            pass: Some(TrailingWhitespace),
            count: 1,
        },
    ]);
}

#[test]
fn pass_3_indentation_with_reindent() {
    check_ok(&[
        Ok {
            name: "model quoted without indentation: new_string is indented",
            file: "fn f() {\n    if a {\n        b();\n    }\n}\n",
            old: "if a {\n    b();\n}",
            new: "if a {\n    c();\n    d();\n}",
            all: false,
            want: "fn f() {\n    if a {\n        c();\n        d();\n    }\n}\n",
            pass: Some(Indentation),
            count: 1,
        },
        Ok {
            name: "model over-indented: new_string is dedented",
            file: "x = 1\ny = 2\n",
            old: "    x = 1\n    y = 2",
            new: "    x = 10\n        nested\n    y = 20",
            all: false,
            want: "x = 10\n    nested\ny = 20\n",
            pass: Some(Indentation),
            count: 1,
        },
        Ok {
            name: "tabs in the file, spaces from the model",
            file: "\tfoo();\n\tbar();\n",
            old: "    foo();\n    bar();",
            new: "    foo(1);\n    bar(2);",
            all: false,
            want: "\tfoo(1);\n\tbar(2);\n",
            pass: Some(Indentation),
            count: 1,
        },
        Ok {
            name: "blank lines stay blank",
            file: "  a\n\n  b\n",
            old: "a\n\nb",
            new: "a\n\nc",
            all: false,
            want: "  a\n\n  c\n",
            pass: Some(Indentation),
            count: 1,
        },
    ]);
}

#[test]
fn pass_4_cut_off_first_and_last_lines() {
    check_ok(&[
        Ok {
            name: "last line cut off: the rest of the real line is kept",
            file: "    let result = compute(alpha, beta);\n    let other = 2;\n    return result + other;\n",
            old: "let result = compute(alpha, beta);\nlet other = 2;\nreturn result",
            new: "let result = compute(alpha);\nlet other = 3;\nreturn result",
            all: false,
            want: "    let result = compute(alpha);\n    let other = 3;\n    return result + other;\n",
            pass: Some(CutOff),
            count: 1,
        },
        Ok {
            name: "first line cut off: the whole line is replaced",
            file: "fn long_function_name(a: i32, b: i32) {\n    body();\n}\n",
            old: "fn long_function_name(a: i32,\n    body();",
            new: "fn long_function_name(a: i64, b: i64) {\n    body2();",
            all: false,
            want: "fn long_function_name(a: i64, b: i64) {\n    body2();\n}\n",
            pass: Some(CutOff),
            count: 1,
        },
        Ok {
            name: "first line cut off at its start: the unquoted start is kept, the rest re-indented",
            file: "    let value = compute(alpha, beta);\n    if value > 10 {\n        go();\n    }\n",
            old: "compute(alpha, beta);\nif value > 10 {\n    go();",
            new: "compute(alpha, gamma);\nif value > 20 {\n    stop();",
            all: false,
            want: "    let value = compute(alpha, gamma);\n    if value > 20 {\n        stop();\n    }\n",
            pass: Some(CutOff),
            count: 1,
        },
        Ok {
            name: "inner lines compared trimmed",
            file: "start_of_block {\n      inner\n   more\nend_of_block }\n",
            old: "start_of_block\ninner\nmore\nend_of_block",
            new: "start_of_block {\nreplaced\nend_of_block",
            all: false,
            want: "start_of_block {\nreplaced\nend_of_block }\n",
            pass: Some(CutOff),
            count: 1,
        },
    ]);
}

#[test]
fn pass_4_needs_eight_characters_and_two_lines() {
    // 7 characters of cut-off prefix is not enough.
    let e = apply_search_replace(
        "abcdefghij();\nx();\n",
        &SearchReplace::new("abcdefg\nx();", "y"),
    )
    .unwrap_err();
    assert_eq!(e, SearchReplaceError::NotFound);
    // 8 are; a cut-off first line is replaced whole.
    let r = apply_search_replace(
        "abcdefghij();\nx();\n",
        &SearchReplace::new("abcdefgh\nx();", "y"),
    )
    .unwrap();
    assert_eq!((r.content.as_str(), r.pass), ("y\n", Some(CutOff)));
    // A cut-off last line keeps its unquoted rest.
    let r = apply_search_replace(
        "  x();\n  abcdefghij();\n",
        &SearchReplace::new("x();\n abcdefgh", "y\nz"),
    )
    .unwrap();
    assert_eq!(
        (r.content.as_str(), r.pass),
        ("  y\n  zij();\n", Some(CutOff))
    );
    // A one-line old_string is never a cut-off match.
    let e = apply_search_replace("abcdefghij();\n", &SearchReplace::new("  abcdefghi\t", "y"))
        .unwrap_err();
    assert_eq!(e, SearchReplaceError::NotFound);
}

#[test]
fn pass_5_crlf_normalised_substring() {
    check_ok(&[
        Ok {
            name: "LF old_string inside a CRLF file, not line-aligned",
            file: "alpha beta\r\ngamma delta\r\n",
            old: "beta\ngamma",
            new: "BETA\nGAMMA",
            all: false,
            want: "alpha BETA\r\nGAMMA delta\r\n",
            pass: Some(Normalized),
            count: 1,
        },
        Ok {
            name: "CRLF old_string inside an LF file",
            file: "alpha beta\ngamma delta\n",
            old: "beta\r\ngamma",
            new: "BETA\r\nGAMMA",
            all: false,
            want: "alpha BETA\nGAMMA delta\n",
            pass: Some(Normalized),
            count: 1,
        },
    ]);
}

#[test]
fn crlf_files_stay_crlf() {
    check_ok(&[
        Ok {
            name: "line-based match, LF new_string",
            file: "a\r\nb\r\nc\r\n",
            old: "a\nb",
            new: "x\ny\nz",
            all: false,
            want: "x\r\ny\r\nz\r\nc\r\n",
            pass: Some(TrailingWhitespace),
            count: 1,
        },
        Ok {
            name: "exact single line, multi-line LF new_string",
            file: "a\r\nb\r\nc\r\n",
            old: "b",
            new: "b1\nb2",
            all: false,
            want: "a\r\nb1\r\nb2\r\nc\r\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "CRLF old and new strings",
            file: "a\r\nb\r\n",
            old: "a\r\nb\r\n",
            new: "c\r\n",
            all: false,
            want: "c\r\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "re-indent in a CRLF file",
            file: "{\r\n    x;\r\n}\r\n",
            old: "x;",
            new: "x;\ny;",
            all: false,
            want: "{\r\n    x;\r\ny;\r\n}\r\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "re-indent pass in a CRLF file",
            file: "{\r\n    x;\r\n    w;\r\n}\r\n",
            old: "x;\nw;",
            new: "x;\ny;",
            all: false,
            want: "{\r\n    x;\r\n    y;\r\n}\r\n",
            pass: Some(Indentation),
            count: 1,
        },
    ]);
}

#[test]
fn matches_never_split_a_crlf() {
    // "\nb" occurs exactly between the \r and \n of the file; taking it would leave a lone \r.
    // The line-based passes and the CRLF-normalised pass take whole line endings instead.
    let got = apply_search_replace("a\r\nb\r\n", &SearchReplace::new("\nb", "\nc")).unwrap();
    assert_eq!(
        (got.content.as_str(), got.pass),
        ("a\r\nc\r\n", Some(Normalized))
    );
    // "a\r" ends inside a CRLF: not taken exactly, but as the whole line "a" by pass 2.
    let got = apply_search_replace("a\r\nb\r\n", &SearchReplace::new("a\r", "z")).unwrap();
    assert_eq!(
        (got.content.as_str(), got.pass),
        ("z\r\nb\r\n", Some(TrailingWhitespace))
    );
}

#[test]
fn trailing_newline_state_is_kept() {
    check_ok(&[
        Ok {
            name: "no trailing newline, exact",
            file: "a\nb",
            old: "b",
            new: "c",
            all: false,
            want: "a\nc",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "no trailing newline, old and new end with newline",
            file: "a\nb",
            old: "b\n",
            new: "c\n",
            all: false,
            want: "a\nc",
            pass: Some(TrailingWhitespace),
            count: 1,
        },
        Ok {
            name: "trailing newline, model's new_string drops it",
            file: "a\nb\n",
            old: "b\n",
            new: "c",
            all: false,
            want: "a\nc\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "CRLF file without trailing newline",
            file: "a\r\nb",
            old: "b",
            new: "c\n",
            all: false,
            want: "a\r\nc",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "deleting everything leaves an empty file",
            file: "only\n",
            old: "only\n",
            new: "",
            all: false,
            want: "",
            pass: Some(Exact),
            count: 1,
        },
    ]);
}

#[test]
fn unicode_is_safe() {
    check_ok(&[
        Ok {
            name: "multi-byte exact",
            file: "naïve café 😀\nşey\n",
            old: "café 😀",
            new: "thé 🍵",
            all: false,
            want: "naïve thé 🍵\nşey\n",
            pass: Some(Exact),
            count: 1,
        },
        Ok {
            name: "multi-byte cut-off counts characters",
            file: "    first line\n    ññññññññññ tail\n",
            old: "first line\nññññññññ",
            new: "first\nX",
            all: false,
            want: "    first\n    Xññ tail\n",
            pass: Some(CutOff),
            count: 1,
        },
        Ok {
            name: "multi-byte CRLF normalised",
            file: "é → a\r\nb ← ü\r\n",
            old: "a\nb",
            new: "α\nβ",
            all: false,
            want: "é → α\r\nβ ← ü\r\n",
            pass: Some(Normalized),
            count: 1,
        },
        Ok {
            name: "full-width indentation re-indented",
            file: "\u{3000}日本語\n",
            old: "日本語",
            new: "中文\n第二",
            all: false,
            want: "\u{3000}中文\n第二\n",
            pass: Some(Exact),
            count: 1,
        },
    ]);
    // Seven multi-byte characters (14 bytes) are still too short for a cut-off.
    let e = apply_search_replace(
        "ññññññññññ\n  next\n",
        &SearchReplace::new("ñññññññ\nnext", "x"),
    )
    .unwrap_err();
    assert_eq!(e, SearchReplaceError::NotFound);
}

#[test]
fn replace_all() {
    check_ok(&[
        Ok {
            name: "exact, several per line",
            file: "foo bar foo\nfoo\n",
            old: "foo",
            new: "baz",
            all: true,
            want: "baz bar baz\nbaz\n",
            pass: Some(Exact),
            count: 3,
        },
        Ok {
            name: "re-indented at each match",
            file: "  a\n  b\n    a\n    b\n",
            old: "a\nb",
            new: "c\nd",
            all: true,
            want: "  c\n  d\n    c\n    d\n",
            pass: Some(Indentation),
            count: 2,
        },
        Ok {
            name: "single match with replace_all",
            file: "x\n",
            old: "x",
            new: "y",
            all: true,
            want: "y\n",
            pass: Some(Exact),
            count: 1,
        },
    ]);
}

#[test]
fn empty_old_string_only_on_empty_file() {
    let r = apply_search_replace("", &SearchReplace::new("", "hello\n")).unwrap();
    assert_eq!((r.content.as_str(), r.pass), ("hello\n", None));
    let e = apply_search_replace("x\n", &SearchReplace::new("", "hello\n")).unwrap_err();
    assert_eq!(e, SearchReplaceError::EmptyOldString);
    assert_eq!(e.to_string(), "old_string is empty but file has content");
}

#[test]
fn error_strings() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("not found", "a\nb\n", "c", "old_string not found in file"),
        (
            "not found in empty file",
            "",
            "c",
            "old_string not found in file",
        ),
        (
            "not unique, exact",
            "x\ny\nx\nz\nx\n",
            "x",
            "old_string not unique (3 matches at lines 1, 3, 5)",
        ),
        (
            "not unique, second pass",
            "a \nb\na\t\n",
            "a",
            "old_string not unique (2 matches at lines 1, 3)",
        ),
        (
            "not unique, third pass",
            "  q\nr\n    q\n",
            "\tq",
            "old_string not unique (2 matches at lines 1, 3)",
        ),
        (
            "not unique, multi-line",
            "p\nq\np\nq\n",
            "p\nq",
            "old_string not unique (2 matches at lines 1, 3)",
        ),
        (
            "not unique, mid-line",
            "ab ab\n",
            "ab",
            "old_string not unique (2 matches at lines 1, 1)",
        ),
    ];
    for (name, file, old, want) in cases {
        let e = apply_search_replace(file, &SearchReplace::new(*old, "zz")).unwrap_err();
        assert_eq!(e.to_string(), *want, "{name}");
    }
}

#[test]
fn not_unique_lists_at_most_twenty_lines() {
    let file = "x\n".repeat(30);
    let e = apply_search_replace(&file, &SearchReplace::new("x", "y")).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("old_string not unique (30 matches at lines 1, 2, 3,"),
        "{msg}"
    );
    assert!(msg.ends_with("19, 20, ...)"), "{msg}");
}

#[test]
fn noop_detection() {
    assert!(SearchReplace::new("a", "a").is_noop());
    assert!(!SearchReplace::new("a", "b").is_noop());
}
