//! How parts without a wire form of their own become prompt text, the same for every adapter.

use std::borrow::Cow;

use ybs_core::{Message, Part, Thinking};

/// The text a part contributes to a message's content: text and raw parts as they are, code
/// as a fenced block; `None` for parts that are not text (thinking, tool calls and results,
/// images, context events, unknown parts).
pub(crate) fn part_text(part: &Part) -> Option<Cow<'_, str>> {
    match part {
        Part::Text { content } | Part::Raw { content } => Some(Cow::Borrowed(content)),
        Part::Code { content, language } => Some(Cow::Owned(format!(
            "\n```{}\n{}\n```\n",
            language.as_deref().unwrap_or_default(),
            content.trim_end_matches('\n')
        ))),
        _ => None,
    }
}

/// The text of a message's text-like parts, joined.
pub(crate) fn message_text(message: &Message) -> String {
    message.parts.iter().filter_map(part_text).collect()
}

/// The thinking parts of a message.
pub(crate) fn thinking(message: &Message) -> impl Iterator<Item = &Thinking> {
    message.parts.iter().filter_map(|part| match part {
        Part::Thinking(thinking) => Some(thinking),
        _ => None,
    })
}

/// A temperature as the number its `f32` was written as (0.7, not 0.699999988079071).
pub(crate) fn temperature(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// The reasoning text of a message's thinking parts, one block per line.
pub(crate) fn reasoning_text(message: &Message) -> String {
    thinking(message)
        .map(|thinking| thinking.content.as_str())
        .filter(|text| !text.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
