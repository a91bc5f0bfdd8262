//! What a request carries besides the conversation when a chat file asks for it: a stored
//! reply to continue (OpenAI Responses `previous_response_id`), the hosted web search, and
//! body fields passed through unchanged.

use serde_json::{Map, Value};

/// A chat file's extras for the requests of a turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestExtras {
    /// The stored reply the next request continues; each reply with an id moves it on.
    pub chain: Option<ResponseChain>,
    /// The id of the last reply, when the provider gave one.
    pub last_response_id: Option<String>,
    /// Offer the provider's hosted web search.
    pub web_search: bool,
    /// Top-level request body fields passed through (a chat file's `option:` lines).
    pub body: Map<String, Value>,
}

/// A stored reply and how much of the conversation it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseChain {
    /// The reply's id.
    pub id: String,
    /// How many messages at the start of the conversation the provider holds through it:
    /// only the messages after them are sent.
    pub held: usize,
}
