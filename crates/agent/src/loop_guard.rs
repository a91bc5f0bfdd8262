//! Loop detection: the same tool call with the same arguments several times in a row means
//! the agent is stuck.

use serde_json::Value;
use ybs_core::ToolCall;

/// How many identical calls in a row stop the loop: three.
pub const REPEAT_LIMIT: usize = 3;

/// The verdict on one more call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopCheck {
    /// Carry on.
    Continue,
    /// The call repeats the previous ones `times` times in a row: stop the turn.
    Stuck {
        /// The tool.
        tool: String,
        /// How many identical calls in a row.
        times: usize,
    },
}

impl LoopCheck {
    /// The warning shown to the user when stuck.
    pub fn user_warning(&self) -> Option<String> {
        match self {
            LoopCheck::Continue => None,
            LoopCheck::Stuck { tool, times } => Some(format!(
                "the agent called {tool} with the same arguments {times} times in a row; \
                 stopping this turn"
            )),
        }
    }

    /// The message appended for the model when stuck.
    pub fn model_message(&self) -> Option<String> {
        match self {
            LoopCheck::Continue => None,
            LoopCheck::Stuck { tool, times } => Some(format!(
                "Stopped: you called {tool} with the same arguments {times} times in a row and \
                 got the same result. Do something different or ask the user for help."
            )),
        }
    }
}

/// Watches the calls of one user turn.
#[derive(Debug, Clone, Default)]
pub struct LoopGuard {
    last: Option<(String, Value)>,
    repeats: usize,
}

impl LoopGuard {
    /// A guard that has seen nothing.
    pub fn new() -> Self {
        LoopGuard::default()
    }

    /// Records `call` and says whether the agent is stuck.
    pub fn observe(&mut self, call: &ToolCall) -> LoopCheck {
        let same = self
            .last
            .as_ref()
            .is_some_and(|(name, arguments)| *name == call.name && *arguments == call.arguments);
        if same {
            self.repeats += 1;
        } else {
            self.last = Some((call.name.clone(), call.arguments.clone()));
            self.repeats = 1;
        }
        if self.repeats >= REPEAT_LIMIT {
            LoopCheck::Stuck {
                tool: call.name.clone(),
                times: self.repeats,
            }
        } else {
            LoopCheck::Continue
        }
    }

    /// Forgets everything (a new user turn).
    pub fn reset(&mut self) {
        *self = LoopGuard::default();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall::new("id", name, arguments)
    }

    #[test]
    fn three_identical_calls_in_a_row_are_stuck() {
        let mut guard = LoopGuard::new();
        let read = call("read_file", json!({"path": "a", "limit": 5}));
        assert_eq!(guard.observe(&read), LoopCheck::Continue);
        assert_eq!(guard.observe(&read), LoopCheck::Continue);
        // Key order does not make a call different.
        let same = call("read_file", json!({"limit": 5, "path": "a"}));
        let stuck = guard.observe(&same);
        assert_eq!(
            stuck,
            LoopCheck::Stuck {
                tool: "read_file".into(),
                times: 3
            }
        );
        assert_eq!(
            stuck.user_warning().as_deref(),
            Some(
                "the agent called read_file with the same arguments 3 times in a row; stopping this turn"
            )
        );
        assert!(
            stuck
                .model_message()
                .is_some_and(|text| text.starts_with("Stopped: you called read_file"))
        );
    }

    #[test]
    fn a_different_call_in_between_resets_the_count() {
        let mut guard = LoopGuard::new();
        let a = call("read_file", json!({"path": "a"}));
        let b = call("read_file", json!({"path": "b"}));
        for next in [&a, &a, &b, &a, &a] {
            assert_eq!(guard.observe(next), LoopCheck::Continue);
        }
        guard.reset();
        assert_eq!(guard.observe(&a), LoopCheck::Continue);
        assert_eq!(LoopCheck::Continue.user_warning(), None);
    }
}
