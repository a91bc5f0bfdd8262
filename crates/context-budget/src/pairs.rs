//! Grouping a conversation's [`Message`]s into the pairs the WYSIWYG budget works on.
//!
//! A pair is a user message with every assistant, tool-call and tool-result message up to the
//! next user message; the budget includes or drops a pair whole, never a part of it.
//!
//! System messages belong to no pair: they are listed apart in [`Pairs::system`] and are
//! always sent, so the caller reserves their tokens (see
//! [`Budget::reserved_tokens`](crate::Budget::reserved_tokens)) instead of letting the boundary
//! or the trim loop drop them. Assistant or tool messages before the first user message (a
//! greeting, say) form a pair of their own without a user message, so they can still be
//! budgeted and trimmed.
//!
//! A message whose text is blank (no parts, or only text parts that
//! are empty after trimming whitespace) is neither counted nor sent.

use std::ops::Range;

use ybs_core::{Message, Part, Role};

use crate::counter::TokenCounter;
use crate::message::count_message;

/// One pair: the indices of its messages in the conversation (system messages inside the
/// range, if any, are not part of it; see [`Pairs::system`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSpan {
    /// The index of the user message that opens the pair; `None` for a leading pair of
    /// assistant or tool messages before the first user message.
    pub user: Option<usize>,
    /// The indices of the pair's messages, in order (user first, when there is one).
    pub messages: Vec<usize>,
}

impl PairSpan {
    /// The first and one-past-last message index the pair covers.
    pub fn range(&self) -> Range<usize> {
        match (self.messages.first(), self.messages.last()) {
            (Some(&first), Some(&last)) => first..last + 1,
            _ => 0..0,
        }
    }
}

/// A conversation split into system messages and pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairs {
    /// The indices of the system messages, in order.
    pub system: Vec<usize>,
    /// The pairs, oldest first.
    pub pairs: Vec<PairSpan>,
}

impl Pairs {
    /// Splits `messages` into system messages and pairs.
    pub fn split(messages: &[Message]) -> Pairs {
        let mut split = Pairs::default();
        for (index, message) in messages.iter().enumerate() {
            match message.role {
                Role::System => split.system.push(index),
                Role::User => split.pairs.push(PairSpan {
                    user: Some(index),
                    messages: vec![index],
                }),
                Role::Assistant | Role::Tool => match split.pairs.last_mut() {
                    Some(pair) => pair.messages.push(index),
                    None => split.pairs.push(PairSpan {
                        user: None,
                        messages: vec![index],
                    }),
                },
            }
        }
        split
    }

    /// The token count of each pair, in order: the sum of [`count_message`] over its
    /// messages that are not blank.
    pub fn tokens(&self, counter: &dyn TokenCounter, messages: &[Message]) -> Vec<usize> {
        self.pairs
            .iter()
            .map(|pair| {
                pair.messages
                    .iter()
                    .filter_map(|&index| messages.get(index))
                    .filter(|message| !is_blank(message))
                    .map(|message| count_message(counter, message))
                    .sum()
            })
            .collect()
    }

    /// The tokens of the system messages.
    pub fn system_tokens(&self, counter: &dyn TokenCounter, messages: &[Message]) -> usize {
        self.system
            .iter()
            .filter_map(|&index| messages.get(index))
            .map(|message| count_message(counter, message))
            .sum()
    }

    /// The messages to send for the pairs in `included` (indices into [`Pairs::pairs`]),
    /// with every system message, in conversation order; blank pair messages are left out.
    pub fn payload<'m>(&self, messages: &'m [Message], included: Range<usize>) -> Vec<&'m Message> {
        let mut indices: Vec<usize> = self.system.clone();
        for pair in self.pairs.get(included).unwrap_or_default() {
            indices.extend(
                pair.messages
                    .iter()
                    .filter(|&&index| messages.get(index).is_some_and(|m| !is_blank(m))),
            );
        }
        indices.sort_unstable();
        indices
            .into_iter()
            .filter_map(|index| messages.get(index))
            .collect()
    }
}

/// Whether a message has nothing to send: no parts, or only whitespace text.
pub fn is_blank(message: &Message) -> bool {
    message
        .parts
        .iter()
        .all(|part| matches!(part, Part::Text { content } if content.trim().is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ybs_core::{Part, ToolCall, ToolResult};

    fn tool(call_id: &str) -> Message {
        Message::new(
            Role::Tool,
            vec![Part::ToolResult(ToolResult {
                call_id: call_id.into(),
                name: None,
                content: "ok".into(),
                is_error: false,
            })],
        )
    }

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![Part::ToolCall(ToolCall::new(
                id,
                "read",
                serde_json::json!({}),
            ))],
        )
    }

    #[test]
    fn pairs_run_from_one_user_message_to_the_next() {
        let messages = vec![
            Message::system("sys"),
            Message::user("q1"),
            call("a"),
            tool("a"),
            Message::assistant("a1"),
            Message::user("q2"),
            Message::system("note"),
            Message::assistant("a2"),
            Message::user("q3"),
        ];
        let split = Pairs::split(&messages);
        assert_eq!(split.system, vec![0, 6]);
        let spans: Vec<_> = split.pairs.iter().map(|p| p.messages.clone()).collect();
        assert_eq!(spans, vec![vec![1, 2, 3, 4], vec![5, 7], vec![8]]);
        assert_eq!(split.pairs[1].range(), 5..8);
        assert_eq!(split.pairs[2].user, Some(8));

        let payload = split.payload(&messages, 1..3);
        let roles: Vec<_> = payload.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![
                Role::System,
                Role::User,
                Role::System,
                Role::Assistant,
                Role::User
            ]
        );
    }

    #[test]
    fn leading_assistant_messages_form_their_own_pair() {
        let messages = vec![Message::assistant("hi"), Message::user("q")];
        let split = Pairs::split(&messages);
        assert_eq!(split.pairs[0].user, None);
        assert_eq!(split.pairs[0].messages, vec![0]);
        assert_eq!(split.pairs[1].user, Some(1));
    }

    #[test]
    fn pair_tokens_sum_their_messages() {
        struct Bytes;
        impl TokenCounter for Bytes {
            fn count(&self, text: &str) -> usize {
                text.len()
            }
        }
        let messages = vec![
            Message::system("sys"),
            Message::user("abc"),
            Message::assistant("de"),
            Message::user("f"),
        ];
        let split = Pairs::split(&messages);
        assert_eq!(split.tokens(&Bytes, &messages), vec![4 + 3 + 4 + 2, 4 + 1]);
        assert_eq!(split.system_tokens(&Bytes, &messages), 7);
        assert!(Pairs::split(&[]).pairs.is_empty());

        // A blank assistant message (a reply that never came) is neither counted nor sent.
        let messages = vec![Message::user("abc"), Message::assistant("  \n")];
        let split = Pairs::split(&messages);
        assert_eq!(split.tokens(&Bytes, &messages), vec![7]);
        assert_eq!(split.payload(&messages, 0..1).len(), 1);
        assert!(is_blank(&Message::new(Role::User, vec![])));
        assert!(!is_blank(&Message::new(
            Role::User,
            vec![Part::thinking("")]
        )));
        assert_eq!(
            PairSpan {
                user: None,
                messages: vec![]
            }
            .range(),
            0..0
        );
    }
}
