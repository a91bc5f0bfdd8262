//! Building an [`Agent`] from the effective configuration: the provider, the tools, the
//! sandbox and the confirmation policy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ybs_context_budget::CompactionSettings;
use ybs_core::CacheTtl;
use ybs_providers::{
    Provider, ProviderConfig, ProviderKind, RetryPolicy, Timeouts, build_with_env,
};
use ybs_tools::{
    ConfirmationPolicy, ExternalToolConfig, PathSandbox, ReloadReport, ShellPolicy, ToolContext,
    ToolRegistry, ToolSource, default_tools_dir,
};

use crate::config::{Config, PromptCache, Sources};
use crate::confirm::ConfirmMode;
use crate::limits;
use crate::mcp::{self, McpFailure, McpServerSpec};
use crate::pricing::price_table;
use crate::prompt::repo_map::RepoMapCache;
use crate::{AgentSettings, Parts};

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The provider settings are unusable.
    #[error("{0}")]
    Provider(String),
    /// The sandbox settings are unusable.
    #[error("safety.sandbox_allowed_paths: {0}")]
    Sandbox(#[from] ybs_tools::SandboxError),
    /// The price table does not parse.
    #[error("llm.prices: {0}")]
    Prices(#[from] ybs_providers::PriceError),
    /// The tools would write anywhere in the home directory or the whole file system.
    #[error(
        "{} is {what}: ybs will not let the model change files there (it could change any of yours). Start ybs in a project directory, or set safety.allow_home_as_project to true in your own configuration (YBS_SAFETY_ALLOW_HOME_AS_PROJECT=true for one run)",
        dir.display()
    )]
    BroadProject {
        /// The directory the tools would write in.
        dir: PathBuf,
        /// "your home directory" or "the root of the file system".
        what: &'static str,
    },
}

/// Everything an agent is built from besides the configuration.
#[derive(Debug, Clone)]
pub struct Surroundings {
    /// The project directory (relative paths start here).
    pub cwd: PathBuf,
    /// The home directory.
    pub home: Option<PathBuf>,
    /// Environment variables the provider may read API keys from.
    pub env: BTreeMap<String, String>,
}

/// The provider kind named by `llm.provider`.
pub fn provider_kind(config: &Config) -> Result<ProviderKind, SetupError> {
    (config.llm.provider.parse::<ProviderKind>())
        .map_err(|err| SetupError::Provider(format!("llm.provider: {err}")))
}

/// Whether requests ask the provider of `kind` for its hosted web search: enabled, and the
/// provider has one (ybs runs no search itself).
pub fn web_search_on(config: &Config, kind: ProviderKind) -> bool {
    config.tools.builtin.web_search.enabled && kind.capabilities().hosted_web_search
}

/// The endpoint requests go to: `llm.endpoint`, or the provider's default.
pub fn endpoint(config: &Config) -> String {
    match (&config.llm.endpoint, provider_kind(config)) {
        (Some(endpoint), _) => endpoint.clone(),
        (None, Ok(kind)) => kind.default_endpoint().unwrap_or("(none)").to_owned(),
        (None, Err(_)) => "(none)".to_owned(),
    }
}

/// The provider of `llm.*` with `agent.retry_*` retries.
pub fn provider(
    config: &Config,
    env: &BTreeMap<String, String>,
) -> Result<Arc<dyn Provider>, SetupError> {
    provider_with_window(config, env, None)
}

/// [`provider`], asking Ollama to load the model with `window` tokens of context (Ollama
/// otherwise cuts prompts to its small default).
pub fn provider_with_window(
    config: &Config,
    env: &BTreeMap<String, String>,
    window: Option<u64>,
) -> Result<Arc<dyn Provider>, SetupError> {
    let kind = provider_kind(config)?;
    let mut provider =
        ProviderConfig::new(kind, config.llm.model.clone()).with_retry(RetryPolicy::new(
            config.agent.retry_attempts,
            config.agent.retry_backoff_base_ms,
        ));
    provider.endpoint = config.llm.endpoint.clone();
    provider.api_key = config.llm.api_key.clone().map(Into::into);
    provider.timeouts = Timeouts {
        idle: Duration::from_secs(config.llm.timeout_seconds.max(1)),
        ..Timeouts::default()
    };
    provider.ollama.num_ctx = window.and_then(|window| u32::try_from(window).ok());
    build_with_env(&provider, |name| {
        env.get(name).cloned().or_else(|| std::env::var(name).ok())
    })
    .map_err(|err| SetupError::Provider(err.to_string()))
}

/// The registry of `tools.*` and `context.max_tool_output_chars`, with what loading the
/// external tools reported.
pub fn registry(config: &Config, home: Option<&Path>) -> (ToolRegistry, ReloadReport) {
    let mut registry = ToolRegistry::new();
    registry.set_home(home.map(Path::to_path_buf));
    let builtin = config.tools.builtin.by_name();
    for name in registry.builtin_names() {
        if let Some(tool) = builtin.get(&name) {
            registry.set_enabled(&name, tool.enabled);
        }
    }
    // The background jobs' tools go with `run_shell`, which starts the jobs.
    if !config.tools.builtin.run_shell.enabled {
        for name in ["read_job_output", "stop_job"] {
            registry.set_enabled(name, false);
        }
    }
    registry.set_max_output_chars(config.context.max_tool_output_chars);
    let external = (config.tools.external.iter())
        .map(|tool| ExternalToolConfig {
            name: tool.name.clone(),
            kind: tool.kind.clone(),
            path: Some(tool.path.clone()),
            description: tool.description.clone().unwrap_or_default(),
            parameters: (tool.parameters.clone())
                .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new())),
            timeout_seconds: tool.timeout_seconds,
            enabled: tool.enabled,
        })
        .collect();
    let report = registry.set_external_sources(external, default_tools_dir(home));
    (registry, report)
}

/// The tool context of `safety.*` (allowed paths relative to the project directory).
pub fn tool_context(config: &Config, around: &Surroundings) -> Result<ToolContext, SetupError> {
    let safety = &config.safety;
    let roots: Vec<String> = (safety.sandbox_allowed_paths.iter())
        .map(|root| around.cwd.join(root).display().to_string())
        .collect();
    let mut sandbox =
        PathSandbox::with_home(roots, &safety.sandbox_blocked_paths, around.home.clone())?;
    if !safety.allow_home_as_project {
        refuse_broad_roots(&sandbox, around.home.as_deref())?;
    }
    // ybs's own state (trust, sessions, undo records) and the user's configuration decide
    // what runs and what is trusted: no tool or command may change them.
    for own in own_dirs(around) {
        sandbox.protect(&own);
    }
    let mut shell = ShellPolicy {
        sandbox_enabled: safety.sandbox_enabled,
        blocked_commands: safety.blocked_commands.clone(),
        network_allowed: safety.network != crate::config::Network::Off,
        ..ShellPolicy::default()
    };
    if let Some(seconds) = config.tools.builtin.run_shell.timeout_seconds {
        shell.default_timeout = Duration::from_secs(seconds);
    }
    shell.env = safety.shell_env.clone();
    if let Some(limits) = &config.tools.builtin.run_shell.limits {
        // A missing key keeps the default; 0 removes the limit.
        let set = |value: Option<u64>, scale: u64, default: Option<u64>| match value {
            None => default,
            Some(0) => None,
            Some(n) => Some(n.saturating_mul(scale)),
        };
        const MIB: u64 = 1024 * 1024;
        let default = &shell.limits;
        shell.limits = ybs_tools::ShellLimits {
            max_processes: set(limits.max_processes, 1, default.max_processes),
            max_memory_bytes: set(limits.max_memory_mb, MIB, default.max_memory_bytes),
            max_file_bytes: set(limits.max_file_size_mb, MIB, default.max_file_bytes),
            max_core_bytes: default.max_core_bytes,
        };
    }
    // The programs of external tools run unsandboxed: the model may not change them.
    for tool in &config.tools.external {
        sandbox.protect(&around.cwd.join(&tool.path));
    }
    let mut context = ToolContext::new(sandbox, shell)?;
    if let Some(seconds) = config.tools.builtin.web_fetch.timeout_seconds {
        context.web.timeout = Duration::from_secs(seconds.max(1));
    }
    if context.set_working_dir(&around.cwd).is_err() {
        // The project directory is outside the allowed paths: start at the first root.
    }
    Ok(context)
}

/// Refuses a sandbox whose writable roots include the home directory or `/`.
fn refuse_broad_roots(sandbox: &PathSandbox, home: Option<&Path>) -> Result<(), SetupError> {
    let home = home.and_then(|home| std::fs::canonicalize(home).ok());
    for root in sandbox.roots() {
        let what = if root.parent().is_none() {
            "the root of the file system"
        } else if home.as_deref() == Some(root.as_path()) {
            "your home directory"
        } else {
            continue;
        };
        return Err(SetupError::BroadProject {
            dir: root.clone(),
            what,
        });
    }
    Ok(())
}

/// ybs's own directories: its data (`$XDG_DATA_HOME/ybs`, else `~/.local/share/ybs`) and the
/// user's configuration (`$XDG_CONFIG_HOME/ybs`, else `~/.config/ybs`).
fn own_dirs(around: &Surroundings) -> Vec<PathBuf> {
    let xdg = |name: &str, fallback: &str| {
        let set = around
            .env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok());
        let dir = (set.map(PathBuf::from))
            .filter(|dir| dir.is_absolute())
            .or_else(|| around.home.as_ref().map(|home| home.join(fallback)));
        dir.map(|dir| dir.join("ybs"))
    };
    [
        xdg("XDG_DATA_HOME", ".local/share"),
        xdg("XDG_CONFIG_HOME", ".config"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Connects the MCP servers of `specs` and adds their tools to `registry`; the tools of a
/// server that is not trusted ask before each call. Returns the servers (or tools) that
/// could not be added.
pub fn add_mcp_tools(
    specs: Vec<McpServerSpec>,
    registry: &mut ToolRegistry,
    policy: &mut ConfirmationPolicy,
) -> Vec<McpFailure> {
    connect_mcp(specs, registry, policy).1
}

/// [`add_mcp_tools`], keeping the connected servers (their resources, prompts and changed
/// lists); the `mcp_resource` tool is added when one of them offers resources.
pub fn connect_mcp(
    specs: Vec<McpServerSpec>,
    registry: &mut ToolRegistry,
    policy: &mut ConfirmationPolicy,
) -> (mcp::McpServers, Vec<McpFailure>) {
    let load = mcp::connect_all(specs);
    let mut failures = load.failures;
    mcp::register_tools(load.tools, registry, policy, &mut failures);
    if load.servers.any_resources() && registry.tool(mcp::RESOURCE_TOOL).is_none() {
        let tool = mcp::McpResourceTool::new(load.servers.clone());
        let _ = registry.register(Arc::new(tool));
    }
    (load.servers, failures)
}

/// [`add_mcp_tools`] for the servers of `mcp.servers`, stdio ones started in `cwd`.
pub fn add_config_mcp_tools(
    config: &Config,
    cwd: &Path,
    registry: &mut ToolRegistry,
    policy: &mut ConfirmationPolicy,
) -> Vec<McpFailure> {
    add_mcp_tools(mcp::from_config(&config.mcp.servers, cwd), registry, policy)
}

/// The parts of an agent of `config` (its session's prompt, journal and rules left to
/// [`AgentBuilder`](crate::AgentBuilder)), with what loading its tools reported.
pub(crate) fn parts(
    (config, sources): (&Config, &Sources),
    around: &Surroundings,
    confirm: ConfirmMode,
    dry_run: bool,
    given: Option<Arc<dyn Provider>>,
) -> Result<(Parts, (ReloadReport, Vec<McpFailure>)), SetupError> {
    let configured = given.is_none();
    let mut provider = match given {
        Some(provider) => provider,
        None => provider(config, &around.env)?,
    };
    let prices = Arc::new(price_table(&config.llm.prices)?);
    let limits = limits::discover(config, sources, provider.as_ref(), &prices);
    if configured && provider.kind().capabilities().window_set_per_request {
        provider = provider_with_window(config, &around.env, Some(limits.window.tokens))?;
    }
    let (mut registry, report) = registry(config, around.home.as_deref());
    let context = tool_context(config, around)?;
    let mut policy = ConfirmationPolicy::new(config.safety.require_confirmation.iter().cloned());
    let (mcp_servers, mcp) = connect_mcp(
        mcp::from_config(&config.mcp.servers, &around.cwd),
        &mut registry,
        &mut policy,
    );
    let settings = AgentSettings {
        model: config.llm.model.clone(),
        // ybs's own instructions; the session adds the environment and the project's instructions.
        system: Some(crate::prompt::BASE.to_owned()),
        temperature: Some(config.llm.temperature as f32),
        max_tokens: u32::try_from(limits.output.tokens).ok(),
        max_iterations: config.agent.max_iterations.max(1),
        dry_run,
        confirm,
        compaction: CompactionSettings {
            max_tokens: usize::try_from(limits.window.tokens).unwrap_or(usize::MAX),
            threshold: config.context.compaction_threshold,
            ..CompactionSettings::default()
        },
        response_format: None,
        prompt_cache: match config.llm.prompt_cache {
            PromptCache::Auto => Some(CacheTtl::FiveMinutes),
            PromptCache::OneHour => Some(CacheTtl::OneHour),
            PromptCache::Off => None,
        },
        prices,
        stop: Vec::new(),
        reasoning_effort: config.llm.reasoning_effort,
        top_p: None,
        seed: None,
        extras: crate::RequestExtras {
            web_search: web_search_on(config, provider.kind()),
            ..Default::default()
        },
    };
    let repo_map = RepoMapCache::new(
        &around.cwd,
        around.home.as_deref(),
        config.context.repo_map_tokens,
        context.sandbox.clone(),
    );
    let parts = Parts {
        settings,
        provider,
        registry,
        tool_context: context,
        policy,
        limits,
        hooks: config.hooks.clone(),
        repo_map,
        prompt: None,
        journal: Default::default(),
        permissions: Default::default(),
        approval: config.safety.approval,
        network: config.safety.network,
        rule_files: Default::default(),
        mcp: mcp_servers,
    };
    Ok((parts, (report, mcp)))
}

/// Where the tool `name` of `registry` comes from, for `ybs tools` and `/tools`.
pub fn tool_source(registry: &ToolRegistry, name: &str) -> &'static str {
    match registry.source(name) {
        Some(ToolSource::BuiltIn) => "built-in",
        Some(ToolSource::Config) => "config",
        Some(ToolSource::Sidecar) => "sidecar",
        // ybs registers only MCP tools.
        Some(ToolSource::Registered) => "mcp",
        None => "unknown",
    }
}
