//! When a conversation is compacted, and how much room the summary gets.

/// The compaction settings of the ybs config (`context` section) plus the planner's own knobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionSettings {
    /// `context.max_tokens`: the conversation's budget (default 32000).
    pub max_tokens: usize,
    /// `context.compaction_threshold`: compact when the conversation reaches this fraction of
    /// `max_tokens` (default 0.95).
    pub threshold: f64,
    /// Never keep fewer than this many newest (non-system) messages (default 5).
    pub min_keep_messages: usize,
    /// Room left in the summarization request for the summary itself (default 1024).
    pub summary_reserve_tokens: usize,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            max_tokens: 32_000,
            threshold: 0.95,
            min_keep_messages: 5,
            summary_reserve_tokens: 1024,
        }
    }
}

impl CompactionSettings {
    /// The token count at which compaction starts: `ceil(threshold * max_tokens)`.
    pub fn trigger_tokens(&self) -> usize {
        (self.threshold * self.max_tokens as f64).ceil() as usize
    }

    /// Whether a conversation of `tokens` tokens has reached the threshold.
    pub fn needs_compaction(&self, tokens: usize) -> bool {
        tokens >= self.trigger_tokens()
    }
}
