//! Compaction planning for the ybs agent (`context.max_tokens`, `context.compaction_threshold`
//! of the ybs spec): when a conversation nears its budget, older messages are replaced by a
//! summary the model writes.
//!
//! The plan keeps every system message, keeps the newest messages that fit in half the budget
//! (never fewer than the last [`CompactionSettings::min_keep_messages`], never separating a
//! tool call from its result), and builds the request that asks the model to summarize the
//! rest. That request is itself budgeted: it must leave
//! [`CompactionSettings::summary_reserve_tokens`] for the answer within `max_tokens`, so when
//! the messages to summarize are too long, the oldest are left out of the request (and a single
//! overlong message is cut) rather than sending a request that would overflow.

mod error;
mod request;
mod settings;

use std::collections::HashMap;

use ybs_core::{Message, Part, Role};

use crate::counter::TokenCounter;
use crate::message::count_message;
use request::build_request;

pub use error::CompactionError;
pub use request::{SUMMARY_INSTRUCTIONS, TRUNCATION_MARKER};
pub use settings::CompactionSettings;

/// What starts the message that replaces the summarized messages.
pub const SUMMARY_PREFIX: &str = "[Previous conversation summary]";

/// A planned compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    /// Indices of the system messages, all kept.
    pub system: Vec<usize>,
    /// Indices of the non-system messages the summary replaces, oldest first.
    pub summarized: Vec<usize>,
    /// Indices of the non-system messages kept verbatim, oldest first.
    pub kept: Vec<usize>,
    /// How many of the summarized messages (the oldest) did not fit in the request and are
    /// dropped without being summarized.
    pub omitted: usize,
    /// Whether the newest message in the request was cut short to fit.
    pub truncated: bool,
    /// The request to send to the model: the instructions and the transcript to summarize.
    pub request: Vec<Message>,
    /// The tokens of [`request`](CompactionPlan::request), reply priming included; at most
    /// `max_tokens - summary_reserve_tokens`.
    pub request_tokens: usize,
}

impl CompactionPlan {
    /// The message that replaces the summarized ones: a user message
    /// `[Previous conversation summary] <summary>`. A user message rather than a system one,
    /// because several providers accept system text only at the start of a conversation.
    pub fn replacement(summary: &str) -> Message {
        Message::user(format!("{SUMMARY_PREFIX} {}", summary.trim()))
    }

    /// The compacted conversation: the system messages before the first kept message, the
    /// summary, then everything from the first kept message on (system messages in place).
    pub fn apply(&self, messages: &[Message], summary: &str) -> Vec<Message> {
        let first_kept = self.kept.first().copied().unwrap_or(messages.len());
        let mut compacted: Vec<Message> = self
            .system
            .iter()
            .filter(|&&index| index < first_kept)
            .filter_map(|&index| messages.get(index).cloned())
            .collect();
        compacted.push(CompactionPlan::replacement(summary));
        compacted.extend(messages.iter().skip(first_kept).cloned());
        compacted
    }
}

/// The tokens of a conversation as the compaction threshold sees them.
pub fn conversation_tokens(counter: &dyn TokenCounter, messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|message| count_message(counter, message))
        .sum()
}

/// Plans a compaction of `messages` (see the module docs). It does not check the threshold;
/// call [`CompactionSettings::needs_compaction`] first.
pub fn plan_compaction(
    messages: &[Message],
    counter: &dyn TokenCounter,
    settings: &CompactionSettings,
) -> Result<CompactionPlan, CompactionError> {
    let (system, others): (Vec<usize>, Vec<usize>) =
        (0..messages.len()).partition(|&index| messages[index].role == Role::System);
    let tokens: Vec<usize> = others
        .iter()
        .map(|&index| count_message(counter, &messages[index]))
        .collect();

    let cut = keep_cut(messages, &others, &tokens, settings);
    if cut == 0 {
        return Err(CompactionError::NothingToSummarize {
            messages: others.len(),
            min_keep: settings.min_keep_messages,
        });
    }
    let summarized = others[..cut].to_vec();
    let kept = others[cut..].to_vec();
    let request = build_request(messages, &summarized, counter, settings)?;
    Ok(CompactionPlan {
        system,
        summarized,
        kept,
        omitted: request.omitted,
        truncated: request.truncated,
        request: request.messages,
        request_tokens: request.tokens,
    })
}

/// The position in `others` from which messages are kept.
fn keep_cut(
    messages: &[Message],
    others: &[usize],
    tokens: &[usize],
    settings: &CompactionSettings,
) -> usize {
    let half = settings.max_tokens / 2;
    let mut cut = others.len();
    let mut kept_tokens = 0usize;
    while cut > 0 && kept_tokens.saturating_add(tokens[cut - 1]) <= half {
        kept_tokens += tokens[cut - 1];
        cut -= 1;
    }
    cut = cut.min(others.len().saturating_sub(settings.min_keep_messages));
    let splits = split_points(messages, others);
    while cut > 0 && splits[cut] {
        cut -= 1;
    }
    cut
}

/// `splits[c]` is true when keeping `others[c..]` would separate a tool result from its call
/// (or start the kept messages with a tool message).
fn split_points(messages: &[Message], others: &[usize]) -> Vec<bool> {
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    // depth[c] counts open call-result spans that a cut at c would break.
    let mut delta = vec![0i64; others.len() + 2];
    for (position, &index) in others.iter().enumerate() {
        let message = &messages[index];
        if message.role == Role::Tool {
            delta[position] += 1;
            delta[position + 1] -= 1;
        }
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => {
                    call_at.insert(call.id.as_str(), position);
                }
                Part::ToolResult(result) => {
                    if let Some(&call) = call_at.get(result.call_id.as_str())
                        && call < position
                    {
                        delta[call + 1] += 1;
                        delta[position + 1] -= 1;
                    }
                }
                _ => {}
            }
        }
    }
    let mut depth = 0i64;
    (0..=others.len())
        .map(|cut| {
            depth += delta[cut];
            depth > 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::request::TRANSCRIPT_HEADER;
    use super::*;
    use crate::counter::CharsPerToken;
    use ybs_core::{ToolCall, ToolResult};

    /// One token per byte.
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count(&self, text: &str) -> usize {
            text.len()
        }
    }

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![Part::ToolCall(ToolCall::new(
                id,
                "read_file",
                serde_json::json!({"path": "a.rs"}),
            ))],
        )
    }

    fn result(id: &str, content: &str) -> Message {
        Message::new(
            Role::Tool,
            vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                name: None,
                content: content.into(),
                is_error: false,
            })],
        )
    }

    fn conversation(turns: usize, size: usize) -> Vec<Message> {
        let mut messages = vec![Message::system("You are ybs.")];
        for turn in 0..turns {
            messages.push(Message::user(format!(
                "question {turn} {}",
                "q".repeat(size)
            )));
            messages.push(Message::assistant(format!(
                "answer {turn} {}",
                "a".repeat(size)
            )));
        }
        messages
    }

    #[test]
    fn threshold() {
        let settings = CompactionSettings::default();
        assert_eq!(settings.trigger_tokens(), 30_400);
        assert!(!settings.needs_compaction(30_399));
        assert!(settings.needs_compaction(30_400));
    }

    #[test]
    fn keeps_system_and_newest_half_and_summarizes_the_rest() {
        let messages = conversation(20, 300);
        let settings = CompactionSettings {
            max_tokens: 4000,
            ..CompactionSettings::default()
        };
        let counter = CharsPerToken::default();
        let plan = plan_compaction(&messages, &counter, &settings).unwrap();
        assert_eq!(plan.system, vec![0]);
        let kept_tokens: usize = plan
            .kept
            .iter()
            .map(|&i| count_message(&counter, &messages[i]))
            .sum();
        assert!(kept_tokens <= 2000, "{kept_tokens}");
        // One more message would not have fitted in half the budget.
        let next = plan.summarized.last().copied().unwrap();
        assert!(kept_tokens + count_message(&counter, &messages[next]) > 2000);
        assert_eq!(plan.summarized.len() + plan.kept.len(), 40);
        assert_eq!(plan.summarized[0], 1);
        assert_eq!(plan.omitted, 0);
        assert!(plan.request_tokens <= 4000 - 1024);
        assert_eq!(plan.request[0].role, Role::System);
        assert_eq!(plan.request[0].text_content(), SUMMARY_INSTRUCTIONS);
        let transcript = plan.request[1].text_content();
        assert!(
            transcript.starts_with("Summarize this conversation transcript:\n\nuser:\nquestion 0")
        );

        let compacted = plan.apply(&messages, "We talked about questions.");
        assert_eq!(compacted[0], messages[0]);
        assert_eq!(
            compacted[1].text_content(),
            "[Previous conversation summary] We talked about questions."
        );
        assert_eq!(compacted[1].role, Role::User);
        assert_eq!(compacted.len(), 2 + plan.kept.len());
        assert_eq!(compacted.last(), messages.last());
    }

    #[test]
    fn never_keeps_fewer_than_five() {
        // Each message alone is larger than half the budget.
        let messages = conversation(6, 3000);
        let settings = CompactionSettings {
            max_tokens: 4000,
            summary_reserve_tokens: 100,
            ..CompactionSettings::default()
        };
        let plan = plan_compaction(&messages, &CharsPerToken::default(), &settings).unwrap();
        assert_eq!(plan.kept.len(), 5);
        assert_eq!(plan.summarized.len(), 7);
    }

    #[test]
    fn never_splits_a_tool_call_from_its_result() {
        let mut messages = vec![Message::system("s"), Message::user("start")];
        for i in 0..6 {
            messages.push(call(&format!("c{i}")));
            messages.push(result(&format!("c{i}"), &"r".repeat(100)));
        }
        messages.push(Message::assistant("done"));
        // Calls cost 20 tokens, results 33. Half of 400 holds, from the newest: done, r5, c5,
        // r4, c4, r3, c3, r2 (198); the cut would fall between c2 and r2, so it moves back to
        // keep c2 too.
        let settings = CompactionSettings {
            max_tokens: 400,
            summary_reserve_tokens: 10,
            ..CompactionSettings::default()
        };
        let plan = plan_compaction(&messages, &CharsPerToken::default(), &settings).unwrap();
        let first_kept = &messages[plan.kept[0]];
        assert_eq!(first_kept.role, Role::Assistant);
        assert_eq!(
            first_kept.tool_calls().next().map(|c| c.id.as_str()),
            Some("c2")
        );
        assert_eq!(plan.kept.len(), 9);
    }

    #[test]
    fn tool_results_inside_user_messages_are_tracked_too() {
        // Anthropic style: results ride in the next user message.
        let mut results = Message::new(Role::User, vec![]);
        results.parts.push(Part::ToolResult(ToolResult {
            call_id: "x".into(),
            name: None,
            content: "r".repeat(300),
            is_error: false,
        }));
        let long = |role: Role, tag: &str| Message::text(role, format!("{tag}{}", "t".repeat(299)));
        let messages = vec![
            long(Role::User, "a"),
            long(Role::Assistant, "b"),
            call("x"),
            results,
            long(Role::Assistant, "c"),
            long(Role::User, "d"),
            long(Role::Assistant, "e"),
        ];
        let splits = split_points(&messages, &(0..messages.len()).collect::<Vec<_>>());
        assert_eq!(
            splits,
            vec![false, false, false, true, false, false, false, false]
        );
        // Half of 2000 holds the newest three, but four are kept at least; the cut at 3 would
        // separate the call from the result message, so it moves back to 2.
        let settings = CompactionSettings {
            max_tokens: 2000,
            min_keep_messages: 4,
            summary_reserve_tokens: 0,
            ..CompactionSettings::default()
        };
        let plan = plan_compaction(&messages, &Bytes, &settings);
        assert_eq!(plan.map(|p| p.kept), Ok(vec![2, 3, 4, 5, 6]));
    }

    #[test]
    fn nothing_to_summarize() {
        let messages = conversation(2, 10);
        let error = plan_compaction(
            &messages,
            &CharsPerToken::default(),
            &CompactionSettings::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "nothing to compact: all 4 messages must be kept (the newest 5 are always kept and a \
             tool call stays with its result); raise context.max_tokens or start a new session"
        );
    }

    #[test]
    fn a_request_that_would_overflow_is_planned_smaller() {
        let messages = conversation(30, 400);
        let settings = CompactionSettings {
            max_tokens: 3000,
            summary_reserve_tokens: 500,
            min_keep_messages: 2,
            ..CompactionSettings::default()
        };
        let plan = plan_compaction(&messages, &Bytes, &settings).unwrap();
        assert!(plan.omitted > 0);
        assert!(!plan.truncated);
        assert!(plan.request_tokens <= 2500, "{}", plan.request_tokens);
        let transcript = plan.request[1].text_content();
        assert!(transcript.contains(&format!(
            "({} earlier messages did not fit and are left out.)",
            plan.omitted
        )));
        // The newest summarized message is in the request.
        let newest = plan.summarized.last().copied().unwrap();
        assert!(transcript.ends_with(&messages[newest].text_content()));
        // The request's real count matches the plan.
        let real = Bytes.count(SUMMARY_INSTRUCTIONS) + Bytes.count(&transcript) + 2 * 4 + 3;
        assert_eq!(real, plan.request_tokens);
    }

    #[test]
    fn one_overlong_message_is_cut() {
        let mut messages = vec![result("none", &"x".repeat(10_000))];
        messages[0].role = Role::User;
        messages.extend(conversation(3, 10).into_iter().skip(1));
        let settings = CompactionSettings {
            max_tokens: 2000,
            summary_reserve_tokens: 200,
            min_keep_messages: 6,
            ..CompactionSettings::default()
        };
        let plan = plan_compaction(&messages, &Bytes, &settings).unwrap();
        assert_eq!(plan.summarized, vec![0]);
        assert!(plan.truncated);
        assert_eq!(plan.omitted, 0);
        assert!(plan.request_tokens <= 1800);
        assert!(
            plan.request_tokens > 1700,
            "uses the room: {}",
            plan.request_tokens
        );
        assert!(plan.request[1].text_content().ends_with(TRUNCATION_MARKER));
    }

    #[test]
    fn budget_too_small() {
        let messages = conversation(10, 10);
        let settings = CompactionSettings {
            max_tokens: 100,
            summary_reserve_tokens: 50,
            min_keep_messages: 1,
            ..CompactionSettings::default()
        };
        let error = plan_compaction(&messages, &Bytes, &settings).unwrap_err();
        let needed = Bytes.count(SUMMARY_INSTRUCTIONS) + TRANSCRIPT_HEADER.len() + 11 + 50;
        assert_eq!(
            error.to_string(),
            format!(
                "cannot compact: the summarization request needs at least {needed} tokens but \
                 context.max_tokens is 100; raise context.max_tokens"
            )
        );
    }

    #[test]
    fn conversation_tokens_sum_messages() {
        let messages = vec![Message::user("abcd")];
        assert_eq!(conversation_tokens(&Bytes, &messages), 8);
    }
}
