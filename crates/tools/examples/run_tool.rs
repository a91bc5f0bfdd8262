//! Invokes one tool in a sandbox rooted at a directory and prints the result JSON.
//!
//! ```text
//! cargo run -p ybs-tools --example run_tool -- --root DIR [--block PATH]... [--no-sandbox] NAME 'JSON'
//! ```
//!
//! The sandbox allows DIR only and blocks `~/.ssh`, `~/.aws`, `~/.config` and each `--block`
//! path; `--no-sandbox` runs `run_shell` commands unsandboxed. External tools are loaded from `~/.ybs/tools/`.
//! Exits 0 when the tool succeeded, 1 when it returned an error, 2 on bad usage.

use std::process::ExitCode;

use ybs_core::ToolCall;
use ybs_tools::{PathSandbox, ShellPolicy, ToolContext, ToolRegistry, default_tools_dir};

const USAGE: &str = "usage: run_tool --root DIR [--block PATH]... [--no-sandbox] NAME 'JSON'";

fn main() -> ExitCode {
    let mut root = None;
    let mut sandbox_enabled = true;
    let mut blocked: Vec<String> = ["~/.ssh", "~/.aws", "~/.config"].map(String::from).to_vec();
    let mut positional = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = args.next(),
            "--no-sandbox" => sandbox_enabled = false,
            "--block" => blocked.extend(args.next()),
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => positional.push(arg),
        }
    }
    let (Some(root), [name, json]) = (root, positional.as_slice()) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let arguments: serde_json::Value = match serde_json::from_str(json) {
        Ok(value) => value,
        Err(e) => {
            eprintln!("the arguments are not valid JSON: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let sandbox = match PathSandbox::new([root.as_str()], &blocked) {
        Ok(sandbox) => sandbox,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let policy = ShellPolicy {
        sandbox_enabled,
        ..ShellPolicy::default()
    };
    let ctx = match ToolContext::new(sandbox, policy) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut registry = ToolRegistry::new();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let report = registry.set_external_sources(Vec::new(), default_tools_dir(home.as_deref()));
    for error in &report.errors {
        eprintln!("warning: {error}");
    }
    let result = registry.invoke_call(&ToolCall::new("call-1", name.as_str(), arguments), &ctx);
    println!("{}", result.content);
    if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
