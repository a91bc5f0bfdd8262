//! The official SDK clients the editor and agent tests drive ybs with: the ACP TypeScript SDK
//! under Node (`tests/acp`, installed with `npm ci`) and the MCP Python SDK in a virtual
//! environment (`tests/mcp/.venv`, made by `.ci/run`). A machine without them skips these tests
//! with a message saying what to install, unless `YBS_E2E_REQUIRE_CLIENTS` is set (CI sets it),
//! where a missing client fails the test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the ACP client script (`tests/acp`).
pub fn acp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("acp")
}

/// The directory of the MCP client script (`tests/mcp`).
pub fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp")
}

/// `node`, when it and the ACP SDK are installed.
pub fn node() -> Option<PathBuf> {
    let runs = Command::new("node").arg("--version").output();
    let sdk = acp_dir().join("node_modules/@agentclientprotocol/sdk/package.json");
    if runs.is_ok_and(|output| output.status.success()) && sdk.is_file() {
        return Some(PathBuf::from("node"));
    }
    missing("node and the ACP SDK (`npm ci --prefix tests/acp`)")
}

/// The Python of the MCP client's virtual environment, when the SDK is installed there.
pub fn python() -> Option<PathBuf> {
    let python = mcp_dir().join(".venv/bin/python");
    let has_sdk = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|output| output.status.success());
    if has_sdk {
        return Some(python);
    }
    missing(
        "the MCP Python SDK (`python3 -m venv tests/mcp/.venv && tests/mcp/.venv/bin/pip \
         install -r tests/mcp/requirements.txt`)",
    )
}

fn missing<T>(what: &str) -> Option<T> {
    assert!(
        std::env::var_os("YBS_E2E_REQUIRE_CLIENTS").is_none(),
        "YBS_E2E_REQUIRE_CLIENTS is set but {what} is not installed"
    );
    eprintln!("skipped: this test needs {what}");
    None
}

/// The pyright language server installed in `tests/lsp` (`npm ci --prefix tests/lsp`), with
/// `node` to run it.
pub fn pyright_langserver() -> Option<PathBuf> {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp/node_modules/.bin/pyright-langserver");
    let runs = Command::new("node").arg("--version").output();
    if runs.is_ok_and(|output| output.status.success()) && server.is_file() {
        return Some(server);
    }
    missing("node and pyright (`npm ci --prefix tests/lsp`)")
}
