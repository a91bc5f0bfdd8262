//! Why a send was refused or gave up.

use ybs_core::LlmError;

/// A send the budget refuses or gives up on. The first word of each message is the spec's
/// error code ([`BudgetError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The new prompt alone does not fit the model limit (checked before any attempt).
    #[error(
        "user_prompt_too_large: the prompt is about {aut} tokens but the model limit is \
         {model_limit}; shorten the prompt or pick a model with a larger context window"
    )]
    UserPromptTooLarge {
        /// AUT: the prompt's estimated tokens (plus reserved tokens, if any).
        aut: usize,
        /// ML.
        model_limit: usize,
    },
    /// The provider still reported a context overflow after the trim loop ran out of pairs or
    /// attempts.
    #[error(
        "context_overflow_after_trimming: the model still reported a context overflow after \
         trimming {trimmed} of {predicted} pairs in {attempts} attempts; hide older pairs with \
         a filter, shorten the prompt or pick a model with a larger context window"
    )]
    ContextOverflowAfterTrimming {
        /// X.
        predicted: usize,
        /// T.
        trimmed: usize,
        /// Attempts sent.
        attempts: usize,
    },
}

impl BudgetError {
    /// The spec's error code: `user_prompt_too_large` or `context_overflow_after_trimming`.
    pub fn code(&self) -> &'static str {
        match self {
            BudgetError::UserPromptTooLarge { .. } => "user_prompt_too_large",
            BudgetError::ContextOverflowAfterTrimming { .. } => "context_overflow_after_trimming",
        }
    }
}

/// How a send ended when it did not deliver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The budget refused the send or gave up trimming.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// The provider failed with an error that is not a context overflow; the loop stops at
    /// once and hands it back unchanged.
    #[error(transparent)]
    Provider(#[from] LlmError),
}
