//! `lsp`: the language servers ybs asks for diagnostics after the agent changes a file.
//! A server's `command` starts a program, so a project's `.ybs.json` names one only when
//! trusted (like an MCP server); `enabled: false` is always taken.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `lsp`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LspConfig {
    /// Whether ybs asks language servers at all.
    pub enabled: bool,
    /// The servers by name; a name of [`default_servers`] replaces that default.
    pub servers: BTreeMap<String, LspServer>,
    /// How long to wait for a server's diagnostics after an edit, in seconds.
    pub wait_seconds: u64,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            enabled: true,
            servers: BTreeMap::new(),
            wait_seconds: 10,
        }
    }
}

/// One language server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LspServer {
    /// The program and its arguments (it speaks LSP on stdin and stdout).
    pub command: Vec<String>,
    /// The files it checks, as globs of their names or paths (`*.py`).
    pub patterns: Vec<String>,
}

/// The well-known servers, each only when its program is on `path` (the `PATH` value).
pub fn default_servers(path: Option<&std::ffi::OsStr>) -> BTreeMap<String, LspServer> {
    let known: [(&str, &[&str], &[&str]); 4] = [
        ("rust-analyzer", &["rust-analyzer"], &["*.rs"]),
        (
            "pyright",
            &["pyright-langserver", "--stdio"],
            &["*.py", "*.pyi"],
        ),
        (
            "typescript-language-server",
            &["typescript-language-server", "--stdio"],
            &["*.ts", "*.tsx", "*.js", "*.jsx", "*.mjs", "*.cjs"],
        ),
        ("gopls", &["gopls"], &["*.go"]),
    ];
    let dirs: Vec<std::path::PathBuf> = path
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
        .collect();
    let on_path = |program: &str| {
        dirs.iter()
            .filter(|dir| dir.is_absolute())
            .any(|dir| is_program(&dir.join(program)))
    };
    known
        .into_iter()
        .filter(|(_, command, _)| command.first().is_some_and(|program| on_path(program)))
        .map(|(name, command, patterns)| {
            let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
            (
                name.to_owned(),
                LspServer {
                    command: owned(command),
                    patterns: owned(patterns),
                },
            )
        })
        .collect()
}

fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
