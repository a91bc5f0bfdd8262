//! Fitting the fixed part of every request (the system prompt and the tools) into the
//! model's window: what can shrink shrinks, the repository map first, and each step is said
//! once; when even the smallest prompt leaves no room for a reply, the turn stops before
//! anything is sent, with an error naming the window. Also the reply's room in each request.

use serde_json::Value;
use ybs_context_budget::{TokenCounter, conversation_tokens};
use ybs_core::{Message, ToolSpec};

use super::limits::thousands;
use super::shrink::Shrink;
use super::{Agent, AgentError, Ui};
use crate::Notice;

/// ybs's instructions when the full ones do not fit the window.
pub const SHORT_BASE: &str = "You are ybs, a coding agent working in the user's project. \
Use the tools to look at files and run commands; read a file before you edit it. Commands \
run in a sandbox. Keep replies short, and when the task is done say what you did.";

/// Requests are kept below this share of the window: token counts are estimates.
const SAFETY: f64 = 0.9;

/// The fewest tokens a reply may be given.
pub(super) const MIN_REPLY: u64 = 128;

impl Agent {
    /// The tools as the model is offered them: all enabled ones, read-only ones only in plan
    /// mode, with short descriptions when the window needs it.
    pub fn offered_specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.registry.specs();
        // The jobs' tools join once there is a job (the tool list changes once then).
        if self.tool_context.jobs.list().is_empty() {
            specs.retain(|spec| !self.registry.declaration(&spec.name).needs_jobs);
        }
        if self.plan_mode {
            specs.retain(|spec| self.registry.declaration(&spec.name).in_plan_mode);
        }
        if self.shrunk.contains(&Shrink::ShortToolDescriptions) {
            specs = specs.into_iter().map(short_spec).collect();
        }
        specs
    }

    /// Tokens of what every request carries besides the conversation: the system prompt
    /// and the tools.
    pub fn fixed_tokens(&self) -> u64 {
        let system = self.settings.system.as_deref().unwrap_or_default();
        let tools = serde_json::to_string(&self.offered_specs()).unwrap_or_default();
        (self.counter.count(system) + self.counter.count(&tools)) as u64
    }

    /// The room a request must leave for the conversation and a reply: a quarter of the
    /// window, at most 4,096 tokens.
    fn room_needed(&self) -> u64 {
        (self.limits.window.tokens / 4).clamp(MIN_REPLY, 4_096)
    }

    fn usable_window(&self) -> u64 {
        (self.limits.window.tokens as f64 * SAFETY) as u64
    }

    /// Before a turn: shrinks the fixed prompt until it leaves [`room_needed`] in the
    /// window, saying in one warning what was left out; an error (and no warning) when
    /// nothing more can shrink.
    pub(super) fn fit_window(&mut self, ui: &mut dyn Ui) -> Result<(), AgentError> {
        let budget = self.usable_window().saturating_sub(self.room_needed());
        let before = self.fixed_tokens();
        let mut fixed = before;
        let mut said = Vec::new();
        for step in Shrink::ORDER {
            if fixed <= budget {
                break;
            }
            if self.shrunk.contains(&step) || !self.shrink(step) {
                continue;
            }
            self.shrunk.push(step);
            said.push(step.said());
            fixed = self.fixed_tokens();
        }
        if fixed > budget {
            return Err(AgentError::WindowTooSmall(format!(
                "the model's context window of {} tokens ({}) is too small: ybs's smallest \
                 prompt with its tools takes about {} tokens and a reply needs {} more. Start \
                 the server with a larger window (llama-server -c 8192, Ollama num_ctx), \
                 choose a model with a larger one, disable tools in tools.builtin, or set \
                 context.max_tokens if the window really is larger; nothing was sent",
                thousands(self.limits.window.tokens),
                self.limits.window.source,
                thousands(fixed),
                thousands(self.room_needed())
            )));
        }
        if !said.is_empty() {
            ui.notice(
                Notice::Warning,
                &format!(
                    "{}: the model's context window is {} tokens ({}), and ybs's prompt and \
                     tools took about {} of them, too many to leave room for the \
                     conversation and a reply",
                    joined(&said),
                    thousands(self.limits.window.tokens),
                    self.limits.window.source,
                    thousands(before)
                ),
            );
        }
        // The conversation's budget, on which compaction is decided, has the same margin
        // for estimates as the prompt: with the whole window, counts a little short let a
        // turn overflow before compaction and the trim loop dropped exchanges instead.
        let conversation = self.usable_window().saturating_sub(fixed);
        self.settings.compaction.max_tokens = usize::try_from(conversation).unwrap_or(usize::MAX);
        Ok(())
    }

    /// Applies one step; false when there was nothing to leave out.
    fn shrink(&mut self, step: Shrink) -> bool {
        match step {
            Shrink::RepoMap => {
                let had = self.repo_map.take().is_some()
                    || self.prompt.as_ref().is_some_and(|p| p.repo_map.is_some());
                self.set_repo_map(None);
                had
            }
            Shrink::Instructions => {
                let Some(mut prompt) = self.prompt.clone() else {
                    return false;
                };
                if prompt.instructions.text.is_empty() {
                    return false;
                }
                prompt.instructions.text.clear();
                self.set_prompt(prompt);
                true
            }
            Shrink::ShortInstructions => {
                let Some(mut prompt) = self.prompt.clone() else {
                    return false;
                };
                if prompt.base.is_none() {
                    return false;
                }
                prompt.base = Some(SHORT_BASE.to_owned());
                self.set_prompt(prompt);
                true
            }
            Shrink::ShortToolDescriptions => !self.registry.specs().is_empty(),
        }
    }

    /// The most tokens the reply to `messages` may have: the output limit, or what is left
    /// of the window when that is less (never under a small minimum: the model then says
    /// it overflowed, and the trim loop takes over).
    pub(super) fn reply_room(&self, messages: &[Message]) -> u32 {
        let prompt = self.fixed_tokens() + conversation_tokens(&self.counter, messages) as u64;
        let left = self.usable_window().saturating_sub(prompt).max(MIN_REPLY);
        u32::try_from(left.min(self.limits.output.tokens)).unwrap_or(u32::MAX)
    }
}

/// `spec` with its description cut to the first sentence and no parameter descriptions.
fn short_spec(mut spec: ToolSpec) -> ToolSpec {
    let first = spec.description.lines().next().unwrap_or_default();
    let sentence = first
        .split_inclusive(". ")
        .next()
        .unwrap_or(first)
        .trim_end();
    spec.description = sentence.to_owned();
    strip_descriptions(&mut spec.parameters);
    spec
}

/// Removes `description` from a JSON Schema and the schemas of its properties and items.
fn strip_descriptions(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("description");
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(strip_descriptions);
    }
    if let Some(items) = map.get_mut("items") {
        strip_descriptions(items);
    }
}

/// `a`, `a and b`, `a, b and c`.
fn joined(parts: &[&str]) -> String {
    match parts {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_left_out_is_said_in_one_sentence() {
        assert_eq!(joined(&["a"]), "a");
        assert_eq!(joined(&["a", "b"]), "a and b");
        assert_eq!(joined(&["a", "b", "c"]), "a, b and c");
    }

    #[test]
    fn short_specs_keep_names_and_types() {
        let spec = ToolSpec::new(
            "run_shell",
            "Execute a shell command. REQUIRES CONFIRMATION.\nMore.",
            serde_json::json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The command"}},
                "required": ["command"]}),
        );
        let short = short_spec(spec);
        assert_eq!(short.description, "Execute a shell command.");
        assert_eq!(
            short.parameters,
            serde_json::json!({"type": "object", "properties": {
                "command": {"type": "string"}}, "required": ["command"]})
        );
    }
}
