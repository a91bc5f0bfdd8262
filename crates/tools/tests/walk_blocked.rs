//! The walk of `list_files` and `search_files` checks files by name and by identity only when
//! a cheap test (the name's bytes, the inode from the directory listing) says they might be
//! blocked: a blocked file is still hidden under its own name, under a hard link's name, and
//! after it was renamed, and a blocked directory's files are never reached.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

fn call(ctx: &ToolContext, name: &str, args: Value) -> Value {
    ToolRegistry::new().invoke(name, &args, ctx).unwrap()
}

#[test]
fn blocked_files_stay_hidden_from_the_walk_under_any_name() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::create_dir_all(root.join("vault")).unwrap();
    for i in 0..50 {
        std::fs::write(root.join(format!("src/deep/f{i}.txt")), "plain\n").unwrap();
    }
    std::fs::write(root.join("src/secret.txt"), "TOPSECRET one\n").unwrap();
    std::fs::write(root.join("src/moved.txt"), "TOPSECRET two\n").unwrap();
    std::fs::write(root.join("vault/inside.txt"), "TOPSECRET three\n").unwrap();
    let blocked = [
        root.join("src/secret.txt"),
        root.join("src/moved.txt"),
        root.join("vault"),
    ];
    let blocked: Vec<String> = blocked.iter().map(|p| p.display().to_string()).collect();
    let sandbox = PathSandbox::new([root.to_str().unwrap()], blocked).unwrap();
    let ctx = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
    // After the sandbox was built: a hard link to one blocked file, a rename of the other.
    std::fs::hard_link(
        root.join("src/secret.txt"),
        root.join("src/deep/linked.txt"),
    )
    .unwrap();
    std::fs::rename(
        root.join("src/moved.txt"),
        root.join("src/deep/renamed.txt"),
    )
    .unwrap();

    let listed = call(
        &ctx,
        "list_files",
        json!({"pattern": "**/*", "max_results": 1000}),
    );
    let files: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 50, "{files:?}");
    assert!(
        files.iter().all(|f| f.starts_with("src/deep/f")),
        "{files:?}"
    );

    let found = call(&ctx, "search_files", json!({"pattern": "TOPSECRET"}));
    assert_eq!(found["total_matches"], 0, "{found}");
    let found = call(&ctx, "search_files", json!({"pattern": "plain"}));
    assert_eq!(found["total_matches"], 50, "{found}");
}
