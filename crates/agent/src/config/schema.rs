//! The typed configuration, with its defaults.
//!
//! Every struct is `#[serde(default)]`, so a file may set any subset of keys; merging happens
//! on JSON values before these types are built (see [`super::load`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ybs_providers::{ModelPrice, ProviderKind};

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The schema version (`"1.0"`).
    pub version: String,
    /// The model and the provider that serves it.
    pub llm: LlmConfig,
    /// Context window management.
    pub context: ContextConfig,
    /// The agent loop.
    pub agent: AgentConfig,
    /// Sandboxing and confirmations.
    pub safety: SafetyConfig,
    /// Built-in and external tools.
    pub tools: ToolsConfig,
    /// Git integration.
    pub git: GitConfig,
    /// The terminal display.
    pub ui: UiConfig,
    /// MCP servers whose tools join the registry (an addition to the spec's schema).
    pub mcp: McpConfig,
    /// Commands run around tool calls and after turns that changed files.
    pub hooks: super::HooksConfig,
    /// The language servers asked for diagnostics after an edit.
    pub lsp: super::LspConfig,
}

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: &str = "1.0";

impl Default for Config {
    fn default() -> Self {
        Config {
            version: SCHEMA_VERSION.to_owned(),
            llm: LlmConfig::default(),
            context: ContextConfig::default(),
            agent: AgentConfig::default(),
            safety: SafetyConfig::default(),
            tools: ToolsConfig::default(),
            git: GitConfig::default(),
            ui: UiConfig::default(),
            mcp: McpConfig::default(),
            hooks: super::HooksConfig::default(),
            lsp: super::LspConfig::default(),
        }
    }
}

/// `llm`: which model, where, and how to sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// The provider's name (`ollama`, `openai`, `anthropic`, `openrouter`...).
    pub provider: String,
    /// The model's name as the provider knows it.
    pub model: String,
    /// The provider's base URL. `null` (the default) means the provider's own default
    /// endpoint, which for the default provider `ollama` is `http://localhost:11434`; a fixed
    /// default here would send an `openai` config to Ollama's port.
    pub endpoint: Option<String>,
    /// The API key; `null` means the provider's usual environment variable.
    pub api_key: Option<String>,
    /// Sampling temperature, 0 to 2.
    pub temperature: f64,
    /// The most tokens one reply may have; `null` (the default) means the model's own
    /// limit, capped at 32,000 (see `ybs config` for the value and where it came from).
    pub max_tokens: Option<u32>,
    /// How long one request may take, in seconds.
    pub timeout_seconds: u64,
    /// `auto` marks prompt-cache breakpoints where the API caches only on request
    /// (Anthropic, directly or through OpenRouter) with the 5-minute cache, `1h` with the
    /// one-hour cache (writes cost more), `off` never marks them.
    pub prompt_cache: PromptCache,
    /// How hard a reasoning model thinks: `minimal`, `low`, `medium`, `high`; `null` leaves
    /// it to the model.
    pub reasoning_effort: Option<ybs_core::ReasoningEffort>,
    /// Prices per million tokens by model, added to (or replacing) the built-in table:
    /// `{"my-model": {"input": 1.0, "output": 2.0, "cache_write": 1.25, "cache_read": 0.1}}`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, ModelPrice>,
    /// Named endpoints a chat file selects with `endpoint: NAME`:
    /// `{"nano": {"provider": "openai", "backend": "responses", "model": "gpt-5-nano"}}`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub endpoints: BTreeMap<String, NamedEndpoint>,
}

/// `llm.endpoints.NAME`: a provider, its URL, model and request options under one name; what
/// it leaves out comes from `llm`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NamedEndpoint {
    /// The provider's name (`openai`, `responses`, `anthropic`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The wire API, where a provider has two: `responses` makes an `openai` (or any
    /// OpenAI-compatible URL) endpoint speak the Responses API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The base URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The API key; `null` means the provider's usual environment variable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Request options, as a chat file's `option:` lines give them (`reasoning_effort`,
    /// `temperature`, or any body field).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, Value>,
}

/// `llm.prompt_cache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptCache {
    /// Mark breakpoints where they help.
    #[default]
    Auto,
    /// Mark them for Anthropic's one-hour cache.
    #[serde(rename = "1h")]
    OneHour,
    /// Never mark them.
    Off,
}

impl Default for LlmConfig {
    fn default() -> Self {
        // A local model needs no account: Ollama and its default model.
        let local = ProviderKind::Ollama;
        LlmConfig {
            provider: local.name().to_owned(),
            model: (local.capabilities().default_model)
                .unwrap_or_default()
                .to_owned(),
            endpoint: None,
            api_key: None,
            temperature: 0.7,
            max_tokens: None,
            timeout_seconds: 120,
            prompt_cache: PromptCache::Auto,
            reasoning_effort: None,
            prices: BTreeMap::new(),
            endpoints: BTreeMap::new(),
        }
    }
}

/// `context`: how much history is sent and when it is compacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextConfig {
    /// The context window, in tokens; `null` (the default) means the model's, as the
    /// provider or ybs's catalog gives it (32,000 when neither knows the model).
    pub max_tokens: Option<u64>,
    /// The fraction of `max_tokens` at which the history is compacted (0 to 1).
    pub compaction_threshold: f64,
    /// Tokens given to the repository map.
    pub repo_map_tokens: u64,
    /// Tool output longer than this is truncated before it reaches the model.
    pub max_tool_output_chars: usize,
    /// The most characters of `AGENTS.md`/`CLAUDE.md` instructions put in the system prompt.
    pub instructions_max_chars: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            max_tokens: None,
            compaction_threshold: 0.95,
            repo_map_tokens: 1024,
            max_tool_output_chars: 10_000,
            instructions_max_chars: 32_000,
        }
    }
}

/// `agent`: the loop's limits and retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// The most model calls one user turn may make.
    pub max_iterations: u32,
    /// How often a failed request is retried.
    pub retry_attempts: u32,
    /// The first retry's delay in milliseconds; later ones back off from it.
    pub retry_backoff_base_ms: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_iterations: 25,
            retry_attempts: 3,
            retry_backoff_base_ms: 1000,
        }
    }
}

/// `safety`: the sandbox and which tools ask first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SafetyConfig {
    /// Whether shell commands run sandboxed.
    pub sandbox_enabled: bool,
    /// Directories tools may touch (`~` expanded, relative ones from the working directory).
    pub sandbox_allowed_paths: Vec<String>,
    /// Paths tools may never touch, even inside an allowed directory.
    pub sandbox_blocked_paths: Vec<String>,
    /// Tools that ask the user before they run.
    pub require_confirmation: Vec<String>,
    /// Shell commands refused outright.
    pub blocked_commands: Vec<String>,
    /// Environment variables passed to shell commands besides the default allow-list
    /// (exact names, or a prefix ending in `*`).
    pub shell_env: Vec<String>,
    /// What runs without asking: `ask` (everything that changes something asks),
    /// `auto-edit` (edits inside the project run, commands ask), `full-auto` (everything
    /// runs, still sandboxed).
    pub approval: Approval,
    /// Whether a `run_shell` call may ask for the network: `off` (refused), `ask` (the user
    /// is asked, with the model's reason), `on` (as any other command). Commands that do not
    /// ask never have it while the sandbox is on.
    pub network: Network,
    /// Allow and deny rules: `run_shell(cargo test*)`, `write_file(src/*)`, `edit_file`.
    /// Each file's rules form a layer of their own (the project's apart from the user's).
    pub permissions: PermissionRules,
    /// Whether the home directory or `/` may be a directory the tools write in (the project
    /// directory, or an allowed path). Off: ybs refuses to start there, as the model could
    /// then change any of the user's files.
    pub allow_home_as_project: bool,
}

/// `safety.approval`: what runs without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approval {
    /// Ask before everything that changes something (the default).
    #[default]
    Ask,
    /// Edits of files inside the project run; commands still ask.
    AutoEdit,
    /// Everything runs without asking (still in the sandbox; deny rules still refuse).
    FullAuto,
}

impl Approval {
    /// The name as written in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Approval::Ask => "ask",
            Approval::AutoEdit => "auto-edit",
            Approval::FullAuto => "full-auto",
        }
    }

    /// Reads a name.
    pub fn parse(text: &str) -> Option<Approval> {
        serde_json::from_value(serde_json::Value::String(text.trim().to_owned())).ok()
    }
}

/// `safety.network`: what a `run_shell` call that asks for the network gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// Refused: the model is told the network is off.
    Off,
    /// The user is asked, with the model's reason (the default); rules and approval modes
    /// settle it as for other calls.
    #[default]
    Ask,
    /// Settled as any other command.
    On,
}

impl Network {
    /// The name as written in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Network::Off => "off",
            Network::Ask => "ask",
            Network::On => "on",
        }
    }

    /// Reads a name.
    pub fn parse(text: &str) -> Option<Network> {
        serde_json::from_value(serde_json::Value::String(text.trim().to_owned())).ok()
    }
}

/// `safety.permissions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PermissionRules {
    /// Calls that run without asking.
    pub allow: Vec<String>,
    /// Calls that never run.
    pub deny: Vec<String>,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            sandbox_enabled: true,
            sandbox_allowed_paths: strings(&["./"]),
            sandbox_blocked_paths: strings(&["~/.ssh", "~/.aws", "~/.config"]),
            require_confirmation: strings(&["write_file", "run_shell", "delete_file"]),
            blocked_commands: strings(&["rm -rf /", "sudo", "chmod 777"]),
            shell_env: Vec::new(),
            approval: Approval::Ask,
            network: Network::Ask,
            permissions: PermissionRules::default(),
            allow_home_as_project: false,
        }
    }
}

/// `tools`: which built-in tools are on, and the external ones.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolsConfig {
    /// The built-in tools.
    pub builtin: BuiltinTools,
    /// External executables. Empty by default: the spec's `web_search` and
    /// `web_fetch` entries are examples of scripts a user installs, not programs ybs ships.
    pub external: Vec<ExternalTool>,
}

/// `tools.builtin`: one entry per built-in tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BuiltinTools {
    /// `read_file`.
    pub read_file: BuiltinTool,
    /// `write_file`.
    pub write_file: BuiltinTool,
    /// `edit_file`.
    pub edit_file: BuiltinTool,
    /// `list_files`.
    pub list_files: BuiltinTool,
    /// `search_files`.
    pub search_files: BuiltinTool,
    /// `run_shell`.
    pub run_shell: BuiltinTool,
    /// `read_job_output`: a background job's new output (only with `run_shell`).
    pub read_job_output: BuiltinTool,
    /// `stop_job`: ends a background job (only with `run_shell`).
    pub stop_job: BuiltinTool,
    /// `todo_write`: the model's task list.
    pub todo_write: BuiltinTool,
    /// `web_fetch`: a web page as text (asks first per domain).
    pub web_fetch: BuiltinTool,
    /// `web_search`: the provider's hosted web search, where it has one (off by default).
    pub web_search: BuiltinTool,
    /// `task`: a read-only sub-agent.
    pub task: BuiltinTool,
}

impl BuiltinTools {
    /// Each entry by the name of its tool, as the configuration spells it.
    pub fn by_name(&self) -> std::collections::BTreeMap<String, BuiltinTool> {
        (serde_json::to_value(self).ok())
            .and_then(|entries| serde_json::from_value(entries).ok())
            .unwrap_or_default()
    }
}

impl Default for BuiltinTools {
    fn default() -> Self {
        BuiltinTools {
            read_file: BuiltinTool::default(),
            write_file: BuiltinTool::default(),
            edit_file: BuiltinTool::default(),
            list_files: BuiltinTool::default(),
            search_files: BuiltinTool::default(),
            run_shell: BuiltinTool {
                enabled: true,
                timeout_seconds: Some(30),
                limits: None,
            },
            read_job_output: BuiltinTool::default(),
            stop_job: BuiltinTool::default(),
            todo_write: BuiltinTool::default(),
            web_fetch: BuiltinTool {
                enabled: true,
                timeout_seconds: Some(30),
                limits: None,
            },
            // Off unless asked for: each search is billed by the provider.
            web_search: BuiltinTool {
                enabled: false,
                timeout_seconds: None,
                limits: None,
            },
            task: BuiltinTool::default(),
        }
    }
}

/// One built-in tool's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BuiltinTool {
    /// Whether the model sees the tool.
    pub enabled: bool,
    /// The tool's time limit in seconds, for tools that have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Resource limits of sandboxed commands (`run_shell` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<ShellLimitsConfig>,
}

impl Default for BuiltinTool {
    fn default() -> Self {
        BuiltinTool {
            enabled: true,
            timeout_seconds: None,
            limits: None,
        }
    }
}

/// `tools.builtin.run_shell.limits`: a missing key keeps the default, 0 removes the limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShellLimitsConfig {
    /// Processes at once (`RLIMIT_NPROC`; default 1024).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<u64>,
    /// Address space of each process in MiB (`RLIMIT_AS`; default 16384).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory_mb: Option<u64>,
    /// The largest file a command may write, in MiB (`RLIMIT_FSIZE`; default 8192).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_file_size_mb: Option<u64>,
}

/// One entry of `tools.external`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExternalTool {
    /// The tool's name as the model sees it.
    pub name: String,
    /// How it runs; only `"executable"` exists.
    #[serde(rename = "type")]
    pub kind: String,
    /// The executable (`~` expanded).
    pub path: String,
    /// What the tool does, for the model (a `.tool.json` sidecar may supply it instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The parameters in the spec's short form or as JSON Schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// The time limit in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Whether the model sees the tool.
    pub enabled: bool,
}

/// The one kind of external tool.
pub const EXTERNAL_TOOL_KIND: &str = "executable";

impl Default for ExternalTool {
    fn default() -> Self {
        ExternalTool {
            name: String::new(),
            kind: EXTERNAL_TOOL_KIND.to_owned(),
            path: String::new(),
            description: None,
            parameters: None,
            timeout_seconds: None,
            enabled: true,
        }
    }
}

/// `git`: committing what the agent changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GitConfig {
    /// Commit the files a turn changed.
    pub auto_commit: bool,
    /// The start of every such commit's message.
    pub commit_message_prefix: String,
}

impl Default for GitConfig {
    fn default() -> Self {
        GitConfig {
            auto_commit: false,
            commit_message_prefix: "[ybs]".to_owned(),
        }
    }
}

/// `ui`: what the terminal shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UiConfig {
    /// Use colours (also off with `NO_COLOR` or when output is not a terminal).
    pub color: bool,
    /// Show tokens and cost after each turn.
    pub show_token_usage: bool,
    /// Show tool calls and their results.
    pub show_tool_calls: bool,
    /// Show replies as they arrive rather than when complete.
    pub stream_responses: bool,
    /// Show the model's reasoning, dimmed (an addition to the spec's schema).
    pub show_reasoning: bool,
    /// The colour theme of highlighted code blocks (a bundled syntect theme name).
    pub theme: String,
    /// Ring the terminal's bell (or send an OSC 9 notification where the terminal shows it)
    /// when a long turn finishes or a confirmation waits.
    pub notify: bool,
    /// How long a turn must take, in seconds, for its end to notify.
    pub notify_after_seconds: u64,
    /// The REPL line editor's keys: `emacs` (the default) or `vi`.
    pub editing_mode: super::keys::EditingMode,
    /// The REPL line editor's key bindings, by action.
    pub keys: super::keys::KeyBindings,
}

/// The default of `ui.theme`, one of the highlighter's bundled themes; also the theme used
/// when `ui.theme` names no bundled theme.
pub const DEFAULT_THEME: &str = "base16-ocean.dark";

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            color: true,
            show_token_usage: true,
            show_tool_calls: true,
            stream_responses: true,
            show_reasoning: true,
            theme: DEFAULT_THEME.to_owned(),
            notify: true,
            notify_after_seconds: 5,
            editing_mode: super::keys::EditingMode::default(),
            keys: super::keys::KeyBindings::default(),
        }
    }
}

/// `mcp`: Model Context Protocol servers, by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct McpConfig {
    /// The servers; the name prefixes their tools.
    pub servers: BTreeMap<String, McpServer>,
}

/// One MCP server: started as a child process (`command`) or reached over streamable HTTP
/// (`url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct McpServer {
    /// The program to start, for stdio servers (`~` expanded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables for it (`${NAME}` in a value is the variable of ybs's own
    /// environment).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The endpoint, for HTTP servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra HTTP headers (authorization, usually; `${NAME}` in a value is an environment
    /// variable, so the secret need not be in the file).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Whether to connect at all.
    pub enabled: bool,
    /// Only these tools of the server (by the server's own names); empty means all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Run this server's tools without asking. Off by default: a server's tools can do
    /// anything its process can, and its read-only hints are only hints.
    pub trust: bool,
    /// How long starting the server and listing its tools may take, in seconds.
    pub startup_timeout_seconds: u64,
    /// How long one tool call may take, in seconds.
    pub tool_timeout_seconds: u64,
}

impl Default for McpServer {
    fn default() -> Self {
        McpServer {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            tools: Vec::new(),
            trust: false,
            startup_timeout_seconds: 30,
            tool_timeout_seconds: 120,
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}
