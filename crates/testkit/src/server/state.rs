//! What a server holds: the turn queue, the recorded requests, the models and credits.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::listing::{Credits, Model};
use crate::script::{Script, Turn};

/// One request the server received (control endpoints under `/_fake/` are not recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path without the query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Headers, names lowercased; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON; `null` when empty, a JSON string when it is not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// State shared by the handlers and the [`FakeLlm`](super::FakeLlm) handle.
#[derive(Debug, Default)]
pub(super) struct Inner {
    /// The scripted turns not yet served.
    pub(super) turns: VecDeque<Turn>,
    /// The requests received, in order.
    pub(super) requests: Vec<RecordedRequest>,
    /// The models the list endpoints report.
    pub(super) models: Vec<Model>,
    /// How long the model lists take.
    pub(super) models_delay_ms: u64,
    /// What the credits endpoint reports.
    pub(super) credits: Credits,
    /// The enforced context window, if any.
    pub(super) window: Option<crate::script::Window>,
    /// Whether LM Studio's `/api/v0/models` answers.
    pub(super) lm_studio: bool,
    /// Chat requests so far (numbering the reply ids).
    pub(super) chats: u64,
}

/// [`Inner`] behind its lock.
#[derive(Debug, Default)]
pub(super) struct Shared {
    inner: Mutex<Inner>,
}

impl Shared {
    /// The state of a server starting on `script`.
    pub(super) fn new(script: Script) -> Self {
        Shared {
            inner: Mutex::new(Inner {
                turns: script.turns.into(),
                requests: Vec::new(),
                models: script.models,
                models_delay_ms: script.models_delay_ms,
                credits: script.credits,
                window: script.window,
                lm_studio: script.lm_studio,
                chats: 0,
            }),
        }
    }

    /// The state, locked.
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave `Inner` half-updated in a way that
        // matters to a test double, so recover from poisoning.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
