//! Prompt-cache breakpoints: where a request asks a provider that caches only on request
//! (Anthropic, directly or through OpenRouter) to store the prompt prefix.

use serde::{Deserialize, Serialize};

use crate::message::{Message, Role};

/// The most breakpoints Anthropic accepts in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// Where to mark cache breakpoints in a request. A breakpoint caches everything before it
/// and itself (tools, then the system prompt, then the messages in order), so later requests
/// that start with the same bytes read that prefix from the cache.
///
/// Providers that cache by themselves (OpenAI, DeepSeek) or not at all ignore it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CacheBreakpoints {
    /// Mark the end of the tool definitions.
    #[serde(default)]
    pub tools: bool,
    /// Mark the end of the system prompt.
    #[serde(default)]
    pub system: bool,
    /// Mark the end of these messages (indices into `ChatRequest::messages`), newest last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<usize>,
    /// How long the cached prefix lives.
    #[serde(default)]
    pub ttl: CacheTtl,
}

impl CacheBreakpoints {
    /// Tools, the system prompt and the newest `turns` messages of `messages` that the user
    /// side sends (user messages and tool results): each request then reads the previous
    /// request's prefix from the cache and writes its own.
    pub fn for_conversation(messages: &[Message], turns: usize, ttl: CacheTtl) -> Self {
        let mut marked: Vec<usize> = messages
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, message)| matches!(message.role, Role::User | Role::Tool))
            .map(|(index, _)| index)
            .take(turns)
            .collect();
        marked.reverse();
        CacheBreakpoints {
            tools: true,
            system: true,
            messages: marked,
            ttl,
        }
    }

    /// The breakpoints a provider may send, at most [`MAX_CACHE_BREAKPOINTS`]: the tools
    /// (when there are any) and the system prompt (when there is one) first, then the newest
    /// marked messages that still fit.
    pub fn within_limit(&self, has_tools: bool, has_system: bool) -> CacheBreakpoints {
        let tools = self.tools && has_tools;
        let system = self.system && has_system;
        let room = MAX_CACHE_BREAKPOINTS - usize::from(tools) - usize::from(system);
        let skip = self.messages.len().saturating_sub(room);
        CacheBreakpoints {
            tools,
            system,
            messages: self.messages[skip..].to_vec(),
            ttl: self.ttl,
        }
    }
}

/// How long a cached prefix lives after its last use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheTtl {
    /// Five minutes, the providers' default.
    #[default]
    FiveMinutes,
    /// One hour (Anthropic; writing costs more).
    OneHour,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation(roles: &[Role]) -> Vec<Message> {
        roles.iter().map(|role| Message::text(*role, "x")).collect()
    }

    #[test]
    fn marks_the_newest_user_turns_oldest_first() {
        let messages = conversation(&[
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User,
        ]);
        let marks = CacheBreakpoints::for_conversation(&messages, 2, CacheTtl::FiveMinutes);
        assert_eq!(marks.messages, vec![4, 5]);
        assert!(marks.tools && marks.system);
        let one = CacheBreakpoints::for_conversation(&messages[..1], 2, CacheTtl::OneHour);
        assert_eq!(one.messages, vec![0]);
        assert_eq!(one.ttl, CacheTtl::OneHour);
    }

    #[test]
    fn never_more_than_four_and_the_newest_messages_win() {
        let marks = CacheBreakpoints {
            tools: true,
            system: true,
            messages: vec![1, 3, 5, 7],
            ttl: CacheTtl::FiveMinutes,
        };
        let sent = marks.within_limit(true, true);
        assert_eq!(sent.messages, vec![5, 7]);
        let sent = marks.within_limit(false, true);
        assert_eq!((sent.tools, sent.messages), (false, vec![3, 5, 7]));
        let sent = marks.within_limit(false, false);
        assert_eq!((sent.system, sent.messages.len()), (false, 4));
    }
}
