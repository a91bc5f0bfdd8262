//! The ybs agent engine, without a terminal: a conversation with a model that calls tools
//! in a sandbox, asks before the calls that need it, keeps sessions and an undo journal, and
//! reports everything it shows or asks through one trait, [`Ui`]. The `ybs` command line and
//! its front ends (REPL, `exec`, `ask`, ACP, MCP server) are one user of it; anything that
//! can implement [`Ui`] is another.
//!
//! # One turn
//!
//! Build an agent from a configuration (here a local OpenAI-compatible server; the test
//! kit's fake one stands in for it), implement [`Ui`] to see the reply, and run a turn:
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use tokio_util::sync::CancellationToken;
//! use ybs_agent::config::Config;
//! use ybs_agent::confirm::Answer;
//! use ybs_agent::setup::Surroundings;
//! use ybs_agent::{AgentBuilder, Notice, Ui};
//! use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};
//!
//! /// Prints the reply; says no to every tool call that needs a confirmation.
//! struct Print;
//!
//! impl Ui for Print {
//!     fn stream_event(&mut self, event: &StreamEvent) {
//!         if let StreamEvent::TextDelta { text } = event {
//!             print!("{text}");
//!         }
//!     }
//!     fn reply_done(&mut self) {
//!         println!();
//!     }
//!     fn tool_call(&mut self, call: &ToolCall) {
//!         println!("calls {}", call.name);
//!     }
//!     fn tool_result(&mut self, _tool: &str, _result: &ToolResult) {}
//!     fn notice(&mut self, _kind: Notice, message: &str) {
//!         eprintln!("{message}");
//!     }
//!     fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
//!     fn confirm(&mut self, _call: &ToolCall, _reason: &str) -> Answer {
//!         Answer::No
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = ybs_testkit::FakeLlm::start(ybs_testkit::Script::new([
//! #     ybs_testkit::Turn::text(["Hello!"]),
//! # ]))?;
//! # let endpoint = format!("{}/v1", server.base_url());
//! # let project = tempfile::tempdir()?;
//! # let project = project.path().to_path_buf();
//! # let home = tempfile::tempdir()?;
//! # let home = home.path().to_path_buf();
//! let mut config = Config::default();
//! config.llm.provider = "openai-compatible".into();
//! config.llm.endpoint = Some(endpoint); // e.g. "http://127.0.0.1:8080/v1"
//! config.llm.model = "fake-model".into();
//! let around = Surroundings {
//!     cwd: project, // the tools' sandbox starts here
//!     home: Some(home), // the secrets under it (`~/.ssh`, ...) stay out of the sandbox
//!     env: BTreeMap::new(),
//! };
//! let (mut agent, _report) = AgentBuilder::new(&config, around).build()?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! let turn = runtime.block_on(agent.turn("Say hello", &mut Print, &CancellationToken::new()))?;
//! assert_eq!(turn.reply, "Hello!");
//! # Ok(())
//! # }
//! ```
//!
//! # The loop
//!
//! A turn sends the conversation with the tools, streams the reply, settles and runs its
//! tool calls, appends the results, and repeats until a reply without tool calls,
//! `agent.max_iterations`, a loop, or a cancelled turn. An [`Agent`] is built from the
//! configuration by [`AgentBuilder`] (provider, tools, sandbox, confirmation policy, rules,
//! the session's prompt and journal); a turn (`turn`) sends each request (`send`), settles
//! and runs the tool calls (`tools`, with [`confirm`] and [`approve`]) and stops a loop
//! ([`loop_guard`]). Calls of one reply that change nothing run at once; the `task` tool runs
//! a read-only sub-agent ([`subagent`]); the configuration's [`hooks`] run around calls and
//! check a turn's changes; [`todos`] restores the task list; [`plan`] is plan mode.
//! [`review`] asks the model for a code review (a plan-mode turn) and reads its findings.
//!
//! # Around it
//!
//! - [`config`]: configuration layering, schema, validation and the trust of a project's
//!   settings; [`host`] is where configuration and data live.
//! - [`prompt`]: the system prompt: ybs's instructions, the environment, project
//!   instructions and the repository map.
//! - [`session`]: sessions saved as `.chat` files, and undo.
//! - [`permissions`]: the allow and deny rules of the session, the project and the user.
//! - [`mcp`]: MCP servers' tools.
//! - [`project`]: where the project is, and git (`git.auto_commit`, the diff a review reads).
//! - [`headless`]: a session opened for a project and run turn by turn, for programs that
//!   drive the agent without a terminal.

pub mod after_turn;
pub mod approve;
mod builder;
pub mod config;
pub mod confirm;
pub mod extensions;
pub mod extras;
pub mod fit;
pub mod headless;
pub mod hook_events;
pub mod hooks;
pub mod host;
pub mod inert;
pub mod limits;
pub mod loop_guard;
pub mod lsp;
pub mod mcp;
pub mod network;
pub mod permissions;
pub mod plan;
pub mod prepare;
pub mod preview;
pub mod pricing;
pub mod project;
pub mod prompt;
pub mod review;
pub mod session;
pub mod setup;
pub mod shrink;
pub mod steering;
pub mod subagent;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod declared_tools_tests;
mod send;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod subagent_tests;
#[cfg(test)]
mod tests;
pub mod todos;
pub mod tool_help;
mod tools;
mod turn;
pub mod ui;

use std::path::PathBuf;
use std::sync::Arc;

use ybs_context_budget::{CachedCounter, CharsPerToken, CompactionSettings, SendError};
use ybs_core::{LlmError, Message, Usage};
use ybs_providers::Provider;
use ybs_tools::{ConfirmationPolicy, ToolContext, ToolRegistry};

use crate::confirm::ConfirmMode;
use crate::prompt::repo_map::RepoMapCache;
pub use builder::{AgentBuilder, SetupReport};
pub use extras::{RequestExtras, ResponseChain};
pub use ui::{Notice, Ui};

/// The note kept after a reply the user cancelled.
pub const CANCELLED_NOTE: &str = "[cancelled by the user; the reply is incomplete]";

/// How the agent talks to the model and runs tools.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The model to ask.
    pub model: String,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// `llm.temperature`.
    pub temperature: Option<f32>,
    /// `llm.max_tokens`.
    pub max_tokens: Option<u32>,
    /// `agent.max_iterations`: model requests per user turn.
    pub max_iterations: u32,
    /// `--dry-run`: show tool calls, execute none.
    pub dry_run: bool,
    /// How confirmations are settled.
    pub confirm: ConfirmMode,
    /// `context.max_tokens` and `context.compaction_threshold`.
    pub compaction: CompactionSettings,
    /// The reply's format (a chat file's `format:` option).
    pub response_format: Option<ybs_core::ResponseFormat>,
    /// `llm.prompt_cache`: mark cache breakpoints with this lifetime on the tools, the system
    /// prompt and the newest two user turns (used where the API caches only on request).
    pub prompt_cache: Option<ybs_core::CacheTtl>,
    /// Prices for the replies' cost when the provider reports none.
    pub prices: std::sync::Arc<ybs_providers::PriceTable>,
    /// Sequences that end the reply (a chat file's `stop` option).
    pub stop: Vec<String>,
    /// How hard a reasoning model thinks (a chat file's `reasoning_effort` option).
    pub reasoning_effort: Option<ybs_core::ReasoningEffort>,
    /// Nucleus sampling (a chat file's `top_p` option).
    pub top_p: Option<f32>,
    /// A sampling seed (a chat file's `seed` option).
    pub seed: Option<u64>,
    /// A chat file's stored reply to continue, web search and pass-through body fields.
    pub extras: RequestExtras,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The model replied without tool calls.
    Finished,
    /// `agent.max_iterations` requests were made.
    MaxIterations,
    /// The same call was repeated; the loop guard stopped the turn.
    Stuck,
    /// The user cancelled; the partial reply is kept.
    Cancelled,
}

/// What one turn did.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// Why it ended.
    pub stop: Stop,
    /// The text of the last reply.
    pub reply: String,
    /// Files the tools wrote, edited or deleted (absolute paths).
    pub changed: Vec<PathBuf>,
    /// Tokens and cost of the turn.
    pub usage: Usage,
    /// Index in [`Agent::conversation`] of the turn's user message.
    pub start: usize,
}

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The model could not be asked (after retries and trimming).
    #[error("{0}")]
    Send(#[from] SendError),
    /// Compaction failed.
    #[error("cannot compact the conversation: {0}")]
    Compaction(LlmError),
    /// Even ybs's smallest prompt does not fit the model's window; nothing was sent.
    #[error("{0}")]
    WindowTooSmall(String),
}

/// One conversation with its model, tools and confirmation state.
pub struct Agent {
    /// The conversation so far (no system prompt: that is in the settings).
    pub conversation: Vec<Message>,
    /// How to talk and run tools.
    pub settings: AgentSettings,
    /// The model's backend.
    pub provider: Arc<dyn Provider>,
    /// The tools.
    pub registry: ToolRegistry,
    /// The sandbox and session state the tools run with.
    pub tool_context: ToolContext,
    /// Which calls need confirmation, and the session's allow-list.
    pub policy: ConfirmationPolicy,
    /// Tokens and cost of the session.
    pub session_usage: Usage,
    /// Tokens and cost of the last turn that finished (`/usage`).
    pub last_turn_usage: Usage,
    /// The sections of the system prompt, when ybs assembled it (`settings.system` is its
    /// text).
    pub prompt: Option<crate::prompt::SessionPrompt>,
    /// The pre-images of the files each turn wrote, for `/undo`.
    pub journal: crate::session::undo::Journal,
    /// The repository map of the system prompt (`None`: off).
    pub repo_map: Option<RepoMapCache>,
    /// The model's context window and output limit.
    pub limits: limits::Limits,
    /// Prompt tokens of the newest request (as the provider counted them, else estimated).
    pub last_prompt_tokens: u64,
    /// Plan mode: only read-only tools, and the plan section in the system prompt.
    pub plan_mode: bool,
    /// The allow and deny rules of the session, the project and the user.
    pub permissions: permissions::Permissions,
    /// `safety.approval`: what runs without asking.
    pub approval: approve::Approval,
    /// `safety.network`: what a `run_shell` call that asks for the network gets.
    pub network: crate::config::Network,
    /// Where "always" answers save rules.
    pub rule_files: permissions::RuleFiles,
    /// `hooks`: commands around tool calls and after turns that changed files.
    pub hooks: crate::config::HooksConfig,
    /// The custom sub-agents the `task` tool runs by name.
    pub agents: Vec<crate::extensions::AgentFile>,
    /// Context the `session_start` hooks gave, sent with the next message.
    pub pending_context: Vec<String>,
    /// The connected MCP servers: their resources, prompts, and tools that changed.
    pub mcp: crate::mcp::McpServers,
    /// Messages the user sent into the running turn, for its next request.
    pub steering: steering::Steering,
    /// The language servers asked for diagnostics after a file changes (`lsp`); `None`
    /// where the front end set none up (a sub-agent, a test).
    pub lsp: Option<lsp::LanguageServers>,
    /// What was left out of the prompt to fit the window.
    shrunk: Vec<shrink::Shrink>,
    counter: CachedCounter<CharsPerToken>,
    /// Whether a dry run has shown the system prompt yet.
    prompt_shown: bool,
}

/// Everything an [`Agent`] is made of besides its conversation and counters, gathered by
/// [`AgentBuilder`] so that an agent is whole when it is made.
pub(crate) struct Parts {
    pub(crate) settings: AgentSettings,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) registry: ToolRegistry,
    pub(crate) tool_context: ToolContext,
    pub(crate) policy: ConfirmationPolicy,
    pub(crate) limits: limits::Limits,
    pub(crate) hooks: crate::config::HooksConfig,
    pub(crate) repo_map: Option<RepoMapCache>,
    pub(crate) prompt: Option<crate::prompt::SessionPrompt>,
    pub(crate) journal: crate::session::undo::Journal,
    pub(crate) permissions: permissions::Permissions,
    pub(crate) approval: approve::Approval,
    pub(crate) network: crate::config::Network,
    pub(crate) rule_files: permissions::RuleFiles,
    pub(crate) mcp: crate::mcp::McpServers,
}

impl Agent {
    /// The agent of `parts`, with an empty conversation.
    pub(crate) fn from_parts(parts: Parts) -> Self {
        let Parts {
            settings,
            provider,
            registry,
            tool_context,
            policy,
            limits,
            hooks,
            repo_map,
            prompt,
            journal,
            permissions,
            approval,
            network,
            rule_files,
            mcp,
        } = parts;
        let mut agent = Agent::new(settings, provider, registry, tool_context, policy);
        agent.set_limits(limits);
        if let Some(prompt) = prompt {
            agent.set_prompt(prompt);
        }
        agent.hooks = hooks;
        agent.repo_map = repo_map;
        agent.journal = journal;
        agent.permissions = permissions;
        agent.approval = approval;
        agent.network = network;
        agent.rule_files = rule_files;
        agent.mcp = mcp;
        agent
    }

    /// An agent with an empty conversation and default rules (the sub-agent's and the
    /// tests' start; everything else is built with [`AgentBuilder`]).
    pub(crate) fn new(
        settings: AgentSettings,
        provider: Arc<dyn Provider>,
        registry: ToolRegistry,
        tool_context: ToolContext,
        policy: ConfirmationPolicy,
    ) -> Self {
        Agent {
            conversation: Vec::new(),
            settings,
            provider,
            registry,
            tool_context,
            policy,
            session_usage: Usage::default(),
            last_turn_usage: Usage::default(),
            prompt: None,
            journal: crate::session::undo::Journal::default(),
            repo_map: None,
            limits: limits::Limits::default(),
            last_prompt_tokens: 0,
            plan_mode: false,
            permissions: permissions::Permissions::default(),
            approval: approve::Approval::default(),
            network: crate::config::Network::default(),
            rule_files: permissions::RuleFiles::default(),
            hooks: crate::config::HooksConfig::default(),
            agents: Vec::new(),
            pending_context: Vec::new(),
            mcp: Default::default(),
            steering: steering::Steering::default(),
            shrunk: Vec::new(),
            counter: CachedCounter::new(CharsPerToken::default()),
            prompt_shown: false,
            lsp: None,
        }
    }

    /// Runs with `limits`: the reply's size, the compaction threshold's window and, when
    /// the server said how its tokenizer counts, the token estimates.
    pub fn set_limits(&mut self, limits: limits::Limits) {
        self.settings.max_tokens = u32::try_from(limits.output.tokens).ok();
        self.settings.compaction.max_tokens =
            usize::try_from(limits.window.tokens).unwrap_or(usize::MAX);
        // A model switched to without a known tokenizer is estimated as any other.
        let counter = (limits.chars_per_token)
            .and_then(|r| CharsPerToken::new(r).ok())
            .unwrap_or_default();
        self.counter = CachedCounter::new(counter);
        self.limits = limits;
    }

    /// How full the window was at the newest request: `(tokens, window)`.
    pub fn context_fill(&self) -> Option<(u64, u64)> {
        (self.last_prompt_tokens > 0)
            .then_some((self.last_prompt_tokens, self.limits.window.tokens))
    }

    /// Uses `prompt` as the system prompt of the session.
    pub fn set_prompt(&mut self, prompt: crate::prompt::SessionPrompt) {
        self.settings.system = Some(prompt.text());
        self.prompt = Some(prompt);
    }

    /// Puts `map` in the repo map section of the system prompt (`None` leaves it out). The
    /// prompt's text changes only when the map does.
    pub fn set_repo_map(&mut self, map: Option<String>) {
        if let Some(prompt) = self.prompt.as_mut().filter(|prompt| prompt.repo_map != map) {
            prompt.repo_map = map;
            self.settings.system = Some(prompt.text());
        }
    }

    /// The conversation's size in tokens, as the compaction threshold counts it.
    pub fn conversation_tokens(&self) -> usize {
        ybs_context_budget::conversation_tokens(&self.counter, &self.conversation)
    }

    /// Forgets the conversation, the files read and the session allow-list.
    pub fn clear(&mut self) {
        self.conversation.clear();
        self.journal.clear();
        self.tool_context.session.clear();
        self.policy.reset_session();
        self.permissions.clear_session();
    }
}
