//! External tools: executables invoked as `<executable> '<json>'`, from the
//! config's `tools.external` list and from `*.tool.json` sidecars in `~/.ybs/tools/`.
//!
//! The executable's stdout must be JSON and its exit code 0; stderr is kept for the error
//! message; the timeout kills its whole process group; output over the cap is an error.
//! External tools are trusted programs the user installed: they run outside the shell
//! sandbox (a web search tool needs the network), in the working directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ybs_core::ToolSpec;

use crate::error::ToolError;
use crate::process;
use crate::schema::{Args, parameters_to_schema};
use crate::tool::{Tool, ToolContext};

/// The default timeout of an external tool.
pub const DEFAULT_EXTERNAL_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes an external tool may print on stdout.
pub const MAX_EXTERNAL_OUTPUT_BYTES: usize = 1024 * 1024;

/// An external tool as configured (`tools.external`) or described by a `*.tool.json` sidecar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalToolConfig {
    /// The name the model calls it by.
    pub name: String,
    /// The kind of tool; only `executable` exists.
    #[serde(rename = "type", default = "default_kind")]
    pub kind: String,
    /// The executable (`~` expanded; relative to the sidecar's directory for sidecars). A
    /// sidecar without `path` names the file beside it with the sidecar's stem
    /// (`web-search.tool.json` -> `web-search`).
    #[serde(default)]
    pub path: Option<String>,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// Its parameters, in the spec's map form or as a JSON Schema object.
    #[serde(default = "empty_object")]
    pub parameters: Value,
    /// Its timeout in seconds (default 30).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Whether it is offered to the model.
    #[serde(default = "default_true")]
    pub enabled: bool,
}

fn default_kind() -> String {
    "executable".into()
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn default_true() -> bool {
    true
}

/// A configuration entry or sidecar that could not be loaded; the others still load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot load external tool from {source_name}: {message}")]
pub struct ExternalLoadError {
    /// The sidecar path, or `config (tools.external[N])`.
    pub source_name: String,
    /// What is wrong.
    pub message: String,
}

/// An external tool ready to run.
#[derive(Debug, Clone)]
pub struct ExternalTool {
    spec: ToolSpec,
    executable: PathBuf,
    timeout: Duration,
    enabled: bool,
}

impl ExternalTool {
    /// Builds a tool from its config. `base` is where a relative `path` starts (the sidecar's
    /// directory); `home` expands `~`.
    pub fn from_config(
        config: &ExternalToolConfig,
        base: Option<&Path>,
        home: Option<&Path>,
    ) -> Result<Self, String> {
        if config.kind != "executable" {
            return Err(format!(
                "tool `{}` has type `{}`; only `executable` is supported",
                config.name, config.kind
            ));
        }
        if config.name.is_empty()
            || !config
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "tool name `{}` must be non-empty and use only letters, digits, `_` and `-`",
                config.name
            ));
        }
        let path = config
            .path
            .as_deref()
            .ok_or_else(|| format!("tool `{}` has no `path` to its executable", config.name))?;
        let executable = expand(path, base, home).ok_or_else(|| {
            format!("cannot expand `~` in `{path}`: the home directory is unknown")
        })?;
        if !executable.is_file() {
            return Err(format!(
                "tool `{}`: executable `{}` does not exist",
                config.name,
                executable.display()
            ));
        }
        let schema = parameters_to_schema(&config.parameters)
            .map_err(|e| format!("tool `{}`: {e}", config.name))?;
        Ok(ExternalTool {
            spec: ToolSpec::new(config.name.clone(), config.description.clone(), schema),
            executable,
            timeout: config
                .timeout_seconds
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_EXTERNAL_TIMEOUT),
            enabled: config.enabled,
        })
    }

    /// The executable it runs.
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// Whether the config enables it.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

fn expand(path: &str, base: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let expanded = if path == "~" || path.starts_with("~/") {
        home?.join(path.trim_start_matches('~').trim_start_matches('/'))
    } else {
        PathBuf::from(path)
    };
    Some(match base {
        Some(base) if expanded.is_relative() => base.join(expanded),
        _ => expanded,
    })
}

impl Tool for ExternalTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// An executable may do anything, the network included (it runs outside the shell
    /// sandbox): it runs alone and is offered neither in plan mode nor to sub-agents.
    fn declaration(&self) -> crate::Declaration {
        crate::Declaration::default()
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let name = &self.spec.name;
        let mut command = Command::new(&self.executable);
        command
            .arg(args.to_value().to_string())
            .current_dir(&ctx.working_dir);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let output = process::run_cancellable(
            command,
            self.timeout,
            MAX_EXTERNAL_OUTPUT_BYTES,
            &ctx.cancel,
        )
        .map_err(|e| {
            ToolError::failed(format!(
                "external tool `{name}` could not start `{}`: {e}",
                self.executable.display()
            ))
        })?;
        let stderr = output.stderr.trim();
        if output.cancelled {
            return Err(ToolError::failed(format!(
                "external tool `{name}` was cancelled by the user and killed"
            )));
        }
        if output.timed_out {
            return Err(ToolError::failed(format!(
                "external tool `{name}` timed out after {} s and was killed",
                self.timeout.as_secs()
            )));
        }
        if output.stdout_capped {
            return Err(ToolError::failed(format!(
                "external tool `{name}` printed more than {MAX_EXTERNAL_OUTPUT_BYTES} bytes; its output was discarded"
            )));
        }
        if !output.status.success() {
            return Err(ToolError::failed(format!(
                "external tool `{name}` failed with exit code {}{}",
                output.exit_code(),
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                }
            )));
        }
        serde_json::from_str(output.stdout.trim()).map_err(|e| {
            ToolError::failed(format!(
                "external tool `{name}` did not print valid JSON ({e}){}",
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {stderr}")
                }
            ))
        })
    }
}

/// The default sidecar directory, `~/.ybs/tools`.
pub fn default_tools_dir(home: Option<&Path>) -> Option<PathBuf> {
    home.map(|h| h.join(".ybs").join("tools"))
}

/// Loads every `*.tool.json` sidecar in `dir`, in name order, each with its sidecar's path.
/// A missing directory is no sidecars; a sidecar that does not parse is reported with its
/// path and skipped.
pub fn discover_sidecars(
    dir: &Path,
    home: Option<&Path>,
) -> (Vec<(PathBuf, ExternalTool)>, Vec<ExternalLoadError>) {
    let mut tools = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (tools, errors);
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".tool.json"))
        })
        .collect();
    paths.sort();
    for path in paths {
        let error = |message: String| ExternalLoadError {
            source_name: path.display().to_string(),
            message,
        };
        let loaded = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<ExternalToolConfig>(&text).map_err(|e| e.to_string())
            })
            .and_then(|mut config| {
                if config.path.is_none() {
                    let stem = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .map(|n| n.trim_end_matches(".tool.json").to_string())
                        .unwrap_or_default();
                    config.path = Some(stem);
                }
                ExternalTool::from_config(&config, Some(dir), home)
            });
        match loaded {
            Ok(tool) => tools.push((path, tool)),
            Err(message) => errors.push(error(message)),
        }
    }
    (tools, errors)
}
