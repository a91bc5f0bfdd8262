//! Tests of bb7's anchored edits: the three anchor passes, re-indent, `end` after `start`,
//! deletes, overlaps, bottom-up application, CRLF, missing trailing newlines and errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_edit::{Anchor, AnchoredChange, AnchoredError, apply_anchored};

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn change(start: &[&str], end: Option<&[&str]>, content: Option<&[&str]>) -> AnchoredChange {
    AnchoredChange {
        start: lines(start),
        end: end.map(lines),
        content: content.map(lines),
    }
}

const FILE: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a}\");\n}\n\nfn other() {\n    let b = 2;\n}\n";

#[test]
fn successful_changes() {
    let cases: Vec<(&str, &str, Vec<AnchoredChange>, &str)> = vec![
        (
            "start only, exact",
            FILE,
            vec![change(
                &["    let a = 1;"],
                None,
                Some(&["    let a = 10;"]),
            )],
            "fn main() {\n    let a = 10;\n    let b = 2;\n    println!(\"{a}\");\n}\n\nfn other() {\n    let b = 2;\n}\n",
        ),
        (
            "start and end, region replaced anchors included",
            FILE,
            vec![change(
                &["fn other() {"],
                Some(&["}"]),
                Some(&["fn other() {}"]),
            )],
            "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a}\");\n}\n\nfn other() {}\n",
        ),
        (
            "end that also occurs before start is searched after start",
            "}\nbegin\nx\n}\n",
            vec![change(&["begin"], Some(&["}"]), Some(&["replaced"]))],
            "}\nreplaced\n",
        ),
        (
            "null content deletes the region",
            FILE,
            vec![change(&["", "fn other() {"], Some(&["}"]), None)],
            "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a}\");\n}\n",
        ),
        (
            "empty content deletes too",
            "a\nb\nc\n",
            vec![change(&["b"], None, Some(&[]))],
            "a\nc\n",
        ),
        (
            "trailing-whitespace anchor",
            "a  \nb\n",
            vec![change(&["a"], None, Some(&["A"]))],
            "A\nb\n",
        ),
        (
            "whitespace-insensitive anchor re-indents content",
            "class X:\n    def f(self):\n        return 1\n",
            vec![change(
                &["def f(self):", "    return 1"],
                None,
                Some(&["def f(self):", "    x = 2", "    return x"]),
            )],
            "class X:\n    def f(self):\n        x = 2\n        return x\n",
        ),
        (
            "several changes applied bottom-up with line counts changing",
            "one\ntwo\nthree\nfour\n",
            vec![
                change(&["one"], None, Some(&["1a", "1b", "1c"])),
                change(&["three"], Some(&["four"]), Some(&["34"])),
            ],
            "1a\n1b\n1c\ntwo\n34\n",
        ),
        (
            "changes given bottom first",
            "one\ntwo\nthree\n",
            vec![
                change(&["three"], None, Some(&["3"])),
                change(&["one"], None, None),
            ],
            "two\n3\n",
        ),
        (
            "CRLF file stays CRLF",
            "a\r\nb\r\nc\r\n",
            vec![change(&["b"], None, Some(&["x", "y"]))],
            "a\r\nx\r\ny\r\nc\r\n",
        ),
        (
            "no trailing newline, last line replaced",
            "a\nb",
            vec![change(&["b"], None, Some(&["c"]))],
            "a\nc",
        ),
        (
            "no trailing newline, last line deleted",
            "a\nb\nc",
            vec![change(&["c"], None, None)],
            "a\nb",
        ),
        (
            "unicode lines",
            "ä\n😀 ünï\nß\n",
            vec![change(&["😀 ünï"], None, Some(&["→ ok"]))],
            "ä\n→ ok\nß\n",
        ),
        (
            "content entries with embedded newlines",
            "a\nb\n",
            vec![change(&["a"], None, Some(&["x\ny"]))],
            "x\ny\nb\n",
        ),
    ];
    for (name, file, changes, want) in cases {
        let got = apply_anchored(file, &changes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn errors() {
    let eleven: Vec<&str> = vec!["x"; 11];
    let cases: Vec<(&str, &str, Vec<AnchoredChange>, AnchoredError, &str)> = vec![
        (
            "no changes",
            FILE,
            vec![],
            AnchoredError::NoChanges,
            "changes is empty: give at least one change",
        ),
        (
            "start not found",
            FILE,
            vec![change(&["nope"], None, None)],
            AnchoredError::NotFound {
                change: 0,
                anchor: Anchor::Start,
            },
            "change 0: anchor not found",
        ),
        (
            "start not unique",
            FILE,
            vec![change(&["let b = 2;"], None, None)],
            AnchoredError::NotUnique {
                change: 0,
                anchor: Anchor::Start,
                lines: vec![3, 8],
            },
            "change 0: anchor not unique (lines 3, 8)",
        ),
        (
            "end not found after start",
            "end\nbegin\nx\n",
            vec![change(&["begin"], Some(&["end"]), None)],
            AnchoredError::NotFound {
                change: 0,
                anchor: Anchor::End,
            },
            "change 0: end: anchor not found",
        ),
        (
            "end not unique after start",
            FILE,
            vec![change(&["    let a = 1;"], Some(&["}"]), None)],
            AnchoredError::NotUnique {
                change: 0,
                anchor: Anchor::End,
                lines: vec![5, 9],
            },
            "change 0: end: anchor not unique (lines 5, 9)",
        ),
        (
            "second change fails",
            FILE,
            vec![
                change(&["fn main() {"], None, None),
                change(&["missing"], None, None),
            ],
            AnchoredError::NotFound {
                change: 1,
                anchor: Anchor::Start,
            },
            "change 1: anchor not found",
        ),
        (
            "overlap",
            "a\nb\nc\nd\n",
            vec![
                change(&["a"], Some(&["c"]), None),
                change(&["b"], Some(&["d"]), None),
            ],
            AnchoredError::Overlap {
                first: 0,
                second: 1,
                first_lines: (1, 3),
                second_lines: (2, 4),
            },
            "change 1: regions overlap (lines 1-3 and 2-4)",
        ),
        (
            "same region twice overlaps",
            "a\nb\n",
            vec![
                change(&["b"], None, None),
                change(&["a"], Some(&["b"]), None),
            ],
            AnchoredError::Overlap {
                first: 1,
                second: 0,
                first_lines: (1, 2),
                second_lines: (2, 2),
            },
            "change 0: regions overlap (lines 1-2 and 2-2)",
        ),
        (
            "anchor too long",
            FILE,
            vec![change(&eleven, None, None)],
            AnchoredError::AnchorLength {
                change: 0,
                anchor: Anchor::Start,
                lines: 11,
            },
            "change 0: start anchor too long (11 lines, max 10)",
        ),
        (
            "empty anchor",
            FILE,
            vec![change(&[], None, None)],
            AnchoredError::AnchorLength {
                change: 0,
                anchor: Anchor::Start,
                lines: 0,
            },
            "change 0: empty start anchor",
        ),
    ];
    for (name, file, changes, want, message) in cases {
        let got = apply_anchored(file, &changes).unwrap_err();
        assert_eq!(got, want, "{name}");
        assert_eq!(got.to_string(), message, "{name}");
    }
}

#[test]
fn exact_pass_wins_over_whitespace_passes() {
    // "x" matches line 2 exactly; the whitespace-insensitive pass would also match line 1,
    // but is not consulted.
    let got = apply_anchored("  x\nx\n", &[change(&["x"], None, Some(&["y"]))]).unwrap();
    assert_eq!(got, "  x\ny\n");
}
