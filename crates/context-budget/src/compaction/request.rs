//! The request that asks the model for the summary: the instructions and a transcript of the
//! summarized messages, budgeted so that the summary still fits.

use ybs_core::{Message, Part};

use super::error::CompactionError;
use super::settings::CompactionSettings;
use crate::counter::TokenCounter;
use crate::message::{MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS};

/// The system instruction of the summarization request.
pub const SUMMARY_INSTRUCTIONS: &str = "You are compacting the history of a conversation \
between a user and an AI coding assistant so that it can continue within a limited context \
window. Summarize the transcript you are given: the user's goals and requests, decisions made, \
files read or changed (with their paths), commands run and their important results, errors met, \
and any work still in progress or promised next. Keep exact identifiers, paths and numbers. Be \
concise; do not add anything that is not in the transcript.";

/// The marker appended to a message cut short to fit the summarization request.
pub const TRUNCATION_MARKER: &str = "\n[... truncated]";

/// The summarization request as planned.
pub(super) struct Request {
    /// The instructions and the transcript.
    pub(super) messages: Vec<Message>,
    /// Their tokens, reply priming included.
    pub(super) tokens: usize,
    /// How many of the oldest summarized messages were left out.
    pub(super) omitted: usize,
    /// Whether the newest one was cut short.
    pub(super) truncated: bool,
}

pub(super) const TRANSCRIPT_HEADER: &str = "Summarize this conversation transcript:";
const SEPARATOR: &str = "\n\n";

/// The request that asks the model to summarize the `summarized` messages, leaving out the
/// oldest (and cutting the newest) when they do not fit in `max_tokens` less the reserve.
pub(super) fn build_request(
    messages: &[Message],
    summarized: &[usize],
    counter: &dyn TokenCounter,
    settings: &CompactionSettings,
) -> Result<Request, CompactionError> {
    let limit = settings
        .max_tokens
        .saturating_sub(settings.summary_reserve_tokens);
    let entries: Vec<String> = summarized
        .iter()
        .map(|&index| render(&messages[index]))
        .collect();
    let separator_tokens = counter.count(SEPARATOR);
    let fixed = request_tokens(counter, &transcript(&[], 0, None));
    if fixed > limit {
        return Err(CompactionError::BudgetTooSmall {
            needed: fixed.saturating_add(settings.summary_reserve_tokens),
            max_tokens: settings.max_tokens,
        });
    }

    // Newest first, take whole entries while the estimate fits; the omission note costs a few
    // tokens, so keep a small margin for it.
    let note_margin = counter.count(&omission_note(summarized.len())) + separator_tokens;
    let room = limit.saturating_sub(fixed).saturating_sub(note_margin);
    let mut start = entries.len();
    let mut used = 0usize;
    while start > 0 {
        let cost = counter.count(&entries[start - 1]) + separator_tokens;
        if used.saturating_add(cost) > room {
            break;
        }
        used += cost;
        start -= 1;
    }

    let mut truncated_last = None;
    if start == entries.len()
        && let Some(last) = entries.last()
    {
        // Not even the newest message fits whole: cut it to the room there is.
        truncated_last = Some(truncate_to(
            counter,
            last,
            room.saturating_sub(separator_tokens),
        ));
        start = entries.len() - 1;
    }

    // The per-entry estimate can differ from the joined text by a token here and there under
    // BPE; drop more old entries until the real count fits.
    loop {
        let text = transcript(&entries[start..], start, truncated_last.as_deref());
        let tokens = request_tokens(counter, &text);
        if tokens <= limit || start + 1 >= entries.len() {
            if tokens > limit {
                // Only the (possibly cut) newest entry is left and it still does not fit.
                let text = transcript(&[], entries.len(), None);
                let tokens = request_tokens(counter, &text);
                return Ok(Request {
                    messages: request_messages(text),
                    tokens,
                    omitted: entries.len(),
                    truncated: false,
                });
            }
            return Ok(Request {
                messages: request_messages(text),
                tokens,
                omitted: start,
                truncated: truncated_last.is_some(),
            });
        }
        start += 1;
    }
}

fn omission_note(omitted: usize) -> String {
    format!("({omitted} earlier messages did not fit and are left out.)")
}

/// The transcript text: header, an omission note when `omitted > 0`, then the entries. When
/// `replacement_last` is given it stands for the last entry (a cut version of it).
fn transcript(entries: &[String], omitted: usize, replacement_last: Option<&str>) -> String {
    let mut text = String::from(TRANSCRIPT_HEADER);
    if omitted > 0 {
        text.push_str(SEPARATOR);
        text.push_str(&omission_note(omitted));
    }
    let count = entries.len();
    for (position, entry) in entries.iter().enumerate() {
        text.push_str(SEPARATOR);
        match replacement_last {
            Some(cut) if position + 1 == count => text.push_str(cut),
            _ => text.push_str(entry),
        }
    }
    text
}

fn request_messages(transcript: String) -> Vec<Message> {
    vec![
        Message::system(SUMMARY_INSTRUCTIONS),
        Message::user(transcript),
    ]
}

fn request_tokens(counter: &dyn TokenCounter, transcript: &str) -> usize {
    counter.count(SUMMARY_INSTRUCTIONS)
        + counter.count(transcript)
        + 2 * MESSAGE_OVERHEAD_TOKENS
        + REPLY_PRIMING_TOKENS
}

/// The longest prefix of `text` (on a char boundary) that, with the truncation marker, costs
/// at most `budget` tokens. Binary search over char positions: O(log n) counts.
fn truncate_to(counter: &dyn TokenCounter, text: &str, budget: usize) -> String {
    let boundaries: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    let cut = |chars: usize| -> String {
        let end = boundaries.get(chars).copied().unwrap_or(text.len());
        format!("{}{TRUNCATION_MARKER}", &text[..end])
    };
    let (mut low, mut high) = (0usize, boundaries.len());
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if counter.count(&cut(mid)) <= budget {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    cut(low)
}

/// One message as transcript text.
fn render(message: &Message) -> String {
    let mut text = format!("{}:", message.role);
    for part in &message.parts {
        text.push('\n');
        match part {
            Part::Text { content } | Part::Raw { content } => text.push_str(content),
            Part::Code { content, language } => {
                text.push_str("```");
                text.push_str(language.as_deref().unwrap_or(""));
                text.push('\n');
                text.push_str(content);
                text.push_str("\n```");
            }
            Part::Thinking(thinking) => {
                text.push_str("[thinking] ");
                text.push_str(&thinking.content);
            }
            Part::File { path } => text.push_str(&format!("[file {path}]")),
            Part::ContextEvent(event) => {
                text.push_str(&format!("[{} {}]", event.action, event.path))
            }
            Part::ToolCall(call) => text.push_str(&format!(
                "[tool call {} {}]",
                call.name,
                call.arguments_text()
            )),
            Part::ToolResult(result) => {
                let label = if result.is_error {
                    "tool error"
                } else {
                    "tool result"
                };
                text.push_str(&format!("[{label}] {}", result.content));
            }
            Part::Image(_) => text.push_str("[image]"),
            Part::Unknown(value) => text.push_str(&value.to_string()),
        }
    }
    text
}
