//! Criterion bench of the cost of the shell sandbox: `run_shell` of `true` sandboxed (every
//! layer) against unsandboxed, and `read_file` through the identity-checked walk.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

fn bench(c: &mut Criterion) {
    let temp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(temp.path()).unwrap();
    std::fs::create_dir_all(root.join("a/b/c/private")).unwrap();
    std::fs::write(root.join("a/b/c/file.txt"), "x".repeat(4096)).unwrap();
    let blocked = root.join("a/b/c/private");
    let context = |sandbox_enabled| {
        let sandbox =
            PathSandbox::new([root.to_str().unwrap()], [blocked.to_str().unwrap()]).unwrap();
        ToolContext::new(
            sandbox,
            ShellPolicy {
                sandbox_enabled,
                ..ShellPolicy::default()
            },
        )
        .unwrap()
    };
    let sandboxed = context(true);
    let open = context(false);
    let registry = ToolRegistry::new();
    let call = json!({"command": "true"});
    assert_eq!(
        registry.invoke("run_shell", &call, &sandboxed).unwrap()["exit_code"],
        0
    );

    let mut group = c.benchmark_group("shell");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("run_shell true, sandboxed", |b| {
        b.iter(|| registry.invoke("run_shell", &call, &sandboxed).unwrap())
    });
    group.bench_function("run_shell true, --no-sandbox", |b| {
        b.iter(|| registry.invoke("run_shell", &call, &open).unwrap())
    });
    group.bench_function("read_file a/b/c/file.txt", |b| {
        b.iter(|| {
            registry
                .invoke("read_file", &json!({"path": "a/b/c/file.txt"}), &sandboxed)
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
