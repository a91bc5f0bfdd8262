//! The tool registry: built-ins plus external tools, enable/disable, the specs the model
//! sees, and invocation by name with argument validation and output limits.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use ybs_core::{ToolCall, ToolResult, ToolSpec};

use crate::builtins;
use crate::declaration::Declaration;
use crate::error::ToolError;
use crate::external::{ExternalLoadError, ExternalTool, ExternalToolConfig, discover_sidecars};
use crate::schema::validate;
use crate::summary::{Change, Summary};
use crate::tool::{Tool, ToolContext};
use crate::truncate::truncate_json;

/// The default `context.max_tool_output_chars`.
pub const DEFAULT_MAX_TOOL_OUTPUT_CHARS: usize = 10_000;

/// What a [`ToolRegistry::reload`] loaded and what it skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// The external tools now registered, by name.
    pub loaded: Vec<String>,
    /// Entries and sidecars that were skipped, each with its source and reason.
    pub errors: Vec<ExternalLoadError>,
}

/// Where a tool of the registry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSource {
    /// One of the built-ins.
    BuiltIn,
    /// Added by the caller with [`ToolRegistry::register`] (an MCP server's tool in ybs).
    Registered,
    /// An entry of the configuration's `tools.external`.
    Config,
    /// A sidecar file of the tools directory.
    Sidecar,
}

/// Built-in and external tools, by name. A clone shares the tools and copies what is
/// enabled.
///
/// ```no_run
/// # use ybs_tools::*;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = PathSandbox::new(["."], ["~/.ssh"])?;
/// let ctx = ToolContext::new(sandbox, ShellPolicy::default())?;
/// let registry = ToolRegistry::new();
/// let result = registry.invoke("read_file", &serde_json::json!({"path": "Cargo.toml"}), &ctx)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    /// The built-ins, then the tools callers registered.
    builtins: Vec<Arc<dyn Tool>>,
    builtin_count: usize,
    /// The external tools that came from the configuration list (the others are sidecars).
    from_config: BTreeSet<String>,
    external: Vec<Arc<ExternalTool>>,
    disabled: BTreeSet<String>,
    config_disabled: BTreeSet<String>,
    external_config: Vec<ExternalToolConfig>,
    tools_dir: Option<PathBuf>,
    home: Option<PathBuf>,
    max_output_chars: usize,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// The built-ins, all enabled, no external tools, the default output limit.
    pub fn new() -> Self {
        let builtins = builtins::all();
        ToolRegistry {
            builtin_count: builtins.len(),
            builtins,
            from_config: BTreeSet::new(),
            external: Vec::new(),
            disabled: BTreeSet::new(),
            config_disabled: BTreeSet::new(),
            external_config: Vec::new(),
            tools_dir: None,
            home: std::env::var_os("HOME").map(PathBuf::from),
            max_output_chars: DEFAULT_MAX_TOOL_OUTPUT_CHARS,
        }
    }

    /// Sets where external tools come from: the config's `tools.external` list and a sidecar
    /// directory (usually [`default_tools_dir`](crate::default_tools_dir)), then loads them.
    pub fn set_external_sources(
        &mut self,
        config: Vec<ExternalToolConfig>,
        tools_dir: Option<PathBuf>,
    ) -> ReloadReport {
        self.external_config = config;
        self.tools_dir = tools_dir;
        self.reload()
    }

    /// Sets the home directory used to expand `~` in external tool paths.
    pub fn set_home(&mut self, home: Option<PathBuf>) {
        self.home = home;
    }

    /// Re-reads the external tools from the config list and the sidecar directory (ybs calls
    /// this on SIGHUP). Config entries come first; a later tool whose name is taken (by a
    /// built-in or an earlier tool) is skipped and reported.
    pub fn reload(&mut self) -> ReloadReport {
        let mut report = ReloadReport::default();
        self.config_disabled.clear();
        let mut tools: Vec<Arc<ExternalTool>> = Vec::new();
        self.from_config.clear();
        let mut candidates: Vec<(String, bool, Result<ExternalTool, String>)> = Vec::new();
        for (index, config) in self.external_config.iter().enumerate() {
            candidates.push((
                format!("config (tools.external[{index}], `{}`)", config.name),
                true,
                ExternalTool::from_config(config, None, self.home.as_deref()),
            ));
        }
        if let Some(dir) = &self.tools_dir {
            let (found, errors) = discover_sidecars(dir, self.home.as_deref());
            report.errors.extend(errors);
            for (path, tool) in found {
                candidates.push((path.display().to_string(), false, Ok(tool)));
            }
        }
        for (source, from_config, candidate) in candidates {
            let tool = match candidate {
                Ok(tool) => tool,
                Err(message) => {
                    report.errors.push(ExternalLoadError {
                        source_name: source,
                        message,
                    });
                    continue;
                }
            };
            let name = tool.spec().name.clone();
            let taken = self.builtins.iter().any(|b| b.spec().name == name)
                || tools.iter().any(|t| t.spec().name == name);
            if taken {
                report.errors.push(ExternalLoadError {
                    source_name: source,
                    message: format!("a tool named `{name}` already exists; rename this one"),
                });
                continue;
            }
            if !tool.enabled() {
                self.config_disabled.insert(name.clone());
            }
            if from_config {
                self.from_config.insert(name.clone());
            }
            report.loaded.push(name);
            tools.push(Arc::new(tool));
        }
        self.external = tools;
        report
    }

    /// Enables or disables a tool by name (from `tools.builtin.NAME.enabled` or the user). An
    /// external tool whose own entry says `"enabled": false` stays disabled until its entry
    /// changes and the registry is reloaded.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) {
        if enabled {
            self.disabled.remove(name);
        } else {
            self.disabled.insert(name.to_string());
        }
    }

    /// Whether a tool is registered and enabled.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.find(name).is_some() && !self.is_disabled(name)
    }

    /// A copy with only the enabled tools whose declaration passes `keep` enabled (a
    /// sub-agent's tools).
    pub fn narrowed(&self, keep: impl Fn(&Declaration) -> bool) -> ToolRegistry {
        let mut narrowed = self.clone();
        for tool in self.all() {
            if !keep(&tool.declaration()) {
                narrowed.set_enabled(&tool.spec().name, false);
            }
        }
        narrowed
    }

    /// Sets `context.max_tool_output_chars` for [`invoke_call`](Self::invoke_call).
    pub fn set_max_output_chars(&mut self, max: usize) {
        self.max_output_chars = max.max(100);
    }

    /// The most characters of a result the model is sent (`context.max_tool_output_chars`).
    pub fn max_output_chars(&self) -> usize {
        self.max_output_chars
    }

    /// The names of the enabled tools: built-ins in spec order, then external tools.
    pub fn names(&self) -> Vec<String> {
        self.specs().into_iter().map(|s| s.name).collect()
    }

    /// The specs of the enabled tools, for the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.all()
            .filter(|t| !self.is_disabled(&t.spec().name))
            .map(|t| t.spec().clone())
            .collect()
    }

    /// Where the tool `name` comes from, if it is registered.
    pub fn source(&self, name: &str) -> Option<ToolSource> {
        let is_named = |tool: &Arc<dyn Tool>| tool.spec().name == name;
        if let Some(index) = self.builtins.iter().position(is_named) {
            return Some(if index < self.builtin_count {
                ToolSource::BuiltIn
            } else {
                ToolSource::Registered
            });
        }
        let external = self.external.iter().any(|tool| tool.spec().name == name);
        match (external, self.from_config.contains(name)) {
            (false, _) => None,
            (true, true) => Some(ToolSource::Config),
            (true, false) => Some(ToolSource::Sidecar),
        }
    }

    /// Adds a tool of the caller's own (for example an MCP bridge). Fails if the name is taken.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), ToolError> {
        let name = tool.spec().name.clone();
        if self.find(&name).is_some() {
            return Err(ToolError::failed(format!(
                "a tool named `{name}` already exists"
            )));
        }
        self.builtins.push(tool);
        Ok(())
    }

    /// Removes a tool added with [`register`](Self::register) (an MCP server that changed
    /// its list); built-ins and external tools stay. Whether one was removed.
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.builtins.len();
        let count = self.builtin_count;
        let mut index = 0;
        self.builtins.retain(|tool| {
            let keep = index < count || tool.spec().name != name;
            index += 1;
            keep
        });
        self.builtins.len() != before
    }

    /// The tool `name`, enabled or not (what a front end shows of its calls follows what it
    /// declares); `None` for a name no tool has.
    pub fn tool(&self, name: &str) -> Option<&dyn Tool> {
        self.find(name)
    }

    /// What the tool `name` declares about itself; an unknown name gets the conservative
    /// [`Declaration::default`].
    pub fn declaration(&self, name: &str) -> Declaration {
        self.find(name)
            .map_or_else(Declaration::default, |tool| tool.declaration())
    }

    /// The names of the enabled tools whose declaration passes `keep` (for example those
    /// offered in plan mode).
    pub fn names_where(&self, keep: impl Fn(&Declaration) -> bool) -> Vec<String> {
        (self.all())
            .filter(|tool| !self.is_disabled(&tool.spec().name) && keep(&tool.declaration()))
            .map(|tool| tool.spec().name.clone())
            .collect()
    }

    /// The names of the built-in tools (enabled or not), in the order they are offered.
    pub fn builtin_names(&self) -> Vec<String> {
        (self.builtins.iter().take(self.builtin_count))
            .map(|tool| tool.spec().name.clone())
            .collect()
    }

    /// The tool's own summary of a successful result (see [`Tool::summarize`]); `None` for
    /// an unknown tool or one without a summary of its own.
    pub fn summarize(
        &self,
        name: &str,
        arguments: &Value,
        result: &Value,
        change: Option<Change>,
    ) -> Option<Summary> {
        self.find(name)?.summarize(arguments, result, change)
    }

    /// The tool `name` if a call of it may run: registered and enabled. Every call, whoever
    /// runs it (the registry or, for a [`Runner::SubAgent`](crate::Runner) tool, the agent),
    /// is let through here first.
    pub fn callable(&self, name: &str) -> Result<&dyn Tool, ToolError> {
        let tool = self.find(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_string(),
            available: self.names().join(", "),
        })?;
        if self.is_disabled(name) {
            return Err(ToolError::Disabled(name.to_string()));
        }
        Ok(tool)
    }

    /// Validates `args` against the tool's schema and runs it. An unknown or disabled tool,
    /// invalid arguments and the tool's own failures are all [`ToolError`]s whose message the
    /// model can read (see [`ToolError::to_json`]). Blocks: call from a blocking thread.
    pub fn invoke(&self, name: &str, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let tool = self.callable(name)?;
        let args = validate(name, &tool.spec().parameters, args)?;
        tool.invoke(&args, ctx)
    }

    /// Runs a model's tool call and returns the result to send back: the JSON result, or
    /// `{"success": false, "error": ...}` with `is_error` set, cut to the output limit.
    pub fn invoke_call(&self, call: &ToolCall, ctx: &ToolContext) -> ToolResult {
        let outcome = match &call.arguments_error {
            Some(reason) => Err(ToolError::InvalidArguments {
                tool: call.name.clone(),
                message: format!("the arguments are not valid JSON ({reason}); send a JSON object"),
            }),
            None => self.invoke(&call.name, &call.arguments, ctx),
        };
        let (mut value, is_error) = match outcome {
            Ok(value) => (value, false),
            Err(error) => (error.to_json(), true),
        };
        // Keys sorted: the same text for the model whether or not serde_json keeps insertion
        // order in this build (its `preserve_order` feature, which other crates turn on).
        value.sort_all_objects();
        ToolResult {
            call_id: call.id.clone(),
            name: Some(call.name.clone()),
            content: truncate_json(value, self.max_output_chars),
            is_error,
        }
    }

    fn is_disabled(&self, name: &str) -> bool {
        self.disabled.contains(name) || self.config_disabled.contains(name)
    }

    fn all(&self) -> impl Iterator<Item = &dyn Tool> {
        self.builtins
            .iter()
            .map(|t| t.as_ref())
            .chain(self.external.iter().map(|t| t.as_ref() as &dyn Tool))
    }

    fn find(&self, name: &str) -> Option<&dyn Tool> {
        self.all().find(|t| t.spec().name == name)
    }
}
