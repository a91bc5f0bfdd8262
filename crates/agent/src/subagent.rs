//! The `task` tool: a sub-agent with a fresh conversation, the read-only tools and a prompt
//! the model wrote, whose final report is the call's result. With `agent`, one of the
//! user's custom sub-agents ([`crate::extensions::agents`]): its own system prompt, model and
//! tools, the tools only ever a part of the general sub-agent's. Its requests count in the
//! session's usage; it cannot start another (depth one: its tools have no `task`); Ctrl-C
//! cancels it with the turn. Its tool calls and confirmations show as the agent's do; its
//! streamed text does not (the report goes to the model, which tells the user).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use super::confirm::Answer;
use super::tools::error_result;
use super::{Agent, AgentError, Stop, TurnReport, Ui};
use crate::Notice;

/// The system prompt of a sub-agent that has the tools `offered`.
pub fn subagent_prompt(offered: &[String]) -> String {
    format!(
        "You are a sub-agent of ybs, a coding assistant. Another agent gave you the task \
         below; you cannot ask it or the user anything. You have read-only tools ({}): \
         investigate the project as the task needs, then reply with a concise, complete report \
         of what you found (file paths and line numbers where they help). Your final reply is \
         all the other agent receives.",
        offered.join(", ")
    )
}

impl Agent {
    /// Runs a `task` call: settles it like any call, then runs the sub-agent to its report.
    /// Returns the result and the usage of the sub-agent's requests.
    pub(super) async fn run_task(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> (ToolResult, Usage) {
        if let Some(result) = self.settle_call(call, ui, cancel) {
            return (result, Usage::default());
        }
        let prompt = call.arguments.get("prompt").and_then(|p| p.as_str());
        let Some(prompt) = prompt.filter(|prompt| !prompt.trim().is_empty()) else {
            let result = error_result(call, "`task` needs a `prompt`: the whole task to do.");
            ui.tool_result(&call.name, &result);
            return (result, Usage::default());
        };
        let title = (call.arguments.get("description"))
            .and_then(|d| d.as_str())
            .unwrap_or("task");
        let named = call.arguments.get("agent").and_then(|a| a.as_str());
        let custom = match named.filter(|name| !name.is_empty()) {
            None => None,
            Some(name) => match self.agents.iter().find(|agent| agent.name == name) {
                Some(agent) => Some(agent.clone()),
                None => {
                    let known: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
                    let result = error_result(
                        call,
                        &format!(
                            "no sub-agent `{name}`; the sub-agents are: {}",
                            if known.is_empty() {
                                "none (leave `agent` out)".to_owned()
                            } else {
                                known.join(", ")
                            }
                        ),
                    );
                    ui.tool_result(&call.name, &result);
                    return (result, Usage::default());
                }
            },
        };
        let title = match &custom {
            Some(agent) => format!("{} ({title})", agent.name),
            None => title.to_owned(),
        };
        let title = title.as_str();
        ui.notice(
            Notice::Info,
            &format!("sub-agent started: {}", crate::inert::inert(title)),
        );
        let mut sub = self.subagent();
        if let Some(agent) = &custom {
            self.specialize(&mut sub, agent, ui);
        }
        let outcome = {
            let mut sub_ui = SubUi { parent: ui };
            let run: Pin<Box<dyn Future<Output = Result<TurnReport, AgentError>> + '_>> =
                Box::pin(sub.turn(prompt, &mut sub_ui, cancel));
            run.await
        };
        let (result, usage) = match outcome {
            Ok(report) if report.stop == Stop::Cancelled => (
                error_result(call, "The sub-agent was cancelled by the user."),
                report.usage,
            ),
            Ok(report) => {
                let mut content = json!({"success": true, "report": report.reply});
                if report.stop != Stop::Finished {
                    content["note"] = json!(
                        "The sub-agent stopped before it finished (request limit or a loop); \
                         its report may be incomplete."
                    );
                }
                let result = ToolResult {
                    call_id: call.id.clone(),
                    name: Some(call.name.clone()),
                    content: content.to_string(),
                    is_error: false,
                };
                (result, report.usage)
            }
            Err(error) => (
                error_result(call, &format!("The sub-agent failed: {error}")),
                Usage::default(),
            ),
        };
        ui.notice(
            Notice::Info,
            &format!(
                "sub-agent finished: {} ({} tokens)",
                crate::inert::inert(title),
                usage.prompt_tokens + usage.completion_tokens
            ),
        );
        let report = if result.is_error {
            ""
        } else {
            result.content.as_str()
        };
        let finished = json!({
            "agent": custom.as_ref().map(|agent| agent.name.clone()),
            "description": title,
            "report": report,
        });
        let _ = self.hook_event(
            crate::hook_events::HookEvent::SubagentStop,
            finished,
            ui,
            cancel,
        );
        ui.tool_result(&call.name, &result);
        (result, usage)
    }

    /// Makes the general sub-agent `sub` the custom one `agent`: its prompt, its model, its
    /// tools narrowed to those it names, its approval made stricter if it asks.
    fn specialize(&self, sub: &mut Agent, agent: &crate::extensions::AgentFile, ui: &mut dyn Ui) {
        if let Some(tools) = &agent.tools {
            let left_out: Vec<String> = (sub.registry.names().into_iter())
                .filter(|name| !tools.contains(name))
                .collect();
            for name in left_out {
                sub.registry.set_enabled(&name, false);
            }
        }
        let mut missing: Vec<String> = agent.unknown_tools.clone();
        missing.extend(
            (agent.tools.iter().flatten())
                .filter(|name| !sub.registry.is_enabled(name))
                .cloned(),
        );
        if !missing.is_empty() {
            ui.notice(
                Notice::Info,
                &format!(
                    "sub-agent {} runs without {} (sub-agents only look)",
                    crate::inert::inert(&agent.name),
                    crate::inert::inert(&missing.join(", "))
                ),
            );
        }
        let offered = sub.registry.names();
        sub.settings.system = Some(format!(
            "{}\n\n{}",
            agent.prompt.trim(),
            subagent_prompt(&offered)
        ));
        if let Some(model) = &agent.model {
            sub.settings.model = model.clone();
        }
        sub.approval = crate::extensions::agents::stricter(self.approval, agent.approval);
    }

    /// A sub-agent of this agent: the same model and sandbox, a fresh conversation, the
    /// tools of this agent that declare themselves fit for sub-agents, and everything that
    /// decides whether a call runs as this agent has it: confirmations, the session's
    /// answers, permission rules, approval mode, network setting and hooks.
    fn subagent(&self) -> Agent {
        let registry = self.registry.narrowed(|tool| tool.in_subagent);
        let mut settings = self.settings.clone();
        settings.system = Some(subagent_prompt(&registry.names()));
        settings.extras = Default::default();
        settings.response_format = None;
        settings.dry_run = false;
        Agent::from_parts(crate::Parts {
            settings,
            provider: Arc::clone(&self.provider),
            registry,
            tool_context: self.tool_context.clone(),
            policy: self.policy.clone(),
            limits: self.limits.clone(),
            hooks: crate::config::HooksConfig {
                // The user's prompt, session and stop events are the parent's, not its
                // sub-agent's (whose end is `subagent_stop`).
                session_start: Vec::new(),
                session_end: Vec::new(),
                user_prompt_submit: Vec::new(),
                stop: Vec::new(),
                ..self.hooks.clone()
            },
            repo_map: None,
            prompt: None,
            journal: crate::session::undo::Journal::default(),
            permissions: self.permissions.clone(),
            approval: self.approval,
            network: self.network,
            rule_files: self.rule_files.clone(),
            // Its registry has no server's tools: a changed list is the parent's to read.
            mcp: Default::default(),
        })
    }
}

/// The parent's [`Ui`] for a sub-agent: its tool calls, results, notices and questions go
/// through; its streamed reply and usage lines do not.
struct SubUi<'a> {
    parent: &'a mut dyn Ui,
}

impl Ui for SubUi<'_> {
    fn waiting(&mut self) {
        self.parent.waiting();
    }
    fn stream_event(&mut self, _event: &StreamEvent) {}
    fn reply_done(&mut self) {}
    fn tool_call(&mut self, call: &ToolCall) {
        self.parent.tool_call(call);
    }
    fn preview(&mut self, preview: &crate::preview::Preview) {
        self.parent.preview(preview);
    }
    fn tool_result(&mut self, tool: &str, result: &ToolResult) {
        self.parent.tool_result(tool, result);
    }
    fn notice(&mut self, kind: Notice, message: &str) {
        self.parent.notice(kind, message);
    }
    fn usage(&mut self, _turn: &Usage, _session: &Usage, _fill: Option<(u64, u64)>) {}
    fn confirm(&mut self, call: &ToolCall, reason: &str) -> Answer {
        self.parent.confirm(call, reason)
    }
    fn choose_rule(
        &mut self,
        offers: &[crate::permissions::Offer],
    ) -> Option<(usize, crate::permissions::Layer)> {
        self.parent.choose_rule(offers)
    }
}
