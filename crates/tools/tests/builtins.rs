//! The six built-ins: their results field by field and every failure message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;

#[test]
fn read_file_numbers_lines_and_windows() {
    let f = Fixture::new();
    assert_eq!(
        f.call("read_file", json!({"path": "a.txt"})).unwrap(),
        json!({"content": "     1\talpha\n     2\tbeta\n     3\tgamma\n", "total_lines": 3, "truncated": false})
    );
    assert_eq!(
        f.call(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 1})
        )
        .unwrap(),
        json!({"content": "     2\tbeta\n", "total_lines": 3, "truncated": true})
    );
    std::fs::write(f.root.join("empty.txt"), "").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "empty.txt"})).unwrap(),
        json!({"content": "", "total_lines": 0, "truncated": false})
    );
}

#[test]
fn read_file_default_limit_is_500_lines() {
    let f = Fixture::new();
    let text: String = (1..=600).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.root.join("long.txt"), text).unwrap();
    let result = f.call("read_file", json!({"path": "long.txt"})).unwrap();
    assert_eq!(result["total_lines"], 600);
    assert_eq!(result["truncated"], true);
    let content = result["content"].as_str().unwrap();
    assert_eq!(content.lines().count(), 500);
    assert!(content.ends_with("   500\tline 500\n"));
}

#[test]
fn read_file_errors() {
    let f = Fixture::new();
    std::fs::write(f.root.join("bin.dat"), [0x7f, b'E', b'L', b'F', 0, 1, 2]).unwrap();
    assert_eq!(
        f.err("read_file", json!({"path": "bin.dat"})),
        "`bin.dat` is a binary file (7 bytes); only text files can be read or edited"
    );
    assert_eq!(
        f.err("read_file", json!({"path": "a.txt", "offset": 9})),
        "offset 9 is past the end of `a.txt`, which has 3 lines"
    );
    assert_eq!(
        f.err("read_file", json!({"path": "a.txt", "offset": 0})),
        "invalid arguments for `read_file`: argument `offset` must be at least 1, got 0"
    );
    assert_eq!(
        f.err("read_file", json!({"path": "missing.txt"})),
        format!("`{}` does not exist", f.root.join("missing.txt").display())
    );
    assert_eq!(
        f.err("read_file", json!({"path": "src"})),
        format!(
            "`{}` is a directory, not a file",
            f.root.join("src").display()
        )
    );
    assert_eq!(
        f.err("read_file", json!({})),
        "invalid arguments for `read_file`: missing required argument `path`"
    );
}

#[test]
fn write_file_creates_parents_and_reports_bytes() {
    let f = Fixture::new();
    let result = f
        .call(
            "write_file",
            json!({"path": "new/deep/file.txt", "content": "héllo\n"}),
        )
        .unwrap();
    assert_eq!(result, json!({"success": true, "bytes_written": 7}));
    assert_eq!(
        std::fs::read_to_string(f.root.join("new/deep/file.txt")).unwrap(),
        "héllo\n"
    );
    // Overwrite keeps the permission bits and leaves no temp files.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(f.root.join("a.txt"), std::fs::Permissions::from_mode(0o750)).unwrap();
    f.call("write_file", json!({"path": "a.txt", "content": "x"}))
        .unwrap();
    let mode = std::fs::metadata(f.root.join("a.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
    let names: Vec<String> = std::fs::read_dir(&f.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(
        f.err("write_file", json!({"path": "src", "content": "x"})),
        format!(
            "`{}` is a directory, not a file",
            f.root.join("src").display()
        )
    );
}

#[test]
fn edit_file_replaces_unique_text() {
    let f = Fixture::new();
    let result = f
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_text": "beta\n", "new_text": "BETA\n"}),
        )
        .unwrap();
    assert_eq!(
        result,
        json!({"success": true, "replacements": 1, "error": null})
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("a.txt")).unwrap(),
        "alpha\nBETA\ngamma\n"
    );
}

#[test]
fn edit_file_not_unique_says_where() {
    let f = Fixture::new();
    std::fs::write(f.root.join("dup.txt"), "x = 1\ny = 2\nx = 1\n").unwrap();
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 3"})
        ),
        "old_text is not unique in `dup.txt`: it matches 2 times (lines 1, 3); include more surrounding lines to make it unique, or set replace_all to true"
    );
    let result = f
        .call("edit_file", json!({"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 3", "replace_all": true}))
        .unwrap();
    assert_eq!(result["replacements"], 2);
    assert_eq!(
        std::fs::read_to_string(f.root.join("dup.txt")).unwrap(),
        "x = 3\ny = 2\nx = 3\n"
    );
}

#[test]
fn edit_file_not_found_says_where_the_first_line_is() {
    let f = Fixture::new();
    std::fs::write(f.root.join("code.rs"), "fn a() {\n    let x = 1;\n}\n").unwrap();
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "code.rs", "old_text": "let x = 1;\nlet y = 2;", "new_text": ""})
        ),
        "old_text was not found in `code.rs`; its first line appears (ignoring indentation) at line 2: check whitespace and the following lines"
    );
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "code.rs", "old_text": "nothing like it", "new_text": ""})
        ),
        "old_text was not found in `code.rs`; read the file again and copy the exact text to replace"
    );
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "code.rs", "old_text": "", "new_text": "x"})
        ),
        "old_text is empty; give the exact text to replace (use write_file to write a whole file)"
    );
}

#[test]
fn edit_file_keeps_crlf_line_endings() {
    let f = Fixture::new();
    std::fs::write(f.root.join("win.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    f.call(
        "edit_file",
        json!({"path": "win.txt", "old_text": "one\ntwo", "new_text": "1\n2"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(f.root.join("win.txt")).unwrap(),
        "1\r\n2\r\nthree\r\n"
    );
}

#[test]
fn edit_file_applies_a_list_of_edits_in_order() {
    let f = Fixture::new();
    std::fs::write(
        f.root.join("m.rs"),
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n    two();\n}\n",
    )
    .unwrap();
    let result = f
        .call(
            "edit_file",
            json!({"path": "m.rs", "edits": [
                {"old_text": "fn a()", "new_text": "fn first()"},
                // Quoted with too much indentation: matched, and the new text re-indented.
                {"old_text": "        one();", "new_text": "        uno();\n        una();"},
                {"old_text": "two();", "new_text": "dos();", "replace_all": true},
                // Sees the result of the first edit.
                {"old_text": "fn first() {", "new_text": "pub fn first() {"}
            ]}),
        )
        .unwrap();
    assert_eq!(
        result,
        json!({"success": true, "replacements": 5, "error": null})
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("m.rs")).unwrap(),
        "pub fn first() {\n    uno();\n    una();\n}\n\nfn b() {\n    dos();\n    dos();\n}\n"
    );
}

#[test]
fn edit_file_tolerates_trailing_whitespace_and_indentation_drift() {
    let f = Fixture::new();
    std::fs::write(
        f.root.join("t.py"),
        "def f():\n        x = 1   \n        return x\n",
    )
    .unwrap();
    f.call(
        "edit_file",
        json!({"path": "t.py", "old_text": "    x = 1\n    return x", "new_text": "    x = 2\n    return x"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(f.root.join("t.py")).unwrap(),
        "def f():\n        x = 2\n        return x\n"
    );
}

#[test]
fn edit_file_list_is_all_or_nothing() {
    let f = Fixture::new();
    let before = std::fs::read_to_string(f.root.join("a.txt")).unwrap();
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "a.txt", "edits": [
                {"old_text": "alpha", "new_text": "ALPHA"},
                {"old_text": "delta", "new_text": "DELTA"}
            ]})
        ),
        "edit 2 of 2: old_text was not found in `a.txt`; read the file again and copy the exact text to replace (after the edits before it); no edit was applied, the file is unchanged"
    );
    std::fs::write(f.root.join("dup.txt"), "x\nx\n").unwrap();
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "dup.txt", "edits": [
                {"old_text": "x", "new_text": "y", "replace_all": false},
                {"old_text": "q", "new_text": "r"}
            ]})
        ),
        "edit 1 of 2: old_text is not unique in `dup.txt`: it matches 2 times (lines 1, 2); include more surrounding lines to make it unique, or set replace_all to true; no edit was applied, the file is unchanged"
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("a.txt")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("dup.txt")).unwrap(),
        "x\nx\n"
    );
}

#[test]
fn edit_file_argument_errors() {
    let f = Fixture::new();
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "a.txt", "old_text": "alpha", "new_text": "A", "edits": [{"old_text": "b", "new_text": "c"}]})
        ),
        "invalid arguments for `edit_file`: give either `edits` or `old_text`/`new_text`, not both"
    );
    assert_eq!(
        f.err("edit_file", json!({"path": "a.txt", "edits": []})),
        "invalid arguments for `edit_file`: `edits` is empty; give at least one {old_text, new_text}"
    );
    assert_eq!(
        f.err(
            "edit_file",
            json!({"path": "a.txt", "edits": [{"old_text": "alpha"}]})
        ),
        "invalid arguments for `edit_file`: edits[0]: missing required argument `new_text`"
    );
    assert_eq!(
        f.err("edit_file", json!({"path": "a.txt", "new_text": "x"})),
        "invalid arguments for `edit_file`: missing required argument `old_text`"
    );
}

#[test]
fn list_files_globs_sorted_respecting_gitignore() {
    let f = Fixture::new();
    std::fs::write(f.root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::create_dir_all(f.root.join("target")).unwrap();
    std::fs::create_dir_all(f.root.join(".git")).unwrap();
    std::fs::write(f.root.join("target/out.rs"), "").unwrap();
    std::fs::write(f.root.join(".git/config.rs"), "").unwrap();
    std::fs::write(f.root.join("debug.log"), "").unwrap();
    std::fs::write(f.root.join("src/b.rs"), "").unwrap();
    std::fs::write(f.root.join("top.rs"), "").unwrap();
    assert_eq!(
        f.call("list_files", json!({"pattern": "**/*.rs"})).unwrap(),
        json!({"files": ["src/b.rs", "src/lib.rs", "top.rs"], "total_matches": 3, "truncated": false})
    );
    assert_eq!(
        f.call("list_files", json!({"pattern": "*.rs"})).unwrap(),
        json!({"files": ["top.rs"], "total_matches": 1, "truncated": false})
    );
    assert_eq!(
        f.call(
            "list_files",
            json!({"pattern": "*.rs", "path": "src", "max_results": 1})
        )
        .unwrap(),
        json!({"files": ["src/b.rs"], "total_matches": 2, "truncated": true})
    );
    // An empty pattern or `.` lists every file rather than none.
    for pattern in ["", " ", ".", "./"] {
        assert_eq!(
            f.call("list_files", json!({"pattern": pattern})).unwrap()["files"],
            json!([".gitignore", "a.txt", "src/b.rs", "src/lib.rs", "top.rs"]),
            "{pattern:?}"
        );
        assert_eq!(
            f.call("list_files", json!({"pattern": pattern, "path": "src"}))
                .unwrap(),
            json!({"files": ["src/b.rs", "src/lib.rs"], "total_matches": 2, "truncated": false}),
            "pattern {pattern:?}"
        );
    }
    assert_eq!(
        f.err("list_files", json!({"pattern": "a[", "path": "."})),
        "invalid glob pattern `a[`: error parsing glob 'a[': unclosed character class; missing ']'"
    );
    assert_eq!(
        f.err("list_files", json!({"pattern": "*", "path": "a.txt"})),
        "`a.txt` is not a directory"
    );
}

#[test]
fn search_files_returns_matches_with_context() {
    let f = Fixture::new();
    std::fs::write(
        f.root.join("src/m.rs"),
        "one\ntwo\nneedle here\nthree\nfour\nfive\nneedle again\n",
    )
    .unwrap();
    std::fs::write(f.root.join("notes.md"), "a needle in md\n").unwrap();
    std::fs::write(f.root.join("bin.dat"), b"needle\0binary").unwrap();
    let result = f
        .call(
            "search_files",
            json!({"pattern": "needle", "file_pattern": "*.rs", "context_lines": 1}),
        )
        .unwrap();
    assert_eq!(
        result,
        json!({
            "matches": [
                {"file": "src/m.rs", "line": 3, "content": "needle here", "context_before": ["two"], "context_after": ["three"]},
                {"file": "src/m.rs", "line": 7, "content": "needle again", "context_before": ["five"], "context_after": []}
            ],
            "total_matches": 2,
            "truncated": false
        })
    );
    let all = f
        .call(
            "search_files",
            json!({"pattern": "ne+dle", "max_results": 1}),
        )
        .unwrap();
    assert_eq!(all["total_matches"], 3, "binary files are skipped: {all}");
    assert_eq!(all["truncated"], true);
    assert_eq!(all["matches"][0]["file"], "notes.md");
    assert_eq!(all["matches"][0]["context_before"], json!([]));
    let one = f
        .call("search_files", json!({"pattern": "alpha", "path": "a.txt"}))
        .unwrap();
    assert_eq!(one["matches"][0]["context_after"], json!(["beta", "gamma"]));
    assert!(
        f.err("search_files", json!({"pattern": "a("}))
            .starts_with("invalid regex `a(`: ")
    );
    // An empty pattern would match every line; an empty file filter filters nothing.
    assert!(
        f.err("search_files", json!({"pattern": ""}))
            .starts_with("the pattern is empty: give the text or regex to search for")
    );
    let unfiltered = f
        .call(
            "search_files",
            json!({"pattern": "ne+dle", "file_pattern": " "}),
        )
        .unwrap();
    assert_eq!(unfiltered["total_matches"], 3, "{unfiltered}");
}

#[test]
fn run_shell_reports_exit_code_and_output() {
    let f = Fixture::new();
    let result = f
        .call(
            "run_shell",
            json!({"command": "echo out; echo err >&2; exit 3", "working_directory": "src"}),
        )
        .unwrap();
    assert_eq!(
        result,
        json!({"exit_code": 3, "stdout": "out\n", "stderr": "err\n", "timed_out": false})
    );
    let pwd = f
        .call(
            "run_shell",
            json!({"command": "pwd", "working_directory": "src"}),
        )
        .unwrap();
    assert_eq!(pwd["stdout"], format!("{}\n", f.root.join("src").display()));
    assert_eq!(
        f.err(
            "run_shell",
            json!({"command": "true", "timeout_seconds": 0})
        ),
        "invalid arguments for `run_shell`: argument `timeout_seconds` must be between 1 and 600, got 0"
    );
    assert_eq!(
        f.err(
            "run_shell",
            json!({"command": "true", "working_directory": "a.txt"})
        ),
        "working_directory `a.txt` is not a directory"
    );
    assert_eq!(
        f.err("run_shell", json!({"command": "chmod -R 0777 ."})),
        "command refused: it matches the blocked command `chmod 777` (safety.blocked_commands); run something else"
    );
}

#[test]
fn run_shell_sandbox_allows_normal_work_in_the_root() {
    let f = Fixture::new();
    let result = f
        .call(
            "run_shell",
            json!({"command": "mkdir -p out && echo data > out/f && cat out/f && t=$(mktemp) && echo tmp > $t && cat $t && ls", "working_directory": "src"}),
        )
        .unwrap();
    assert_eq!(result["stdout"], "data\ntmp\nlib.rs\nout\n", "{result}");
    assert_eq!(result["exit_code"], 0);
    // A blocked path inside the root does not stop new entries next to it.
    let top = f
        .call("run_shell", json!({"command": "mkdir top && echo ok"}))
        .unwrap();
    assert_eq!(top["stdout"], "ok\n", "{top}");
}

#[test]
fn run_shell_root_without_blocked_paths_is_fully_writable() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = ybs_tools::PathSandbox::with_home(
        [dir.path().to_str().unwrap()],
        ["~/.ssh"],
        Some("/nonexistent-home".into()),
    )
    .unwrap();
    let ctx = ybs_tools::ToolContext::new(sandbox, ybs_tools::ShellPolicy::default()).unwrap();
    let registry = ybs_tools::ToolRegistry::new();
    let result = registry
        .invoke(
            "run_shell",
            &json!({"command": "mkdir top && echo x > top/f && cat top/f"}),
            &ctx,
        )
        .unwrap();
    assert_eq!(result["stdout"], "x\n", "{result}");
}

#[test]
fn run_shell_uses_the_configured_timeout_when_none_is_given() {
    let f = Fixture::with_policy(ybs_tools::ShellPolicy {
        default_timeout: std::time::Duration::from_secs(1),
        ..Default::default()
    });
    let result = f.call("run_shell", json!({"command": "sleep 30"})).unwrap();
    assert_eq!(result["timed_out"], true, "{result}");
}

#[test]
fn working_dir_can_be_moved_inside_the_sandbox_only() {
    let mut f = Fixture::new();
    f.ctx.set_working_dir(&f.root.join("src")).unwrap();
    assert_eq!(
        f.call("list_files", json!({"pattern": "*"})).unwrap()["files"],
        json!(["lib.rs"])
    );
    let outside = f.outside.clone();
    let err = f.ctx.set_working_dir(&outside).unwrap_err();
    assert!(
        err.to_string()
            .contains("which is outside the allowed directories"),
        "{err}"
    );
}
