//! One turn: the agent loop (send, run the tool calls, send their results, until the model
//! calls no tool) around [`send`](super::send) and [`tools`](super::tools), with the loop
//! guard, the turn's undo record and the report.

use tokio_util::sync::CancellationToken;
use ybs_core::{FinishReason, Message, Part, Role, ToolCall, ToolResult, Usage};
use ybs_tools::Runner;

use super::loop_guard::LoopGuard;
use super::send::Sent;
use super::tools::{NOT_RUN, error_result};
use super::{Agent, AgentError, CANCELLED_NOTE, Stop, TurnReport, Ui};
use crate::Notice;
use crate::hook_events::HookEvent;
use crate::prompt::repo_map::Refresh;
use serde_json::json;

impl Agent {
    /// Runs one user turn: send, run the tool calls, send their results, until the model
    /// calls no tool.
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
        mut message: Message,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, AgentError> {
        let submitted = json!({"prompt": message.text_content()});
        let answer = self.hook_event(HookEvent::UserPromptSubmit, submitted, ui, cancel);
        if let Some(reason) = answer.block {
            ui.notice(
                Notice::Warning,
                &format!("the prompt was not sent: a user_prompt_submit hook blocked it: {reason}"),
            );
            return Ok(TurnReport {
                stop: Stop::Finished,
                reply: String::new(),
                changed: Vec::new(),
                usage: Usage::default(),
                start: self.conversation.len(),
            });
        }
        let mut context = std::mem::take(&mut self.pending_context);
        context.extend(answer.context);
        if !context.is_empty() {
            let content = format!("<hook-context>\n{}\n</hook-context>", context.join("\n"));
            message.parts.push(Part::Text { content });
        }
        self.compact_if_needed(&message, ui, cancel).await?;
        let start = self.conversation.len();
        self.conversation.push(message);
        let result = self.run_from(start, ui, cancel).await;
        // A message refused before anything was sent leaves the conversation as it was:
        // kept, it would go with the next message, overflow again and push the older
        // exchanges out (the user still has it in the line editor's history).
        if matches!(result, Err(AgentError::WindowTooSmall(_)))
            && self.conversation.len() == start + 1
        {
            self.conversation.truncate(start);
        }
        result
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
        self.fit_window(ui)?;
        let mut guard = LoopGuard::new();
        // The changed files the hooks' checks have seen, and how many rounds they ran.
        let (mut checked, mut round) = (0, 0);
        // How many times a `stop` hook had the agent go on.
        let mut stop_rounds = 0;
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
            // A server that said its tools changed is asked for them before the model is.
            for line in self.mcp.refresh_tools(&mut self.registry, &mut self.policy) {
                ui.notice(Notice::Info, &line);
            }
            let reply = match self.send(&mut start, ui, cancel).await? {
                Sent::Reply(reply) => *reply,
                Sent::Cancelled(partial) => {
                    let text = format!("{}\n\n{CANCELLED_NOTE}", partial.trim_end());
                    self.conversation
                        .push(Message::assistant(text.trim_start()));
                    report.reply = partial;
                    let notice = "turn cancelled; the partial reply is kept";
                    return Ok(self.cancelled(report, start, ui, notice));
                }
            };
            report.usage += reply.usage;
            self.last_prompt_tokens = match reply.usage.prompt_tokens {
                0 => self.fixed_tokens() + self.conversation_tokens() as u64,
                counted => counted,
            };
            if reply.finish_reason == Some(FinishReason::Length) {
                ui.notice(Notice::Warning, &self.cut_reply_notice());
            }
            report.reply = reply.message.text_content();
            let calls: Vec<ToolCall> = reply.message.tool_calls().cloned().collect();
            self.conversation.push(reply.message);
            if calls.is_empty() {
                if report.changed.len() > checked && super::hooks::has_checks(&self.hooks) {
                    checked = report.changed.len();
                    round += 1;
                    if let Some(failure) = self.check_changes(round, ui, cancel) {
                        self.conversation.push(Message::user(failure));
                        continue;
                    }
                    if cancel.is_cancelled() {
                        let notice = "turn cancelled while the checks ran; the reply is kept";
                        return Ok(self.cancelled(report, start, ui, notice));
                    }
                }
                if let Some(reason) = self.stop_hooks(&report.reply, stop_rounds, ui, cancel) {
                    stop_rounds += 1;
                    self.conversation.push(Message::user(reason));
                    continue;
                }
                report.stop = Stop::Finished;
                return Ok(self.finish(report, start, ui));
            }
            let mut stuck = None;
            let mut next = 0;
            while next < calls.len() {
                let call = &calls[next];
                if stuck.is_some() || cancel.is_cancelled() {
                    self.conversation
                        .push(tool_message(error_result(call, NOT_RUN)));
                    next += 1;
                    continue;
                }
                // Calls of parallel-safe tools, one after another, run at once.
                let batch: Vec<&ToolCall> = (calls[next..].iter())
                    .take_while(|call| self.registry.declaration(&call.name).parallel_safe)
                    .collect();
                if batch.len() > 1 {
                    let mut runnable = Vec::new();
                    let mut stopped_at = None;
                    for (index, call) in batch.iter().enumerate() {
                        let check = guard.observe(call);
                        if let (Some(warning), Some(message)) =
                            (check.user_warning(), check.model_message())
                        {
                            ui.notice(Notice::Warning, &warning);
                            stuck = Some(());
                            stopped_at = Some((index, message));
                            break;
                        }
                        runnable.push(*call);
                    }
                    let results =
                        self.run_calls_at_once(&runnable, ui, &mut report.changed, cancel);
                    for result in results {
                        self.conversation.push(tool_message(result));
                    }
                    next += runnable.len();
                    if let Some((index, message)) = stopped_at {
                        self.conversation
                            .push(tool_message(error_result(batch[index], &message)));
                        next += 1;
                    }
                    continue;
                }
                let check = guard.observe(call);
                let result = match (check.user_warning(), check.model_message()) {
                    (Some(warning), Some(message)) => {
                        ui.notice(Notice::Warning, &warning);
                        stuck = Some(());
                        error_result(call, &message)
                    }
                    // The agent runs a sub-agent itself, once the registry lets the call
                    // through (a disabled tool goes on to be refused like any other).
                    _ if self.registry.declaration(&call.name).runner == Runner::SubAgent
                        && self.registry.callable(&call.name).is_ok() =>
                    {
                        let (result, usage) = self.run_task(call, ui, cancel).await;
                        report.usage += usage;
                        result
                    }
                    _ => self.run_call(call, ui, &mut report.changed, cancel),
                };
                self.conversation.push(tool_message(result));
                next += 1;
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
            // What the user sent into the turn goes after the tool results, before the
            // model is asked again.
            for text in self.steering.take() {
                ui.notice(Notice::Info, "your message was given to the model");
                self.conversation.push(Message::user(text));
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

    /// Runs the `stop` hooks as the turn would end: the message that has the agent go on when
    /// one blocks, at most `hooks.max_rounds` times a turn.
    fn stop_hooks(
        &mut self,
        reply: &str,
        rounds: u32,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Option<String> {
        if self.hooks.stop.is_empty() || cancel.is_cancelled() {
            return None;
        }
        let event = json!({"stop_hook_active": rounds > 0, "last_reply": reply});
        let reason = self.hook_event(HookEvent::Stop, event, ui, cancel).block?;
        if rounds >= self.hooks.max_rounds {
            ui.notice(
                Notice::Warning,
                &format!(
                    "a stop hook asked the agent to go on again; it already did {rounds} times \
                     (hooks.max_rounds), so the turn ends"
                ),
            );
            return None;
        }
        ui.notice(
            Notice::Info,
            &format!(
                "a stop hook has the agent go on: {}",
                crate::inert::inert(&reason)
            ),
        );
        Some(format!(
            "A hook of the user's asks you to go on before stopping: {reason}"
        ))
    }

    /// What the user is told when a reply stopped at the output limit.
    fn cut_reply_notice(&self) -> String {
        let limit = &self.limits.output;
        let sent = self.settings.max_tokens.map_or(limit.tokens, u64::from);
        format!(
            "the reply was cut at the output limit ({} tokens; the model's limit: {} from {}): \
             say \"continue\" to have it go on, or raise llm.max_tokens",
            super::limits::thousands(sent.min(limit.tokens)),
            super::limits::thousands(limit.tokens),
            limit.source
        )
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
        self.last_turn_usage = report.usage;
        ui.usage(&report.usage, &self.session_usage, self.context_fill());
        report.start = start;
        report.changed.sort();
        report.changed.dedup();
        report
    }
}

/// A tool result as the message that carries it.
fn tool_message(result: ToolResult) -> Message {
    Message::new(Role::Tool, vec![Part::ToolResult(result)])
}
