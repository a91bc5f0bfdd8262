//! Property tests: the sandbox's resolver agrees with the kernel. For random paths built from
//! `..`, `.`, names, symlinks into and out of the root and blocked names, whenever the kernel
//! can resolve the path (`canonicalize`), the sandbox resolves it to the same place or refuses
//! it, and it refuses it exactly when that place is outside the root or blocked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use proptest::prelude::*;
use ybs_tools::PathSandbox;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    sandbox: PathSandbox,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("root");
    for d in ["root/a/b", "root/private/inner", "outside/x"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(root.join("a/file"), "").unwrap();
    std::fs::write(base.join("outside/x/file"), "").unwrap();
    symlink("../outside", root.join("out")).unwrap();
    symlink("a/b", root.join("in")).unwrap();
    symlink("..", root.join("a/up")).unwrap();
    symlink("../../private", root.join("a/b/priv")).unwrap();
    symlink(base.join("outside/x"), root.join("abs_out")).unwrap();
    let sandbox = PathSandbox::with_home(
        [root.to_str().unwrap()],
        [root.join("private").to_str().unwrap()],
        Some(base.join("outside")),
    )
    .unwrap();
    World {
        _dir: dir,
        root,
        sandbox,
    }
}

fn component() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "..", ".", "a", "b", "file", "out", "in", "up", "priv", "abs_out", "x", "private", "inner",
        "new",
    ])
}

#[test]
fn resolver_agrees_with_the_kernel() {
    let w = world();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(1024));
    let strategy = prop::collection::vec(component(), 1..8);
    let result = runner.run(&strategy, |parts| {
        let path = parts.join("/");
        let ours = w.sandbox.resolve(&w.root, &path);
        if let Ok(kernel) = std::fs::canonicalize(w.root.join(&path)) {
            let allowed =
                kernel.starts_with(&w.root) && !kernel.starts_with(w.root.join("private"));
            match &ours {
                Ok(resolved) => {
                    prop_assert!(
                        allowed,
                        "{path}: allowed {resolved:?} but the kernel says {kernel:?}"
                    );
                    prop_assert_eq!(resolved, &kernel, "{}", path);
                }
                Err(e) => prop_assert!(
                    !allowed,
                    "{path}: refused ({e}) but the kernel says {kernel:?}"
                ),
            }
        }
        if let Ok(resolved) = &ours {
            prop_assert!(resolved.starts_with(&w.root));
            prop_assert!(!resolved.starts_with(w.root.join("private")));
        }
        Ok(())
    });
    result.unwrap();
}
