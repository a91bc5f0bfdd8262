//! Settling and running one tool call: dry run, the confirmation policy, the registry.

use std::path::PathBuf;

use serde_json::json;
use ybs_core::{ToolCall, ToolResult};
use ybs_tools::{Confirmation, Decision};

use super::{Agent, Ui};
use crate::confirm::{Answer, Settle, denied_result};
use crate::render::Notice;

/// The tools whose successful call changes the file named by their `path` argument.
const FILE_WRITERS: [&str; 3] = ["write_file", "edit_file", "delete_file"];

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
    /// changed are added to `changed`.
    pub(super) fn run_call(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        changed: &mut Vec<PathBuf>,
    ) -> ToolResult {
        ui.tool_call(call);
        if self.settings.dry_run {
            ui.notice(Notice::Info, "dry run: not executed");
            return error_result(
                call,
                "Dry run: this call was shown to the user, not executed.",
            );
        }
        if !self.allowed(call, ui) {
            let result = error_result(call, &denied_result(&call.name));
            ui.tool_result(&call.name, &result);
            return result;
        }
        let result = self.registry.invoke_call(call, &self.tool_context);
        if !result.is_error && FILE_WRITERS.contains(&call.name.as_str()) {
            let path = call.arguments.get("path").and_then(|path| path.as_str());
            if let Some(Ok(resolved)) = path.map(|path| self.tool_context.resolve(path)) {
                changed.push(resolved);
            }
        }
        ui.tool_result(&call.name, &result);
        result
    }

    fn allowed(&mut self, call: &ToolCall, ui: &mut dyn Ui) -> bool {
        let reason = match self
            .policy
            .check(&call.name, &call.arguments, &self.tool_context)
        {
            Confirmation::NotNeeded => return true,
            Confirmation::Required { reason } => reason,
        };
        match self.settings.confirm.settle(&call.name, true) {
            Settle::Run => true,
            Settle::Deny(message) => {
                ui.notice(Notice::Warning, &message);
                false
            }
            Settle::Ask => {
                let decision = match ui.confirm(call, &reason) {
                    Answer::Yes => Decision::Allow,
                    Answer::Always => Decision::AllowForSession,
                    Answer::No => Decision::Deny,
                };
                self.policy.record(&call.name, decision)
            }
        }
    }
}
