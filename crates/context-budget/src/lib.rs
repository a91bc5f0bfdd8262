//! Context budget: decides what part of a conversation is sent to a model, and says so before
//! it is sent. It counts tokens, predicts the WYSIWYG boundary, runs the overflow trim loop of
//! the send workflow spec, plans compaction for ybs and builds bb7's token estimate breakdown.
//! Everything here is pure: no I/O, no async runtime, no HTTP client. Callers feed inputs and
//! get decisions back. The one concession to speed: a BPE count of a text of a megabyte or
//! more runs on scoped threads that end before it returns (see [`PARALLEL_MIN_BYTES`]).
//!
//! # Layout
//!
//! - Counting: `counter/` (the [`TokenCounter`] trait; chars per token, the `cl100k_base` and
//!   `o200k_base` BPE encodings, a bounded cache keyed by content hash), over tiktoken's
//!   pre-tokenizer and piece counting (`pretokenize`, `pretokenize_regex`, `pieces`, `merge`,
//!   `parallel`) over the vocabularies `build.rs` compiles in (`vocab/`); `message` adds
//!   the per-message overheads.
//! - Predicting and sending: `pairs` (a history as user/assistant pairs), `predict` (the
//!   boundary), `boundary` (recomputed only when an input changed), `trim` (the trim loop,
//!   sans I/O), `telemetry` (what each send reports), `error`.
//! - For one program each: `compaction/` (ybs: what to summarize and the request that does
//!   it) and `estimate` (bb7's token estimate).
//!
//! ```
//! use ybs_context_budget::{Bpe, TokenCounter};
//! assert_eq!(Bpe::cl100k().count("hello world"), 2);
//! ```
//!
//! One send, from core messages to the attempt that is delivered:
//!
//! ```
//! use ybs_context_budget::{
//!     Budget, CachedCounter, CharsPerToken, Next, Outcome, PairInfo, Pairs, TokenCounter,
//!     TrimLoop, predict,
//! };
//! use ybs_core::{LlmError, Message};
//!
//! let counter = CachedCounter::new(CharsPerToken::default());
//! let history = vec![
//!     Message::system("Be brief."),
//!     Message::user("first question"),
//!     Message::assistant("first answer"),
//!     Message::user("second question"),
//!     Message::assistant("second answer"),
//! ];
//! let prompt = "third question";
//!
//! // Pairs and their counts; system messages are reserved, not budgeted.
//! let pairs = Pairs::split(&history);
//! let tokens = pairs.tokens(&counter, &history);
//! let budget = Budget::new(128_000, Some(30_000))
//!     .with_reserved_tokens(pairs.system_tokens(&counter, &history));
//! let prediction = predict(&tokens, &budget);
//! assert_eq!(prediction.counter_text(), "2 / 2");
//!
//! let infos: Vec<PairInfo> = tokens
//!     .iter()
//!     .enumerate()
//!     .map(|(i, &t)| PairInfo::new(i.to_string(), t))
//!     .collect();
//! let aut = counter.count(prompt);
//! let mut send = TrimLoop::start("gpt-4o", infos, prediction, aut, budget, Some(3.5))
//!     .map_err(|refused| refused.result.unwrap_err())?;
//! let finished = loop {
//!     let attempt = send.attempt();
//!     let mut payload: Vec<Message> =
//!         pairs.payload(&history, attempt.history.clone()).into_iter().cloned().collect();
//!     payload.push(Message::user(prompt));
//!     // ... send `payload`; here the provider overflows once, then answers.
//!     let outcome = if attempt.number == 1 {
//!         Outcome::Failed(LlmError::from_response(400, None, "Request too large for gpt-4o"))
//!     } else {
//!         Outcome::Success
//!     };
//!     match send.report(outcome) {
//!         Next::Retry(next) => send = next,
//!         Next::Done(finished) => break finished,
//!     }
//! };
//! assert_eq!(finished.telemetry.counter_text(2), "[2-1]/2");
//! assert_eq!(finished.result?.attempt.history, 1..2);
//! # Ok::<(), ybs_context_budget::SendError>(())
//! ```

pub mod boundary;
pub mod compaction;
pub mod counter;
mod error;
pub mod estimate;
mod merge;
pub mod message;
pub mod pairs;
mod parallel;
mod pieces;
pub mod predict;
mod pretokenize;
mod pretokenize_regex;
pub mod telemetry;
pub mod trim;
mod vocab;

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
pub use pairs::{PairSpan, Pairs, is_blank};
pub use parallel::PARALLEL_MIN_BYTES;
pub use predict::{
    Budget, DEFAULT_MAX_TRIM_ATTEMPTS, DEFAULT_USER_REQUEST_ALLOWANCE, Prediction, counter_text,
    model_limit, predict,
};
pub use telemetry::{SelectionEntry, Stage, Telemetry, TelemetryBudget, TelemetryMessage};
pub use trim::{Attempt, Delivery, Finished, Next, Outcome, PairInfo, TrimLoop, is_overflow};

/// The examples of this crate's `README.md`, run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
