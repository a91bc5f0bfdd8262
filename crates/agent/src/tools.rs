//! Settling and running one tool call: dry run, the confirmation policy, the registry, and
//! the turn's cancellation passed on to the running tool.

use std::path::PathBuf;

use futures::FutureExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use ybs_core::{ToolCall, ToolResult};
use ybs_tools::Effect;
use ybs_tools::tool::CancelFlag;

use super::{Agent, Ui};
use crate::Notice;
use crate::confirm::denied_result;

/// The result of a call the turn ended before.
pub(super) const NOT_RUN: &str = "Not run: the turn was stopped before this call.";

/// A result that tells the model its call failed or did not run.
pub(super) fn error_result(call: &ToolCall, message: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: Some(call.name.clone()),
        content: json!({"success": false, "error": message}).to_string(),
        is_error: true,
    }
}

impl Agent {
    /// Shows `call`, settles it (dry run, policy, the user) and runs it if allowed; files it
    /// changed are added to `changed`. Cancelling `cancel` while the tool runs sets the
    /// tool context's cancel flag, which long-running tools (`run_shell`) obey.
    pub(super) fn run_call(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        changed: &mut Vec<PathBuf>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if let Some(result) = self.settle_call(call, ui, cancel) {
            return result;
        }
        self.record_for_undo(call);
        self.tool_context.cancel.reset();
        let result = {
            let _watch = CancelWatch::start(cancel, &self.tool_context.cancel);
            self.registry.invoke_call(call, &self.tool_context)
        };
        self.conclude_call(call, result, ui, changed, cancel)
    }

    /// [`run_call`](Agent::run_call) for calls whose tools declare them parallel-safe: each
    /// is shown and settled in turn, then those allowed run at once; the results come back
    /// in the calls' order.
    pub(super) fn run_calls_at_once(
        &mut self,
        calls: &[&ToolCall],
        ui: &mut dyn Ui,
        changed: &mut Vec<PathBuf>,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let settled: Vec<Option<ToolResult>> = calls
            .iter()
            .map(|call| self.settle_call(call, ui, cancel))
            .collect();
        self.tool_context.cancel.reset();
        let ran: Vec<Option<ToolResult>> = {
            let _watch = CancelWatch::start(cancel, &self.tool_context.cancel);
            let (registry, context) = (&self.registry, &self.tool_context);
            std::thread::scope(|scope| {
                let running: Vec<_> = (calls.iter().zip(&settled))
                    .map(|(call, settled)| {
                        settled.is_none().then(|| {
                            let call: &ToolCall = call;
                            scope.spawn(move || registry.invoke_call(call, context))
                        })
                    })
                    .collect();
                (running.into_iter().zip(calls))
                    .map(|(handle, call)| {
                        handle.map(|handle| {
                            handle.join().unwrap_or_else(|_| {
                                error_result(call, "The tool stopped unexpectedly.")
                            })
                        })
                    })
                    .collect()
            })
        };
        (calls.iter().zip(settled).zip(ran))
            .map(|((call, settled), ran)| match (settled, ran) {
                (Some(result), _) => result,
                (None, Some(result)) => self.conclude_call(call, result, ui, changed, cancel),
                (None, None) => error_result(call, NOT_RUN),
            })
            .collect()
    }

    /// Shows `call` and decides whether it runs: `None` if it may, else the result the
    /// model gets instead (plan mode, dry run, refused).
    pub(super) fn settle_call(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
    ) -> Option<ToolResult> {
        ui.tool_call(call);
        let declaration = self.registry.declaration(&call.name);
        if self.plan_mode && !declaration.in_plan_mode {
            let offered = self.registry.names_where(|tool| tool.in_plan_mode);
            let result = error_result(call, &super::plan::refusal(&offered));
            ui.tool_result(&call.name, &result);
            return Some(result);
        }
        let Ok(tool) = self.registry.callable(&call.name) else {
            // Unknown or disabled: the registry's refusal, before anyone is asked.
            let result = self.registry.invoke_call(call, &self.tool_context);
            ui.tool_result(&call.name, &result);
            return Some(result);
        };
        if let Some(preview) = crate::preview::preview(call, tool, &self.tool_context) {
            ui.preview(&preview);
        }
        if self.settings.dry_run {
            ui.notice(Notice::Info, "dry run: not executed");
            return Some(error_result(
                call,
                "Dry run: this call was shown to the user, not executed.",
            ));
        }
        if self.network == crate::config::Network::Off
            && super::network::asks(call, declaration.network)
        {
            ui.notice(
                Notice::Warning,
                &format!(
                    "{} asked for the network; refused (safety.network: off)",
                    call.name
                ),
            );
            let result = error_result(call, ybs_tools::builtins::NETWORK_OFF);
            ui.tool_result(&call.name, &result);
            return Some(result);
        }
        if !self.allowed(call, ui) {
            let result = error_result(call, &denied_result(&call.name));
            ui.tool_result(&call.name, &result);
            return Some(result);
        }
        if let Some(reason) = self.before_tool_hooks(call, ui, cancel) {
            let result = error_result(call, &reason);
            ui.tool_result(&call.name, &result);
            return Some(result);
        }
        None
    }

    /// After `call` ran: the files it changed, what the user sees of its result.
    fn conclude_call(
        &mut self,
        call: &ToolCall,
        mut result: ToolResult,
        ui: &mut dyn Ui,
        changed: &mut Vec<PathBuf>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let effect = self.registry.declaration(&call.name).effect;
        if !result.is_error && effect == Effect::FileAtPath {
            let path = call.arguments.get("path").and_then(|path| path.as_str());
            if let Some(Ok(resolved)) = path.map(|path| self.tool_context.resolve(path)) {
                // The language server's new errors go to the model with the result.
                let note = (self.lsp.as_mut()).and_then(|lsp| lsp.after_change(&resolved));
                if let Some(note) = note {
                    result.content.push_str("\n\n");
                    result.content.push_str(&note);
                }
                changed.push(resolved);
            }
        }
        ui.tool_result(&call.name, &result);
        if !result.is_error {
            self.after_tool_hooks(call, ui, cancel);
        }
        if effect == Effect::TaskList && !result.is_error {
            ui.todos(&self.tool_context.session.todos());
        }
        result
    }

    /// Keeps the pre-image of the file `call` is about to change, or notes a shell command.
    fn record_for_undo(&mut self, call: &ToolCall) {
        let effect = self.registry.declaration(&call.name).effect;
        if effect == Effect::Commands {
            self.journal.ran_shell();
        } else if effect == Effect::FileAtPath {
            let path = call.arguments.get("path").and_then(|path| path.as_str());
            if let Some(Ok(resolved)) = path.map(|path| self.tool_context.resolve(path)) {
                self.journal.before_write(&resolved);
                if let Some(lsp) = self.lsp.as_mut() {
                    lsp.before_change(&resolved);
                }
            }
        }
    }
}

/// Sets a tool's [`CancelFlag`] when the turn's token is cancelled, for as long as it lives.
///
/// The tool blocks the thread that runs the turn, so the token is watched from a thread of
/// its own: unlike a task on the async runtime, it runs whatever the runtime's flavour and
/// however busy its workers are.
pub(super) struct CancelWatch {
    stop: Option<futures::channel::oneshot::Sender<()>>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl CancelWatch {
    pub(super) fn start(token: &CancellationToken, flag: &CancelFlag) -> Self {
        let (stop, stopped) = futures::channel::oneshot::channel::<()>();
        let (token, flag) = (token.clone(), flag.clone());
        let watcher = std::thread::Builder::new()
            .name("ybs-cancel-watch".into())
            .spawn(move || {
                futures::executor::block_on(async move {
                    futures::select! {
                        () = token.cancelled().fuse() => flag.cancel(),
                        _ = stopped.fuse() => {}
                    }
                });
            });
        match watcher {
            Ok(watcher) => CancelWatch {
                stop: Some(stop),
                watcher: Some(watcher),
            },
            // No thread: the tool runs to its end, and the turn still stops after it.
            Err(_) => CancelWatch {
                stop: None,
                watcher: None,
            },
        }
    }
}

impl Drop for CancelWatch {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}
