//! The bodies of every line the daemon writes ([`crate::wire::reply::Reply`], one JSON
//! object with a `type`, plus `request_id` when it answers a request). Each reply's body is a
//! struct here whose [`ReplyBody::KIND`] is its `type`; `Reply::new` turns one into a line. The lines go out with the keys of every
//! object sorted, whatever the order of a struct's fields, as the first bb7's replies were
//! compared and as the transcript tests pin them. They are sorted explicitly: serde_json
//! keeps insertion order instead when another crate of the same build turns on its
//! `preserve_order` feature.
//!
//! Fields left out when empty say so with `skip_serializing_if`; everything else is always
//! present (`[]` for empty lists).

use serde::Serialize;
use serde_json::Value;
use ybs_core::Message;
use ybs_providers::ModelInfo;

use crate::session::file_status::FileStatus;
use crate::session::history::{ContextWarning, SearchResult};
use crate::store::instructions::InstructionsInfo;
use crate::store::model::{ChatSummary, ContextFile};

/// A reply's body: its fields, and its `type`.
pub trait ReplyBody: Serialize {
    /// The `type` of the reply.
    const KIND: &'static str;
}

fn is_false(value: &bool) -> bool {
    !value
}

macro_rules! kinds {
    ($($body:ty => $kind:literal,)*) => {
        $(impl ReplyBody for $body {
            const KIND: &'static str = $kind;
        })*
    };
}

kinds! {
    Ack => "ok",
    Opened => "ok",
    Created => "ok",
    Edited => "ok",
    Applied => "ok",
    DiffLocalDone => "ok",
    ErrorReply => "error",
    Version => "version",
    ChatList => "chat_list",
    ChatView<'_> => "chat",
    ChatActive => "chat_active",
    SearchResults => "search_results",
    ForkResult => "fork_result",
    ContextList<'_> => "context_list",
    FileContent => "file_content",
    DiffPaths => "diff_paths",
    FileStatuses => "file_statuses",
    InstructionsPath => "instructions_path",
    CustomizationInfo => "customization_info",
    TokenEstimate => "token_estimate",
    TextTokenEstimate => "text_token_estimate",
    Models => "models",
    Balance => "balance",
    Chunk<'_> => "chunk",
    Thinking<'_> => "thinking",
    Done => "done",
    DiffError => "diff_error",
    TitleUpdated<'_> => "title_updated",
}

/// `ok` and nothing else.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ack {}

/// `ok` to `init`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Opened {
    /// `true` in global-only mode (an empty `project_root`).
    #[serde(skip_serializing_if = "is_false")]
    pub global_only: bool,
    /// The config's `default_model`, when it sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

/// `ok` to `chat_new` and `chat_new_with_context`.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    /// The new chat's id.
    pub id: String,
}

/// `ok` to `chat_edit`.
#[derive(Debug, Clone, Serialize)]
pub struct Edited {
    /// Files changed or deleted since the message's snapshot.
    pub context_warnings: Vec<ContextWarning>,
}

/// `ok` to `apply_file` and `apply_file_as`.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The applied content, for the client to write.
    pub content: String,
}

/// `ok` to `diff_local_done`.
#[derive(Debug, Clone, Serialize)]
pub struct DiffLocalDone {
    /// `none`, `full` or `partial`.
    pub outcome: &'static str,
}

/// `error`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorReply {
    /// What went wrong (the client matches some of these texts).
    pub message: String,
    /// A send's budget counters.
    #[serde(flatten)]
    pub counters: Option<Counters>,
}

/// `version`.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    /// This crate's version.
    pub version: &'static str,
}

/// `chat_list`.
#[derive(Debug, Clone, Serialize)]
pub struct ChatList {
    /// The chats, newest first.
    pub chats: Vec<ChatSummary>,
}

/// `chat`: the active chat (`chat_get`).
#[derive(Debug, Clone, Serialize)]
pub struct ChatView<'a> {
    /// The chat's id.
    pub id: &'a str,
    /// Its name.
    pub name: &'a str,
    /// When it was created (RFC 3339).
    pub created: &'a str,
    /// Its model (the default model when it has none).
    pub model: String,
    /// Its reasoning effort (`""` for none).
    pub reasoning_effort: &'a str,
    /// The draft the client saved.
    pub draft: &'a str,
    /// The history.
    pub messages: &'a [Message],
    /// Which instruction files exist and whether they parse.
    pub instructions_info: InstructionsInfo,
    /// `true` for a global chat.
    #[serde(skip_serializing_if = "is_false")]
    pub global: bool,
    /// Why the chat is not trusted, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<String>,
}

/// `chat_active`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChatActive {
    /// The active chat's id, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `true` when the active chat is global.
    #[serde(skip_serializing_if = "is_false")]
    pub global: bool,
}

/// `search_results`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The matching chats, newest first.
    pub results: Vec<SearchResult>,
}

/// `fork_result`.
#[derive(Debug, Clone, Serialize)]
pub struct ForkResult {
    /// The fork's id (it is now the active chat).
    pub new_chat_id: String,
    /// The text of the message forked at (the fork's draft).
    pub fork_message_content: String,
    /// Files changed or deleted since the message's snapshot.
    pub context_warnings: Vec<ContextWarning>,
}

/// `context_list`.
#[derive(Debug, Clone, Serialize)]
pub struct ContextList<'a> {
    /// The active chat's context files.
    pub files: &'a [ContextFile],
}

/// `file_content` (`get_context_file`, `get_output_file`).
#[derive(Debug, Clone, Serialize)]
pub struct FileContent {
    /// The file.
    pub path: String,
    /// Its snapshot or output.
    pub content: String,
}

/// `diff_paths`.
#[derive(Debug, Clone, Serialize)]
pub struct DiffPaths {
    /// The file.
    pub path: String,
    /// Where its output is.
    pub output_path: String,
    /// Where the project file is.
    pub local_path: String,
}

/// `file_statuses`.
#[derive(Debug, Clone, Serialize)]
pub struct FileStatuses {
    /// Every file in context or output.
    pub files: Vec<FileStatus>,
}

/// `instructions_path` (`prepare_instructions`).
#[derive(Debug, Clone, Serialize)]
pub struct InstructionsPath {
    /// The file to edit.
    pub path: String,
}

/// `customization_info`.
#[derive(Debug, Clone, Serialize)]
pub struct CustomizationInfo {
    /// Whether `~/.config/bb7/system_prompt.txt` exists.
    pub system_override: bool,
    /// Whether the global instructions exist.
    pub global_instructions: bool,
    /// Whether the project instructions exist and parse.
    pub project_instructions: bool,
    /// Why they do not parse (`""` when they do).
    pub project_instructions_error: String,
    /// The files the project instructions include, with their sizes (left out when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub project_includes: Vec<crate::store::instructions::Included>,
}

/// `token_estimate`: what the next request would cost, in cl100k tokens.
#[derive(Debug, Clone, Serialize)]
pub struct TokenEstimate {
    /// The text being typed (`input_text`).
    pub input_text: usize,
    /// Everything, the text being typed included.
    pub total: usize,
    /// All files (context plus pending output).
    pub context_files: usize,
    /// The history.
    pub history: usize,
    /// The instruction files.
    pub instructions: usize,
    /// The system prompt.
    pub system_prompt: usize,
    /// Per file, in context order (output-only files last).
    pub files: Vec<FileTokens>,
    /// The original tokens of the files with output.
    pub potential_savings: usize,
}

/// One file of a [`TokenEstimate`]; both counts always present (0 when there is none).
#[derive(Debug, Clone, Serialize)]
pub struct FileTokens {
    /// The file.
    pub path: String,
    /// What it costs in a request.
    pub tokens: usize,
    /// Whether it has output.
    pub has_output: bool,
    /// Tokens of the snapshot.
    pub original_tokens: usize,
    /// Tokens of the output.
    pub output_tokens: usize,
}

/// `text_token_estimate`.
#[derive(Debug, Clone, Serialize)]
pub struct TextTokenEstimate {
    /// One count for `text`, or a count per entry of `texts`.
    pub tokens: TokenCounts,
}

/// The counts of a [`TextTokenEstimate`].
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum TokenCounts {
    /// For `text`.
    One(usize),
    /// For `texts`, in order.
    Each(Vec<usize>),
}

/// `models`.
#[derive(Debug, Clone, Serialize)]
pub struct Models {
    /// The models the provider offers.
    pub models: Vec<ModelEntry>,
}

/// One model as the first bb7 sends it: every key present (`0`, `""` or `null` when the
/// backend does not say).
#[derive(Debug, Clone, Serialize)]
pub struct ModelEntry {
    /// The model id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// When it was published (Unix seconds).
    pub created: i64,
    /// When it goes away, if announced.
    pub expiration_date: Option<String>,
    /// Its context window.
    pub context_length: u64,
    /// Its longest reply.
    pub max_completion_tokens: u64,
    /// Whether it reasons.
    pub supports_reasoning: bool,
    /// Whether it calls tools.
    pub supports_tools: bool,
    /// Its prices.
    pub pricing: ModelPricing,
}

/// The prices of a [`ModelEntry`], per token as the provider writes them.
#[derive(Debug, Clone, Serialize)]
pub struct ModelPricing {
    /// Prompt tokens.
    pub prompt: String,
    /// Reply tokens.
    pub completion: String,
    /// Cache reads.
    pub input_cache_read: String,
    /// Cache writes.
    pub input_cache_write: String,
    /// Reasoning tokens.
    pub internal_reasoning: String,
    /// The discount, 0 for none.
    pub discount: f64,
}

impl From<&ModelInfo> for ModelEntry {
    fn from(model: &ModelInfo) -> ModelEntry {
        let pricing = model.pricing.as_ref();
        let price = |pick: fn(&ybs_providers::Pricing) -> Option<&str>| {
            pricing.and_then(pick).unwrap_or("").to_owned()
        };
        ModelEntry {
            id: model.id.clone(),
            name: model.name.clone(),
            description: model.description.clone().unwrap_or_default(),
            created: model.created.unwrap_or(0),
            expiration_date: model.expiration_date.clone(),
            context_length: model.context_length.unwrap_or(0),
            max_completion_tokens: model.max_completion_tokens.unwrap_or(0),
            supports_reasoning: model.supports_reasoning.unwrap_or(false),
            supports_tools: model.supports_tools.unwrap_or(false),
            pricing: ModelPricing {
                prompt: price(|p| Some(p.prompt.as_str())),
                completion: price(|p| Some(p.completion.as_str())),
                input_cache_read: price(|p| p.input_cache_read.as_deref()),
                input_cache_write: price(|p| p.input_cache_write.as_deref()),
                internal_reasoning: price(|p| p.internal_reasoning.as_deref()),
                discount: pricing.and_then(|p| p.discount).unwrap_or(0.0),
            },
        }
    }
}

/// `balance`.
#[derive(Debug, Clone, Serialize)]
pub struct Balance {
    /// Credits bought.
    pub total_credits: f64,
    /// Credits spent.
    pub total_usage: f64,
}

/// `chunk`: reply text as it streams, or a note such as `[Assistant added: PATH]`.
#[derive(Debug, Clone, Serialize)]
pub struct Chunk<'a> {
    /// The text.
    pub content: &'a str,
}

/// `thinking`: the model's reasoning as it streams.
#[derive(Debug, Clone, Serialize)]
pub struct Thinking<'a> {
    /// The text.
    pub content: &'a str,
}

/// `done`: the reply is saved and its files are written.
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    /// The outputs written, project-relative.
    pub output_files: Vec<String>,
    /// What the request cost.
    pub usage: UsageFigures,
    /// Seconds since the `send` was read.
    pub duration: f64,
    /// The budget's counters.
    #[serde(flatten)]
    pub counters: Counters,
}

/// `diff_error`: edits that failed; the text is saved, nothing is written.
#[derive(Debug, Clone, Serialize)]
pub struct DiffError {
    /// Why, one line per failure.
    pub errors: Vec<String>,
    /// Every tool call of the reply (and of the repair): `{tool, args | args_raw, path}`.
    pub tool_calls: Vec<Value>,
    /// What the request (and the repair) cost.
    pub usage: UsageFigures,
    /// Seconds since the `send` was read.
    pub duration: f64,
    /// The budget's counters.
    #[serde(flatten)]
    pub counters: Counters,
}

/// `usage` of [`Done`] and [`DiffError`]: every field present, zeros when the provider sent
/// none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct UsageFigures {
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: u64,
    /// Reply tokens.
    pub completion_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cached_tokens: u64,
    /// Prompt plus reply tokens.
    pub total_tokens: u64,
    /// The cost, 0 when unknown.
    pub cost: f64,
}

impl From<&ybs_core::Usage> for UsageFigures {
    fn from(usage: &ybs_core::Usage) -> UsageFigures {
        let usage = (*usage).with_total();
        UsageFigures {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_tokens: usage.cached_tokens,
            total_tokens: usage.total_tokens,
            cost: usage.cost.unwrap_or(0.0),
        }
    }
}

/// The WYSIWYG budget's counters on a send's final reply: pairs of user message and replies
/// `predicted` to fit, `trimmed` on overflow, `visible` in the chat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Pairs the prediction sends.
    pub predicted: usize,
    /// Pairs the trim loop left out.
    pub trimmed: usize,
    /// Pairs in the chat.
    pub visible: usize,
}

/// `title_updated` (no request id): a chat got its title.
#[derive(Debug, Clone, Serialize)]
pub struct TitleUpdated<'a> {
    /// The chat.
    pub chat_id: &'a str,
    /// Its new name.
    pub title: &'a str,
}
