//! The parts a message is made of, serialized as `{"type": "...", ...}` objects exactly as in
//! bb7's `chat.json` v2, plus the parts an agent needs (tool calls, tool results, images).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One piece of a message.
///
/// A part whose `type` this crate does not know is kept whole as [`Part::Unknown`] and written
/// back unchanged; a part of a known type with missing or mistyped fields is an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Prose.
    Text {
        /// The text.
        content: String,
    },
    /// The model's reasoning.
    Thinking(Thinking),
    /// A code snippet.
    Code {
        /// The code.
        content: String,
        /// Its language, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        language: Option<String>,
    },
    /// A file action indicator.
    File {
        /// The file's path.
        path: String,
    },
    /// A change to the chat's context (a file added, written, applied...).
    ContextEvent(ContextEvent),
    /// Raw content kept as a fallback.
    Raw {
        /// The content.
        content: String,
    },
    /// The model asking for a tool to run.
    ToolCall(ToolCall),
    /// What a tool returned.
    ToolResult(ToolResult),
    /// An image given to the model.
    Image(Image),
    /// A part of a type this crate does not know, kept verbatim.
    #[serde(untagged)]
    Unknown(Value),
}

/// The same as [`Part`] without `Unknown`: what the derived, strict deserializer reads.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownPart {
    Text {
        content: String,
    },
    Thinking(Thinking),
    Code {
        content: String,
        #[serde(default)]
        language: Option<String>,
    },
    File {
        path: String,
    },
    ContextEvent(ContextEvent),
    Raw {
        content: String,
    },
    ToolCall(ToolCall),
    ToolResult(ToolResult),
    Image(Image),
}

const KNOWN_TYPES: [&str; 9] = [
    "text",
    "thinking",
    "code",
    "file",
    "context_event",
    "raw",
    "tool_call",
    "tool_result",
    "image",
];

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let known = value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| KNOWN_TYPES.contains(&kind));
        if !known {
            return Ok(Part::Unknown(value));
        }
        let part = KnownPart::deserialize(value).map_err(serde::de::Error::custom)?;
        Ok(match part {
            KnownPart::Text { content } => Part::Text { content },
            KnownPart::Thinking(thinking) => Part::Thinking(thinking),
            KnownPart::Code { content, language } => Part::Code { content, language },
            KnownPart::File { path } => Part::File { path },
            KnownPart::ContextEvent(event) => Part::ContextEvent(event),
            KnownPart::Raw { content } => Part::Raw { content },
            KnownPart::ToolCall(call) => Part::ToolCall(call),
            KnownPart::ToolResult(result) => Part::ToolResult(result),
            KnownPart::Image(image) => Part::Image(image),
        })
    }
}

impl Part {
    /// A text part.
    pub fn text(content: impl Into<String>) -> Self {
        Part::Text {
            content: content.into(),
        }
    }

    /// A thinking part without a signature.
    pub fn thinking(content: impl Into<String>) -> Self {
        Part::Thinking(Thinking {
            content: content.into(),
            ..Thinking::default()
        })
    }
}

/// The model's reasoning, with whatever the provider needs to have it sent back on the next
/// turn: Anthropic rejects a follow-up whose thinking blocks lost their `signature`, and
/// OpenRouter wants its `reasoning_details` back unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Thinking {
    /// The readable reasoning text (empty for fully redacted reasoning).
    pub content: String,
    /// The provider's signature over the reasoning (Anthropic `signature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Opaque, encrypted reasoning (Anthropic `redacted_thinking.data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// OpenRouter's `reasoning_details` items, as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<Value>>,
}

/// A change to a chat's context, recorded in the history so the model sees it.
///
/// Fields this crate does not model are kept in [`extra`](ContextEvent::extra) and written
/// back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextEvent {
    /// What happened.
    pub action: ContextAction,
    /// The file it happened to.
    pub path: String,
    /// The file id after the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The file id before the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_version: Option<String>,
    /// Whether the file is read-only after the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readonly: Option<bool>,
    /// Whether the file lives outside the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<bool>,
    /// First line of a section (section events), 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// Last line of a section (section events), 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// For `UserSaveAs`: the output path the file came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_path: Option<String>,
    /// Fields not modelled above, kept verbatim.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl ContextEvent {
    /// An event with only its action and path.
    pub fn new(action: ContextAction, path: impl Into<String>) -> Self {
        ContextEvent {
            action,
            path: path.into(),
            version: None,
            prev_version: None,
            readonly: None,
            external: None,
            start_line: None,
            end_line: None,
            original_path: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// The twelve context actions of bb7, plus any other name kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ContextAction {
    /// The model wrote a file to the output.
    AssistantWriteFile,
    /// The user changed a file (re-snapshot, sync).
    UserWriteFile,
    /// The user applied an output file to the project.
    UserApplyFile,
    /// The user applied an output file under another name.
    UserSaveAs,
    /// The user rejected (deleted) an output file.
    UserRejectOutput,
    /// The user changed a file's read-only flag.
    UserSetReadOnly,
    /// The user added a file to context.
    UserAddFile,
    /// The user added a section (line range) of a file to context.
    UserAddSection,
    /// The user removed a file from context.
    UserRemoveFile,
    /// The user removed a section from context.
    UserRemoveSection,
    /// A fork found a file modified since the forked message.
    ForkWarningModified,
    /// A fork found a file deleted since the forked message.
    ForkWarningDeleted,
    /// An action this crate does not know, kept as written.
    Other(String),
}

impl ContextAction {
    /// All twelve known actions.
    pub const ALL: [ContextAction; 12] = [
        ContextAction::AssistantWriteFile,
        ContextAction::UserWriteFile,
        ContextAction::UserApplyFile,
        ContextAction::UserSaveAs,
        ContextAction::UserRejectOutput,
        ContextAction::UserSetReadOnly,
        ContextAction::UserAddFile,
        ContextAction::UserAddSection,
        ContextAction::UserRemoveFile,
        ContextAction::UserRemoveSection,
        ContextAction::ForkWarningModified,
        ContextAction::ForkWarningDeleted,
    ];

    /// The name as written in `chat.json`.
    pub fn as_str(&self) -> &str {
        match self {
            ContextAction::AssistantWriteFile => "AssistantWriteFile",
            ContextAction::UserWriteFile => "UserWriteFile",
            ContextAction::UserApplyFile => "UserApplyFile",
            ContextAction::UserSaveAs => "UserSaveAs",
            ContextAction::UserRejectOutput => "UserRejectOutput",
            ContextAction::UserSetReadOnly => "UserSetReadOnly",
            ContextAction::UserAddFile => "UserAddFile",
            ContextAction::UserAddSection => "UserAddSection",
            ContextAction::UserRemoveFile => "UserRemoveFile",
            ContextAction::UserRemoveSection => "UserRemoveSection",
            ContextAction::ForkWarningModified => "ForkWarningModified",
            ContextAction::ForkWarningDeleted => "ForkWarningDeleted",
            ContextAction::Other(name) => name,
        }
    }
}

impl fmt::Display for ContextAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ContextAction {
    type Err = std::convert::Infallible;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(ContextAction::ALL
            .iter()
            .find(|action| action.as_str() == name)
            .cloned()
            .unwrap_or_else(|| ContextAction::Other(name.to_owned())))
    }
}

impl Serialize for ContextAction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ContextAction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        let Ok(action) = name.parse();
        Ok(action)
    }
}

/// The model asking for a tool to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the result refers to it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON. When the model sent text that is not valid JSON, this is that
    /// text as a JSON string and [`arguments_error`](ToolCall::arguments_error) says why.
    pub arguments: Value,
    /// Why the arguments could not be read as JSON, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_error: Option<String>,
}

impl ToolCall {
    /// A call with valid JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            arguments_error: None,
        }
    }

    /// A call from the argument text a model streamed: parsed as JSON when it is JSON
    /// (empty text counts as `{}`), kept as a string and flagged when it is not.
    pub fn from_raw_arguments(id: impl Into<String>, name: impl Into<String>, raw: &str) -> Self {
        let mut call = ToolCall::new(id, name, Value::Null);
        if raw.trim().is_empty() {
            call.arguments = Value::Object(serde_json::Map::new());
            return call;
        }
        match serde_json::from_str(raw) {
            Ok(arguments) => call.arguments = arguments,
            Err(err) => {
                call.arguments = Value::String(raw.to_owned());
                call.arguments_error = Some(err.to_string());
            }
        }
        call
    }

    /// The arguments as the JSON text a provider expects back (the raw text when it was not
    /// valid JSON).
    pub fn arguments_text(&self) -> String {
        match (&self.arguments, &self.arguments_error) {
            (Value::String(raw), Some(_)) => raw.clone(),
            (arguments, _) => arguments.to_string(),
        }
    }
}

/// What a tool returned, for the call with id [`call_id`](ToolResult::call_id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name, for providers that want it with the result (Ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The result as text (usually JSON).
    pub content: String,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
}

/// An image given to the model: a file path or inline base64 data, with its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// The media type, such as `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A path to the image file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The image bytes, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}
