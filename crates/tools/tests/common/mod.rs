//! Shared fixture for the integration tests: a temp dir with an allowed `root/`, an
//! `outside/` directory with a secret, a fake home with `.ssh/id_rsa`, and a snapshot of
//! everything outside the root to prove it did not change.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolError, ToolRegistry};

pub const SECRET: &str = "TOPSECRET-outside";
pub const KEY: &str = "TOPSECRET-ssh-key";
pub const PRIVATE: &str = "TOPSECRET-private";

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    pub ctx: ToolContext,
    pub registry: ToolRegistry,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_policy(ShellPolicy::default())
    }

    pub fn with_policy(policy: ShellPolicy) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        let home = base.join("home");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("private")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
        std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join("private/key.txt"), PRIVATE).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), KEY).unwrap();
        let sandbox = PathSandbox::with_home(
            [root.to_str().unwrap()],
            ["~/.ssh", root.join("private").to_str().unwrap()],
            Some(home.clone()),
        )
        .unwrap();
        let ctx = ToolContext::new(sandbox, policy).unwrap();
        Fixture {
            dir,
            base,
            root,
            outside,
            home,
            ctx,
            registry: ToolRegistry::new(),
        }
    }

    pub fn call(&self, name: &str, args: Value) -> Result<Value, ToolError> {
        self.registry.invoke(name, &args, &self.ctx)
    }

    /// `run_shell` of `command` (30 s at most), granted the network when `network` (the
    /// policy must allow it).
    pub fn shell(&self, command: &str, network: bool) -> Value {
        let mut args = serde_json::json!({"command": command, "timeout_seconds": 30});
        if network {
            args["network"] = serde_json::json!(true);
            args["reason"] = serde_json::json!("test");
        }
        self.call("run_shell", args).unwrap()
    }

    pub fn err(&self, name: &str, args: Value) -> String {
        match self.call(name, args.clone()) {
            Ok(value) => panic!("{name}({args}) should fail, got {value}"),
            Err(e) => e.to_string(),
        }
    }

    /// Everything under the base dir except the root: path -> kind and contents.
    pub fn snapshot_outside(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        snapshot(&self.base, &self.root, &mut out);
        out
    }
}

fn snapshot(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path == skip {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let kind = if meta.file_type().is_symlink() {
            format!("link -> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            snapshot(&path, skip, out);
            "dir".to_string()
        } else {
            format!(
                "file {}",
                String::from_utf8_lossy(&std::fs::read(&path).unwrap())
            )
        };
        out.insert(path, kind);
    }
}
