//! One model request of a turn: the context-budget trim loop around a streamed reply, and
//! compaction at the threshold.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use ybs_context_budget::{
    Budget, Next, Outcome, PairInfo, Pairs, SendError, TrimLoop, conversation_tokens,
    plan_compaction, predict,
};
use ybs_core::{Accumulator, CacheBreakpoints, ChatRequest, ErrorKind, LlmError, Message, Reply};

/// User turns marked as cache breakpoints: the newest writes the prefix the next request
/// reads; the one before reads what the previous request wrote.
const CACHED_USER_TURNS: usize = 2;

use super::{Agent, AgentError, ResponseChain, Ui};
use crate::Notice;
use crate::prompt::repo_map::RepoMapCache;

/// A context window no conversation reaches, so that only overflow errors trim.
const UNBOUNDED_WINDOW: usize = usize::MAX / 4;

/// What a request gave.
pub(super) enum Sent {
    /// The whole reply.
    Reply(Box<Reply>),
    /// The user cancelled; the text that had arrived.
    Cancelled(String),
}

enum Failure {
    Cancelled(String),
    Llm(LlmError),
}

impl Agent {
    /// Sends the conversation; the messages before `start` (older turns) are what the trim
    /// loop may drop, oldest exchange first, when the model says the context overflowed.
    /// Dropped exchanges leave the conversation for good and `start` moves with them.
    pub(super) async fn send(
        &mut self,
        start: &mut usize,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<Sent, AgentError> {
        if let Some(chain) = self.settings.extras.chain.clone() {
            return self.send_chained(chain, ui, cancel).await;
        }
        let (history, tail) = self.conversation.split_at(*start);
        let pairs = Pairs::split(history);
        let tokens = pairs.tokens(&self.counter, history);
        // The conversation's size is kept in check by compaction; the trim loop only acts on
        // the model's own overflow errors, so the first attempt sends everything.
        let budget = Budget::new(UNBOUNDED_WINDOW, None);
        let prediction = predict(&tokens, &budget);
        let infos = (tokens.iter().enumerate())
            .map(|(index, &count)| PairInfo::new(index.to_string(), count))
            .collect();
        let aut = conversation_tokens(&self.counter, tail);
        self.check_turn_fits(aut as u64)?;
        let model = self.settings.model.clone();
        let mut trim = match TrimLoop::start(model, infos, prediction, aut, budget, None) {
            Ok(trim) => trim,
            Err(refused) => return Err(self.refusal(refused.result)),
        };
        loop {
            let attempt = trim.attempt();
            let mut messages: Vec<Message> = (pairs.payload(history, attempt.history.clone()))
                .into_iter()
                .cloned()
                .collect();
            let kept = messages.len();
            messages.extend(tail.iter().cloned());
            match self.stream_once(messages.clone(), None, ui, cancel).await {
                Ok(reply) => {
                    self.settings.extras.last_response_id = reply.response_id.clone();
                    if attempt.history.start > 0 {
                        // Older exchanges were not sent: drop them for good.
                        messages.truncate(kept);
                        messages.extend(tail.iter().cloned());
                        self.conversation = messages;
                        *start = kept;
                    }
                    return Ok(Sent::Reply(Box::new(reply)));
                }
                Err(Failure::Cancelled(partial)) => return Ok(Sent::Cancelled(partial)),
                Err(Failure::Llm(error)) => match trim.report(Outcome::Failed(error)) {
                    Next::Retry(next) => {
                        ui.notice(
                            Notice::Warning,
                            "the conversation is too long for the model; dropping the oldest \
                             exchange and retrying",
                        );
                        trim = next;
                    }
                    Next::Done(finished) => return Err(self.refusal(finished.result)),
                },
            }
        }
    }

    /// Sends only what the stored reply of `chain` has not seen, continuing it by id; the
    /// reply's own id continues the next request of the turn.
    async fn send_chained(
        &mut self,
        chain: ResponseChain,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<Sent, AgentError> {
        let messages = self
            .conversation
            .get(chain.held..)
            .unwrap_or_default()
            .to_vec();
        match self.stream_once(messages, Some(chain.id), ui, cancel).await {
            Ok(reply) => {
                let extras = &mut self.settings.extras;
                extras.last_response_id = reply.response_id.clone();
                extras.chain = reply.response_id.clone().map(|id| ResponseChain {
                    id,
                    // The reply joins the conversation next.
                    held: self.conversation.len() + 1,
                });
                Ok(Sent::Reply(Box::new(reply)))
            }
            Err(Failure::Cancelled(partial)) => Ok(Sent::Cancelled(partial)),
            Err(Failure::Llm(error)) => Err(AgentError::Send(SendError::Provider(error))),
        }
    }

    async fn stream_once(
        &self,
        messages: Vec<Message>,
        previous_response_id: Option<String>,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<Reply, Failure> {
        let mut request = ChatRequest::new(self.settings.model.clone(), messages)
            .with_tools(self.offered_specs());
        // A session prompt carries the map as one of its sections; a bare system prompt gets
        // it appended.
        request.system = match &self.prompt {
            Some(_) => self.settings.system.clone(),
            None => crate::prompt::repo_map::with_map(
                self.settings.system.as_deref(),
                self.repo_map.as_ref().and_then(RepoMapCache::section),
            ),
        };
        request.temperature = self.settings.temperature;
        if self.plan_mode {
            let system = request.system.take().unwrap_or_default();
            request.system = Some(format!(
                "{}\n\n{}\n",
                system.trim_end(),
                super::plan::section(&self.registry.names_where(|tool| tool.in_plan_mode))
            ));
        }
        let room = self.reply_room(&request.messages);
        request.max_tokens = Some(self.settings.max_tokens.map_or(room, |max| max.min(room)));
        request.response_format = self.settings.response_format.clone();
        if let Some(ttl) = self.settings.prompt_cache {
            request.cache = Some(CacheBreakpoints::for_conversation(
                &request.messages,
                CACHED_USER_TURNS,
                ttl,
            ));
        }
        request.stop = self.settings.stop.clone();
        request.reasoning_effort = self.settings.reasoning_effort;
        request.top_p = self.settings.top_p;
        request.seed = self.settings.seed;
        request.previous_response_id = previous_response_id;
        request.web_search = self.settings.extras.web_search;
        request.extra = self.settings.extras.body.clone();
        ui.waiting();
        let mut stream = self.provider.stream(&request, cancel.clone());
        let mut accumulator = Accumulator::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => {
                    ui.stream_event(&event);
                    accumulator.push(event);
                }
                Err(error) => {
                    ui.reply_done();
                    if error.kind == ErrorKind::Cancelled || cancel.is_cancelled() {
                        return Err(Failure::Cancelled(accumulator.text()));
                    }
                    return Err(Failure::Llm(error));
                }
            }
        }
        ui.reply_done();
        if cancel.is_cancelled() {
            return Err(Failure::Cancelled(accumulator.text()));
        }
        let mut reply = accumulator.finish();
        reply.usage = crate::pricing::priced(
            &self.settings.prices,
            &request.model,
            self.settings.prompt_cache,
            reply.usage,
        );
        Ok(reply)
    }

    /// Compacts the conversation when it reached `context.compaction_threshold`: the model
    /// summarizes the older messages, which the summary replaces.
    pub(super) async fn compact_if_needed(
        &mut self,
        incoming: &Message,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        // The message about to be sent counts: without it, a long one on a conversation just
        // below the threshold overflowed the window, and the trim loop dropped older
        // exchanges for good instead of summarizing them.
        let before = conversation_tokens(&self.counter, &self.conversation);
        let tokens = before + conversation_tokens(&self.counter, std::slice::from_ref(incoming));
        if !self.settings.compaction.needs_compaction(tokens) {
            return Ok(());
        }
        let settings = &self.settings.compaction;
        if !settings.needs_compaction(before)
            && plan_compaction(&self.conversation, &self.counter, settings).is_err()
        {
            // Nothing to summarize: whether the message fits is the turn's to say.
            return Ok(());
        }
        self.compact(ui, cancel).await.map(|_| ())
    }

    /// Compacts the conversation now (`/compact`); false when there is too little to
    /// summarize.
    pub async fn compact(
        &mut self,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<bool, AgentError> {
        let plan =
            match plan_compaction(&self.conversation, &self.counter, &self.settings.compaction) {
                Ok(plan) => plan,
                Err(reason) => {
                    ui.notice(Notice::Info, &format!("not compacted: {reason}"));
                    return Ok(false);
                }
            };
        let _ = self.hook_event(
            crate::hook_events::HookEvent::PreCompact,
            serde_json::json!({"messages": self.conversation.len()}),
            ui,
            cancel,
        );
        ui.notice(Notice::Info, "compacting the conversation...");
        let request = ChatRequest::new(self.settings.model.clone(), plan.request.clone());
        let reply = (self.provider.complete(&request, cancel.clone()).await)
            .map_err(AgentError::Compaction)?;
        self.session_usage +=
            crate::pricing::priced(&self.settings.prices, &request.model, None, reply.usage);
        let summary = reply.message.text_content();
        self.conversation = plan.apply(&self.conversation, &summary);
        ui.notice(
            Notice::Info,
            &match plan.summarized.len() {
                1 => "compacted 1 older message into a summary".to_owned(),
                count => format!("compacted {count} older messages into a summary"),
            },
        );
        Ok(true)
    }
}

impl Agent {
    /// Before a request: this turn (the user's message and the turn's tool results, which
    /// no trimming drops) with ybs's prompt and tools must leave room for a reply in the
    /// model's window, or nothing is sent.
    fn check_turn_fits(&self, turn: u64) -> Result<(), AgentError> {
        let fixed = self.fixed_tokens();
        let window = self.limits.window.tokens;
        if fixed + turn + super::fit::MIN_REPLY <= window {
            return Ok(());
        }
        Err(AgentError::WindowTooSmall(self.too_large(turn, fixed)))
    }

    fn too_large(&self, turn: u64, fixed: u64) -> String {
        use super::limits::thousands;
        format!(
            "this turn does not fit the model's context window of {} tokens ({}): your \
             message and the turn's tool results take about {} tokens and ybs's prompt and \
             tools about {}, with room still needed for the reply; nothing more was sent. \
             Shorten the message (or ask for less of a large file), or use a model or server \
             with a larger window (llama-server -c, Ollama num_ctx)",
            thousands(self.limits.window.tokens),
            self.limits.window.source,
            thousands(turn),
            thousands(fixed)
        )
    }

    /// The server refused a request ybs counted as fitting: its window is smaller than the
    /// one ybs took (often a default, when the provider does not say), or it counts tokens
    /// differently.
    fn refused_by_server(&self, turn: u64, fixed: u64) -> String {
        use super::limits::thousands;
        format!(
            "the model said the request is larger than its context window, even with the \
             older exchanges left out, though ybs counted about {} tokens for your message and \
             the turn's tool results and {} for its prompt and tools, within the {} tokens it \
             took the window to be ({}): the server's window is smaller or it counts tokens \
             differently. Nothing more was sent. Set context.max_tokens to the server's window \
             (ybs then shrinks its prompt to fit), shorten the message, or use a larger window \
             (llama-server -c, Ollama num_ctx)",
            thousands(turn),
            thousands(fixed),
            thousands(self.limits.window.tokens),
            self.limits.window.source,
        )
    }

    /// Why the trim loop gave up, in ybs's words (the budget's own speak of bb7's pairs
    /// and filters).
    fn refusal(&self, result: Result<ybs_context_budget::Delivery, SendError>) -> AgentError {
        use ybs_context_budget::BudgetError;
        match result {
            Err(SendError::Budget(
                BudgetError::ContextOverflowAfterTrimming { .. }
                | BudgetError::UserPromptTooLarge { .. },
            )) => {
                let turn = conversation_tokens(&self.counter, &self.conversation) as u64;
                let fixed = self.fixed_tokens();
                AgentError::WindowTooSmall(if fixed + turn <= self.limits.window.tokens {
                    self.refused_by_server(turn, fixed)
                } else {
                    self.too_large(turn, fixed)
                })
            }
            Err(error) => AgentError::Send(error),
            Ok(_) => AgentError::Send(SendError::Provider(LlmError::new(
                ErrorKind::Unknown,
                "the trim loop ended without a reply",
            ))),
        }
    }
}
