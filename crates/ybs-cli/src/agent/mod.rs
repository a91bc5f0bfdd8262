//! The agent loop of spec section 6: send the conversation with the tools, stream the reply,
//! settle and run its tool calls, append the results, and repeat until a reply without tool
//! calls, `agent.max_iterations`, a loop, or a cancelled turn. An [`Agent`] is built from the
//! configuration by [`setup`] (provider, tools, sandbox, confirmation policy, [`pricing`]) and
//! readied for a session by [`prepare`]; a turn (`turn`) sends each request (`send`), settles
//! and runs the tool calls (`tools`, with [`confirm`]) and stops a loop ([`loop_guard`]). What
//! the user sees and answers goes through [`Ui`] ([`ui`]), so the loop runs the same in every
//! front end and in tests. Calls of one reply that change nothing run at once (`tools`); the
//! `task` tool runs a read-only sub-agent ([`subagent`]); the configuration's [`hooks`] run
//! around calls and check a turn's changes; [`todos`] shows and restores the task list.

pub mod approve;
pub mod confirm;
pub mod extras;
pub mod fit;
pub mod hooks;
pub mod inert;
pub mod limits;
pub mod loop_guard;
pub mod network;
pub mod permissions;
pub mod plan;
pub mod prepare;
pub mod preview;
pub mod pricing;
pub mod setup;
pub mod shrink;
pub mod subagent;

mod send;
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

use crate::agent::confirm::ConfirmMode;
use crate::prompt::repo_map::RepoMapCache;
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
    /// What was left out of the prompt to fit the window.
    shrunk: Vec<shrink::Shrink>,
    counter: CachedCounter<CharsPerToken>,
    /// Whether a dry run has shown the system prompt yet.
    prompt_shown: bool,
}

impl Agent {
    /// An agent with an empty conversation.
    pub fn new(
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
            shrunk: Vec::new(),
            counter: CachedCounter::new(CharsPerToken::default()),
            prompt_shown: false,
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
