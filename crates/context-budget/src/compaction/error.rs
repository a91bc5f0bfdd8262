//! Why no compaction could be planned.

/// Why no compaction could be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// Everything outside system messages must be kept, so there is nothing to summarize.
    #[error(
        "nothing to compact: all {messages} messages must be kept (the newest {min_keep} are \
         always kept and a tool call stays with its result); raise context.max_tokens or start \
         a new session"
    )]
    NothingToSummarize {
        /// Non-system messages in the conversation.
        messages: usize,
        /// The minimum kept.
        min_keep: usize,
    },
    /// The budget cannot hold even the summarization instructions plus the summary reserve.
    #[error(
        "cannot compact: the summarization request needs at least {needed} tokens but \
         context.max_tokens is {max_tokens}; raise context.max_tokens"
    )]
    BudgetTooSmall {
        /// The smallest possible request plus the reserve.
        needed: usize,
        /// `context.max_tokens`.
        max_tokens: usize,
    },
}
