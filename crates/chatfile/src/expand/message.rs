//! What expansion gives: the conversation's messages with their sources, the options a chat
//! sets and the tool lines it asks for.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::Source;
use crate::parse::{ChatMessage, parse};

/// A message after expansion, with the file and line it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpandedMessage {
    /// `system`, `user`, `assistant`, `function_call`, `function_call_output`, `image` or `pdf`.
    pub role: String,
    /// The text (for `image` and `pdf`, the resolved path).
    pub content: String,
    /// Where it came from.
    pub source: Source,
}

impl ExpandedMessage {
    /// The message without its source.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::new(self.role.clone(), self.content.clone())
    }
}

/// The options a chat sets, later values winning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    /// `endpoint`, `backend`, `model`, `agent`, `previous_response_id` and `sticky_option key
    /// value`: they hold across turns.
    pub sticky: BTreeMap<String, String>,
    /// `format`, `persist`, `websearch` and `option key value` set after the last `assistant`
    /// message (each assistant message clears them).
    pub transient: BTreeMap<String, String>,
}

impl Options {
    /// The options in force: the sticky ones, overridden by the transient ones.
    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut all = self.sticky.clone();
        all.extend(self.transient.clone());
        all
    }
}

/// What a [`ToolRequest`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolRequestKind {
    /// `tool: NAME [inputs...]`: expose a tool to the model.
    Tool,
    /// `mcp: URL [tools...]` or `mcp: stdio COMMAND [tools...]`: expose an MCP server's tools.
    Mcp,
    /// `task: NAME [key=value...]`: run a tool before the model is asked; its call and result
    /// join the trace.
    Task,
    /// `inline_task: NAME [key=value...]`: run a tool; its output joins as a file.
    InlineTask,
    /// `exec_task: NAME [key=value...]`: run a tool; its output joins as a user message.
    ExecTask,
}

/// A tool line for the caller to resolve: this crate runs nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// What is asked.
    pub kind: ToolRequestKind,
    /// The line's words, split like a shell would (quotes group words).
    pub args: Vec<String>,
    /// Where the line is.
    pub source: Source,
    /// The index in [`Expansion::messages`] where the line stood: a task's output belongs
    /// before the message now at this index.
    pub position: usize,
}

/// A chat ready for a model: its messages, the options it sets and the tools it asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expansion {
    /// The conversation, in file order.
    pub messages: Vec<ExpandedMessage>,
    /// The options.
    pub options: Options,
    /// The tool lines, in file order.
    pub tools: Vec<ToolRequest>,
    /// The content of `meta` lines (bookkeeping, never sent to a model).
    pub meta: Vec<String>,
    /// Where the last `previous_response_id` line stood, as an index into
    /// [`messages`](Expansion::messages): the messages from here on are what the stored
    /// response has not seen, the only ones to send with its id.
    pub previous_response_at: Option<usize>,
}

/// The parsed messages of `text`, each with its source in `file`.
pub(super) fn sourced(text: &str, file: &Path) -> Vec<ExpandedMessage> {
    parse(text)
        .into_iter()
        .map(|message| ExpandedMessage {
            role: message.role,
            content: message.content,
            source: Source {
                file: file.to_owned(),
                line: message.span.start,
            },
        })
        .collect()
}
