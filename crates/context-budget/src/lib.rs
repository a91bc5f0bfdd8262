//! Context budget: decides what part of a conversation is sent to a model. It counts tokens
//! (the chars-per-token heuristic, the `cl100k_base`/`o200k_base` BPE encodings, a bounded
//! cache keyed by content hash), predicts the WYSIWYG boundary and runs the overflow trim loop
//! of the send workflow spec, plans compaction for ybs and builds bb7's token estimate
//! breakdown.
//!
//! Everything here is pure: no I/O, no async runtime, no HTTP client. Callers feed inputs and
//! get decisions back.
//!
//! ```
//! use ybs_context_budget::{Bpe, TokenCounter};
//! assert_eq!(Bpe::cl100k().count("hello world"), 2);
//! ```

pub mod boundary;
pub mod compaction;
pub mod counter;
mod error;
pub mod estimate;
pub mod message;
pub mod pairs;
pub mod predict;
pub mod telemetry;
pub mod trim;

pub use boundary::{BoundaryCache, Trigger};
pub use compaction::{
    CompactionError, CompactionPlan, CompactionSettings, SUMMARY_PREFIX, conversation_tokens,
    plan_compaction,
};
pub use counter::{
    Bpe, CachedCounter, CharsPerToken, DEFAULT_CACHE_CAPACITY, DEFAULT_CHARS_PER_TOKEN, Encoding,
    InvalidCharsPerToken, TokenCounter, UnknownEncoding,
};
pub use error::{BudgetError, SendError};
pub use estimate::{EstimateInput, FileEstimate, FileInput, TokenEstimate, estimate_tokens};
pub use message::{
    IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, TOOL_CALL_OVERHEAD_TOKENS,
    count_message, count_messages, count_part,
};
pub use pairs::{PairSpan, Pairs};
pub use predict::{
    Budget, DEFAULT_MAX_TRIM_ATTEMPTS, DEFAULT_USER_REQUEST_ALLOWANCE, Prediction, counter_text,
    model_limit, predict,
};
pub use telemetry::{SelectionEntry, Stage, Telemetry, TelemetryBudget, TelemetryMessage};
pub use trim::{Attempt, Delivery, Finished, Next, Outcome, PairInfo, TrimLoop, is_overflow};
