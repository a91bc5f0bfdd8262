//! Token counts of whole [`Message`]s: their parts plus a fixed per-message overhead.

use ybs_core::{Message, Part};

use crate::counter::TokenCounter;

/// Tokens every message costs besides its content: 3 for the chat framing (`<|start|>`,
/// the separator after the role, `<|end|>`) and 1 for the role name. This is OpenAI's published
/// accounting for chat messages (`tokens_per_message = 3` plus the encoded role), and within a
/// token of Anthropic's; without it a history of many short messages would be underestimated.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// Tokens every request costs once on top of its messages: the reply is primed with
/// `<|start|>assistant<|message|>` (OpenAI's accounting). Add it when estimating a whole
/// request; the per-pair budget does not need it.
pub const REPLY_PRIMING_TOKENS: usize = 3;

/// Tokens a tool call costs besides its name and argument text: the call id and the JSON
/// structure around name and arguments.
pub const TOOL_CALL_OVERHEAD_TOKENS: usize = 8;

/// Tokens an image part is estimated at: OpenAI's cost of a 1024×1024 image at high detail
/// (765). The budget cannot see pixel sizes, so it assumes a typical screenshot-sized image.
pub const IMAGE_TOKENS: usize = 765;

/// The tokens of one part.
///
/// - text, raw and code (with its language): the text;
/// - thinking: the readable reasoning (signatures and encrypted `data` are opaque blobs the
///   provider does not bill as prompt text);
/// - tool call: name plus argument text plus [`TOOL_CALL_OVERHEAD_TOKENS`];
/// - tool result: the result text plus the tool name when given;
/// - file and context event: the path (and action name), which is what a prompt shows of them;
/// - image: [`IMAGE_TOKENS`];
/// - an unknown part: its JSON text.
pub fn count_part(counter: &dyn TokenCounter, part: &Part) -> usize {
    match part {
        Part::Text { content } | Part::Raw { content } => counter.count(content),
        Part::Code { content, language } => {
            counter.count(content) + language.as_deref().map_or(0, |lang| counter.count(lang))
        }
        Part::Thinking(thinking) => counter.count(&thinking.content),
        Part::File { path } => counter.count(path),
        Part::ContextEvent(event) => {
            counter.count(event.action.as_str()) + counter.count(&event.path)
        }
        Part::ToolCall(call) => {
            TOOL_CALL_OVERHEAD_TOKENS
                + counter.count(&call.name)
                + counter.count(&call.arguments_text())
        }
        Part::ToolResult(result) => {
            counter.count(&result.content)
                + result.name.as_deref().map_or(0, |name| counter.count(name))
        }
        Part::Image(_) => IMAGE_TOKENS,
        Part::Unknown(value) => counter.count(&value.to_string()),
    }
}

/// The tokens of one message: [`MESSAGE_OVERHEAD_TOKENS`] plus every part ([`count_part`]).
pub fn count_message(counter: &dyn TokenCounter, message: &Message) -> usize {
    MESSAGE_OVERHEAD_TOKENS
        + message
            .parts
            .iter()
            .map(|part| count_part(counter, part))
            .sum::<usize>()
}

/// The tokens of a sequence of messages (without [`REPLY_PRIMING_TOKENS`]).
pub fn count_messages<'a>(
    counter: &dyn TokenCounter,
    messages: impl IntoIterator<Item = &'a Message>,
) -> usize {
    messages
        .into_iter()
        .map(|message| count_message(counter, message))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::{Bpe, CharsPerToken};
    use serde_json::json;
    use ybs_core::{ContextAction, ContextEvent, Image, Role, ToolCall, ToolResult};

    /// One token per byte, so expectations are easy to read.
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count(&self, text: &str) -> usize {
            text.len()
        }
    }

    #[test]
    fn message_is_overhead_plus_parts() {
        let message = Message::new(
            Role::Assistant,
            vec![Part::text("hello"), Part::thinking("hmm")],
        );
        assert_eq!(count_message(&Bytes, &message), 4 + 5 + 3);
        assert_eq!(count_message(&Bytes, &Message::new(Role::User, vec![])), 4);
    }

    #[test]
    fn every_part_kind_is_counted() {
        let call = ToolCall::new("c1", "read", json!({"p": 1}));
        assert_eq!(count_part(&Bytes, &Part::ToolCall(call)), 8 + 4 + 7);
        let result = ToolResult {
            call_id: "c1".into(),
            name: Some("read".into()),
            content: "done".into(),
            is_error: false,
        };
        assert_eq!(count_part(&Bytes, &Part::ToolResult(result)), 8);
        let code = Part::Code {
            content: "fn x".into(),
            language: Some("rs".into()),
        };
        assert_eq!(count_part(&Bytes, &code), 6);
        assert_eq!(
            count_part(
                &Bytes,
                &Part::File {
                    path: "a.rs".into()
                }
            ),
            4
        );
        let event = ContextEvent::new(ContextAction::UserAddFile, "a.rs");
        assert_eq!(count_part(&Bytes, &Part::ContextEvent(event)), 11 + 4);
        let image = Image {
            media_type: None,
            path: Some("x.png".into()),
            data: None,
        };
        assert_eq!(count_part(&Bytes, &Part::Image(image)), IMAGE_TOKENS);
        assert_eq!(count_part(&Bytes, &Part::Unknown(json!({"a": 1}))), 7);
        assert_eq!(
            count_part(
                &Bytes,
                &Part::Raw {
                    content: "r".into()
                }
            ),
            1
        );
    }

    #[test]
    fn messages_sum() {
        let messages = [Message::user("abcd"), Message::assistant("abcdefgh")];
        assert_eq!(
            count_messages(&CharsPerToken::default(), &messages),
            4 + 2 + 4 + 3
        );
        assert_eq!(count_messages(Bpe::cl100k(), &messages[..1]), 4 + 1);
    }
}
