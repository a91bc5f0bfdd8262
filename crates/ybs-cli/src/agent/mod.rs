//! The agent loop of spec section 6: send the conversation with the tools, stream the reply,
//! settle and run its tool calls, append the results, and repeat until a reply without tool
//! calls, `agent.max_iterations`, a loop, or a cancelled turn. What the user sees and answers
//! goes through [`Ui`], so the loop runs the same in the REPL, `exec`, `ask` and tests.

pub mod confirm;
pub mod loop_guard;
pub mod prepare;
pub mod pricing;
pub mod setup;

mod send;
#[cfg(test)]
mod tests;
mod tools;
pub mod ui;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use ybs_context_budget::{CachedCounter, CharsPerToken, CompactionSettings, SendError};
use ybs_core::{LlmError, Message, Part, Role, ToolCall, ToolResult, Usage};
use ybs_providers::Provider;
use ybs_tools::{ConfirmationPolicy, ToolContext, ToolRegistry};

use crate::agent::confirm::ConfirmMode;
use crate::agent::loop_guard::LoopGuard;
use crate::prompt::repo_map::{Refresh, RepoMapCache};
use crate::render::Notice;
pub use ui::{LineUi, Ui};

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
    /// The sections of the system prompt, when ybs assembled it (`settings.system` is its
    /// text).
    pub prompt: Option<crate::prompt::SessionPrompt>,
    /// The pre-images of the files each turn wrote, for `/undo`.
    pub journal: crate::session::undo::Journal,
    /// The repository map of the system prompt (`None`: off).
    pub repo_map: Option<RepoMapCache>,
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
            prompt: None,
            journal: crate::session::undo::Journal::default(),
            repo_map: None,
            counter: CachedCounter::new(CharsPerToken::default()),
            prompt_shown: false,
        }
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

    /// Runs one user turn: the loop of spec section 6.
    pub async fn turn(
        &mut self,
        prompt: &str,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, AgentError> {
        self.turn_message(Message::user(prompt), ui, cancel).await
    }

    /// [`turn`](Agent::turn) for a user message with more than text (images).
    pub async fn turn_message(
        &mut self,
        message: Message,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, AgentError> {
        self.compact_if_needed(ui, cancel).await?;
        let start = self.conversation.len();
        self.conversation.push(message);
        self.run_from(start, ui, cancel).await
    }

    /// Runs the loop on the conversation as it is, from its message `start` (the turn's
    /// first message): for `ask`, whose question is already in the conversation.
    pub async fn run_from(
        &mut self,
        mut start: usize,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, AgentError> {
        let mut report = TurnReport {
            stop: Stop::MaxIterations,
            reply: String::new(),
            changed: Vec::new(),
            usage: Usage::default(),
            start,
        };
        self.refresh_repo_map(ui);
        let mut guard = LoopGuard::new();
        let request =
            (self.conversation.get(start)).map_or_else(String::new, Message::text_content);
        self.journal.begin_turn(start, &request);
        if self.settings.dry_run && !self.prompt_shown {
            self.prompt_shown = true;
            let system = self.settings.system.as_deref().unwrap_or("(none)");
            let shown = format!(
                "dry run: the system prompt of this session:\n{}",
                system.trim_end()
            );
            ui.notice(Notice::Info, &shown);
        }
        for _ in 0..self.settings.max_iterations {
            let reply = match self.send(&mut start, ui, cancel).await? {
                send::Sent::Reply(reply) => *reply,
                send::Sent::Cancelled(partial) => {
                    let text = format!("{}\n\n{CANCELLED_NOTE}", partial.trim_end());
                    self.conversation
                        .push(Message::assistant(text.trim_start()));
                    report.reply = partial;
                    let notice = "turn cancelled; the partial reply is kept";
                    return Ok(self.cancelled(report, start, ui, notice));
                }
            };
            report.usage += reply.usage;
            report.reply = reply.message.text_content();
            let calls: Vec<ToolCall> = reply.message.tool_calls().cloned().collect();
            self.conversation.push(reply.message);
            if calls.is_empty() {
                report.stop = Stop::Finished;
                return Ok(self.finish(report, start, ui));
            }
            let mut stuck = None;
            for call in &calls {
                let result = if stuck.is_some() || cancel.is_cancelled() {
                    tools::error_result(call, tools::NOT_RUN)
                } else {
                    let check = guard.observe(call);
                    match (check.user_warning(), check.model_message()) {
                        (Some(warning), Some(message)) => {
                            ui.notice(Notice::Warning, &warning);
                            stuck = Some(());
                            tools::error_result(call, &message)
                        }
                        _ => self.run_call(call, ui, &mut report.changed, cancel),
                    }
                };
                self.conversation.push(tool_message(result));
            }
            if cancel.is_cancelled() {
                // Every call has its result; the note tells the model the turn was cut.
                self.conversation.push(Message::assistant(CANCELLED_NOTE));
                let notice =
                    "turn cancelled; the tool calls made so far and their results are kept";
                return Ok(self.cancelled(report, start, ui, notice));
            }
            if stuck.is_some() {
                report.stop = Stop::Stuck;
                return Ok(self.finish(report, start, ui));
            }
        }
        ui.notice(
            Notice::Warning,
            &format!(
                "stopped after {} model requests (agent.max_iterations); the task may be unfinished",
                self.settings.max_iterations
            ),
        );
        Ok(self.finish(report, start, ui))
    }

    /// Rebuilds the repository map if the files changed; once a turn, so that every request
    /// of a turn carries the same system prompt.
    fn refresh_repo_map(&mut self, ui: &mut dyn Ui) {
        let Some(map) = &mut self.repo_map else {
            return;
        };
        if map.refresh(&self.conversation) == Refresh::Rebuilt && self.settings.dry_run {
            ui.notice(Notice::Info, &map.describe());
        }
        let section = map.section().map(str::to_owned);
        self.set_repo_map(section);
    }

    fn cancelled(
        &mut self,
        mut report: TurnReport,
        start: usize,
        ui: &mut dyn Ui,
        notice: &str,
    ) -> TurnReport {
        ui.notice(Notice::Warning, notice);
        report.stop = Stop::Cancelled;
        self.finish(report, start, ui)
    }

    fn finish(&mut self, mut report: TurnReport, start: usize, ui: &mut dyn Ui) -> TurnReport {
        self.journal.end_turn();
        if let Some(error) = self.journal.disk_error.take() {
            ui.notice(Notice::Warning, &error);
        }
        self.session_usage += report.usage;
        ui.usage(&report.usage, &self.session_usage);
        report.start = start;
        report.changed.sort();
        report.changed.dedup();
        report
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
    }
}

/// A tool result as the message that carries it.
fn tool_message(result: ToolResult) -> Message {
    Message::new(Role::Tool, vec![Part::ToolResult(result)])
}
