//! Every request, declared once: its action name, its fields, the reply that answers it and
//! when it may run ([`Concurrency`]). The declaration makes [`Request`] (a serde enum tagged
//! by `action`, each variant holding its fields' struct from [`fields`]), [`ACTIONS`], the
//! methods that name a request's action, rule and reply type, and each fields struct's
//! [`Declared`] reply, so a new action is one entry here plus its handler (the compiler then
//! asks for it in [`crate::server::dispatch`], and [`answer`] holds the handler to the
//! declared reply).
//!
//! Fields the client may leave out default to empty; handlers treat an empty required string
//! as missing, as the first bb7 did. A wrongly typed field is `Invalid request: ...`, except
//! in the model-calling requests, which read their fields as the first bb7 does
//! ([`crate::wire::params`]).

use serde::Deserialize;

use crate::wire::error::Error;
use crate::wire::params::{ConsentEntry, SendParams, Texts};
use crate::wire::replies::{self, Ack, ReplyBody};
use crate::wire::reply::Reply;

/// When a request may run, relative to the one stream (`send`) that may be in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency<'a> {
    /// Answered by the reader as soon as it is read, ahead of queued work.
    Immediate,
    /// Takes the one stream slot as it is read; refused (`Another request is already in
    /// progress`) while another stream holds it.
    Stream,
    /// Only reads: handled in order, also while a stream runs.
    ReadOnly,
    /// Leaves the streaming chat's messages and context alone (or, for `shutdown`, ends
    /// the stream): handled in order, also while a stream runs.
    BesideStream,
    /// While a stream runs, only on the project already open (the UI reopening; the
    /// active chat is kept).
    SameProject(&'a str),
    /// While a stream runs, only for a chat other than the streaming one, which stays where
    /// it is (and active).
    OtherChat(&'a str),
    /// Changes the session or the active chat: refused while a stream runs.
    Exclusive,
}

impl Concurrency<'_> {
    /// Whether the request is handled by the reader rather than queued for the session.
    pub fn is_immediate(&self) -> bool {
        matches!(self, Concurrency::Immediate)
    }
}

/// A request's fields, and the reply body that answers it when it succeeds: a handler that
/// goes through [`answer`] can only return that body (the compiler checks it).
pub trait Declared {
    /// The body of the reply that answers the request.
    type Reply: ReplyBody;
}

/// Runs `handle` on a request's fields and makes its declared reply of what it returns.
pub fn answer<Q: Declared>(
    request: Q,
    handle: impl FnOnce(Q) -> Result<Q::Reply, Error>,
) -> Result<Reply, Error> {
    handle(request).map(|body| Reply::new(&body))
}

/// `chat_get`'s reply, a view borrowing the chat, which [`answer`] cannot make (its declared
/// type is the view with any lifetime): only a `chat_get` request, taken by value, gets one,
/// and a test holds its declared reply type equal to the view's.
pub fn answer_chat_get(_request: fields::ChatGet, view: &replies::ChatView<'_>) -> Reply {
    Reply::new(view)
}

/// `context_list`'s reply, written without copying the chat's files (see
/// [`Reply::context_list`]): only a `context_list` request, taken by value, gets one.
pub fn answer_context_list(
    _request: fields::ContextList,
    files: &[crate::store::model::ContextFile],
) -> Reply {
    Reply::context_list(files)
}

/// The fields of one request: a struct named after its variant, unless the declaration
/// names a type of its own (`send`'s [`SendParams`]).
macro_rules! request_fields {
    ($(#[doc = $doc:literal])* $variant:ident ($params:ty)) => {};
    ($(#[doc = $doc:literal])* $variant:ident $({
        $($(#[$attr:meta])* $field:ident : $type:ty),* $(,)?
    })?) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        pub struct $variant {
            $($(
                #[allow(missing_docs)]
                $(#[$attr])*
                pub $field: $type,
            )*)?
        }
    };
}

/// The type of a request's fields (see [`request_fields`]).
macro_rules! fields_type {
    ($variant:ident ($params:ty)) => {
        $params
    };
    ($variant:ident) => {
        fields::$variant
    };
}

/// Declares the requests: `"wire_name" => Variant { fields } -> ReplyType, Rule(field)?;`.
macro_rules! requests {
    ($(
        $(#[doc = $doc:literal])*
        $wire:literal => $variant:ident $({ $($fields:tt)* })? $(($params:ty))?
            -> $reply:ty, $rule:ident $(($arg:ident))?;
    )*) => {
        /// Each request's fields, by the name of its [`Request`] variant.
        pub mod fields {
            use super::*;

            $(request_fields! { $(#[doc = $doc])* $variant $({ $($fields)* })? $(($params))? })*
        }

        $(impl Declared for fields_type!($variant $(($params))?) {
            type Reply = $reply;
        })*

        /// A request, by action.
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(tag = "action")]
        pub enum Request {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $wire)]
                $variant(fields_type!($variant $(($params))?)),
            )*
        }

        /// Every action name the daemon knows.
        pub const ACTIONS: &[&str] = &[$($wire),*];

        impl Request {
            /// The action name.
            pub fn action(&self) -> &'static str {
                match self {
                    $(Request::$variant(_) => $wire,)*
                }
            }

            /// When the request may run.
            pub fn concurrency(&self) -> Concurrency<'_> {
                match self {
                    $(Request::$variant(_fields) => Concurrency::$rule $((&_fields.$arg))?,)*
                }
            }

            /// The `type` of the reply that answers the request when it succeeds (`done` for
            /// `send`, after its `chunk` and `thinking` lines).
            pub fn reply_kind(&self) -> &'static str {
                match self {
                    $(Request::$variant(_) => <$reply as ReplyBody>::KIND,)*
                }
            }
        }
    };
}

requests! {
    /// Creates `.bb7/chats` in `project_root` (not in the home directory).
    "bb7_init" => Bb7Init {
        project_root: String,
    } -> Ack, BesideStream;
    /// Opens the project at `project_root` (it must have `.bb7/`), or global-only mode when
    /// it is empty; reopens the chat the project had selected last.
    "init" => Init {
        #[serde(default)]
        project_root: String,
    } -> replies::Opened, SameProject(project_root);
    /// A new, empty chat that becomes the active one.
    "chat_new" => ChatNew {
        #[serde(default)]
        name: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        global: bool,
    } -> replies::Created, Exclusive;
    /// A new chat with another chat's model, reasoning effort and context files.
    "chat_new_with_context" => ChatNewWithContext {
        source_chat_id: String,
        #[serde(default)]
        global: bool,
    } -> replies::Created, Exclusive;
    /// The chats, newest first.
    "chat_list" => ChatList {
        #[serde(default)]
        global: bool,
    } -> replies::ChatList, ReadOnly;
    /// Makes a chat the active one (taking its lock).
    "chat_select" => ChatSelect {
        id: String,
        #[serde(default)]
        global: bool,
    } -> Ack, Exclusive;
    /// The active chat.
    "chat_get" => ChatGet -> replies::ChatView<'static>, ReadOnly;
    /// Deletes a chat.
    "chat_delete" => ChatDelete {
        id: String,
        #[serde(default)]
        global: bool,
    } -> Ack, Exclusive;
    /// Renames a chat.
    "chat_rename" => ChatRename {
        id: String,
        name: String,
        #[serde(default)]
        global: bool,
    } -> Ack, BesideStream;
    /// Moves a chat between the project and the global store (`to`: `global` or `project`).
    "chat_move" => ChatMove {
        #[serde(default)]
        id: String,
        #[serde(default)]
        to: String,
    } -> Ack, OtherChat(id);
    /// The active chat's id.
    "chat_active" => ChatActive -> replies::ChatActive, ReadOnly;
    /// Removes a chat's lock.
    "chat_force_unlock" => ChatForceUnlock {
        id: String,
        #[serde(default)]
        global: bool,
    } -> Ack, BesideStream;
    /// Chats whose name or messages contain `query`.
    "search_chats" => SearchChats {
        #[serde(default)]
        query: String,
        #[serde(default)]
        global: bool,
    } -> replies::SearchResults, ReadOnly;
    /// Goes back to the user message at `message_index`, which becomes the draft.
    "chat_edit" => ChatEdit {
        #[serde(default)]
        chat_id: String,
        message_index: i64,
        #[serde(default)]
        content: String,
    } -> replies::Edited, Exclusive;
    /// A new chat holding the history up to the user message at `fork_message_index`.
    "fork_chat" => ForkChat {
        chat_id: String,
        fork_message_index: i64,
        #[serde(default)]
        global: bool,
    } -> replies::ForkResult, Exclusive;
    /// Ours: removes the user message at `index` and the replies that follow it.
    "message_delete" => MessageDelete {
        #[serde(default)]
        chat_id: String,
        index: i64,
    } -> Ack, Exclusive;
    /// Keeps the text being typed with the chat.
    "save_draft" => SaveDraft {
        #[serde(default)]
        draft: String,
    } -> Ack, Exclusive;
    /// Sets the active chat's model and reasoning effort.
    "save_chat_settings" => SaveChatSettings {
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        reasoning_effort: Option<String>,
    } -> Ack, Exclusive;
    /// Appends a system message (the first bb7 client sends its text as `message`).
    "add_system_message" => AddSystemMessage {
        #[serde(default)]
        content: Option<String>,
        #[serde(default)]
        message: Option<String>,
    } -> Ack, Exclusive;
    /// Adds a whole file to the context (the client sends its content).
    "context_add" => ContextAdd {
        path: String,
        #[serde(default)]
        content: String,
        #[serde(default)]
        readonly: bool,
    } -> Ack, Exclusive;
    /// Adds lines `start_line..=end_line` of a file to the context.
    "context_add_section" => ContextAddSection {
        path: String,
        #[serde(default)]
        content: String,
        // Missing lines are 0, refused as not positive (the first bb7's error).
        #[serde(default)]
        start_line: i64,
        #[serde(default)]
        end_line: i64,
    } -> Ack, Exclusive;
    /// Re-snapshots a context file.
    "context_update" => ContextUpdate {
        path: String,
        #[serde(default)]
        content: String,
    } -> Ack, Exclusive;
    /// Removes a whole file from the context.
    "context_remove" => ContextRemove {
        path: String,
    } -> Ack, Exclusive;
    /// Removes a section from the context.
    "context_remove_section" => ContextRemoveSection {
        path: String,
        // Missing lines are 0, refused as not positive (the first bb7's error).
        #[serde(default)]
        start_line: i64,
        #[serde(default)]
        end_line: i64,
    } -> Ack, Exclusive;
    /// The context files.
    "context_list" => ContextList -> replies::ContextList<'static>, ReadOnly;
    /// Sets a context file's read-only flag.
    "context_set_readonly" => ContextSetReadonly {
        path: String,
        readonly: bool,
    } -> Ack, Exclusive;
    /// Re-snapshots a file the client has just written, silently.
    "sync_context" => SyncContext {
        #[serde(default)]
        path: Option<String>,
    } -> Ack, Exclusive;
    /// A context file's snapshot.
    "get_context_file" => GetContextFile {
        path: String,
    } -> replies::FileContent, ReadOnly;
    /// A file's output.
    "get_output_file" => GetOutputFile {
        path: String,
    } -> replies::FileContent, ReadOnly;
    /// Where a file's output and project file are, for a diff.
    "get_diff_paths" => GetDiffPaths {
        path: String,
    } -> replies::DiffPaths, ReadOnly;
    /// The status of every file in context or output.
    "get_file_statuses" => GetFileStatuses -> replies::FileStatuses, ReadOnly;
    /// Accepts an output: it becomes the snapshot; the client writes the file.
    "apply_file" => ApplyFile {
        path: String,
    } -> replies::Applied, Exclusive;
    /// Accepts an output as another project file.
    "apply_file_as" => ApplyFileAs {
        path: String,
        destination: String,
    } -> replies::Applied, Exclusive;
    /// Rejects an output.
    "output_delete" => OutputDelete {
        path: String,
    } -> Ack, Exclusive;
    /// The user finished a local-vs-output diff.
    "diff_local_done" => DiffLocalDone {
        path: String,
    } -> replies::DiffLocalDone, Exclusive;
    /// Is the daemon there?
    "ping" => Ping -> Ack, Immediate;
    /// The daemon's version.
    "version" => Version -> replies::Version, Immediate;
    /// Ends the daemon (answered before it exits).
    "shutdown" => Shutdown -> Ack, BesideStream;
    /// Creates an instruction file from its template if missing (`level`: `project`,
    /// `global` or `system`) and says where it is.
    "prepare_instructions" => PrepareInstructions {
        level: String,
    } -> replies::InstructionsPath, Exclusive;
    /// Which instruction files and prompt override exist.
    "get_customization_info" => GetCustomizationInfo -> replies::CustomizationInfo, ReadOnly;
    /// The project's `@include`s the user allowed although git does not vouch for them
    /// (untracked, ignored, in `.git`, named like a secret), as the directives write them,
    /// each alone or with the digest of what the user saw; replaces the list given before.
    /// Without it such an include is an instruction error, and so it is once what it
    /// resolves to or holds changes.
    "allow_includes" => AllowIncludes {
        #[serde(default)]
        paths: Vec<ConsentEntry>,
    } -> Ack, BesideStream;
    /// Sends the user's message to the model: `chunk` and `thinking` lines, then `done`,
    /// `diff_error` or `error`.
    "send" => Send(SendParams) -> replies::Done, Stream;
    /// Stops the stream `target_request_id` (or any stream without one).
    "cancel" => Cancel {
        #[serde(default, deserialize_with = "crate::wire::params::request_id")]
        target_request_id: Option<String>,
    } -> Ack, Immediate;
    /// Makes a title for a chat from `content` (in the background: `title_updated`).
    "generate_title" => GenerateTitle {
        #[serde(default, deserialize_with = "crate::wire::params::text")]
        chat_id: Option<String>,
        #[serde(default, deserialize_with = "crate::wire::params::text")]
        content: Option<String>,
        #[serde(default, deserialize_with = "crate::wire::params::flag")]
        global: bool,
    } -> Ack, BesideStream;
    /// What the next request would cost, `input_text` (the draft) included.
    "estimate_tokens" => EstimateTokens {
        #[serde(default, deserialize_with = "crate::wire::params::string")]
        input_text: Option<String>,
    } -> replies::TokenEstimate, ReadOnly;
    /// Token counts of `texts` (or of one `text`).
    "estimate_text_tokens" => EstimateTextTokens {
        #[serde(default, deserialize_with = "crate::wire::params::string")]
        text: Option<String>,
        #[serde(default, deserialize_with = "crate::wire::params::texts")]
        texts: Texts,
    } -> replies::TextTokenEstimate, ReadOnly;
    /// The provider's models (fetched again after a day).
    "get_models" => GetModels -> replies::Models, ReadOnly;
    /// The account's credits.
    "get_balance" => GetBalance -> replies::Balance, ReadOnly;
}

#[cfg(test)]
mod borrowed_reply_tests {
    use super::*;

    #[test]
    fn the_borrowed_replies_are_of_the_types_their_requests_declare() {
        assert_eq!(
            <fields::ChatGet as Declared>::Reply::KIND,
            <replies::ChatView<'_> as ReplyBody>::KIND
        );
        assert_eq!(
            <fields::ContextList as Declared>::Reply::KIND,
            replies::ContextList::KIND
        );
        let list = answer_context_list(fields::ContextList {}, &[]);
        assert_eq!(list.kind(), <fields::ContextList as Declared>::Reply::KIND);
    }
}
