//! `ChatRequest` -> Anthropic Messages body.

use serde_json::{Value, json};
use ybs_core::{
    ChatRequest, LlmError, Message, Part, ReasoningEffort, ResponseFormat, Role, ToolChoice,
};

use super::wire::{
    Block, ImageSource, MarkedBlock, Request, System, SystemBlock, ThinkingConfig, Tool,
    WireMessage, WireTool,
};
use crate::images::{self, source};
use crate::text::{part_text, temperature};
use crate::wire::{CacheControl, arguments_object};

/// `max_tokens` when the request sets none; every Claude model allows at least this much.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The thinking budget for a reasoning effort (Anthropic's minimum is 1024).
fn budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Minimal => 1024,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        ReasoningEffort::High => 24576,
    }
}

/// The streaming request body. Images must have been loaded.
///
/// The system prompt is the request's plus any system messages before the first turn; a
/// system message later in the conversation becomes user text wrapped in
/// `<system-message>`, since the API has no such role. Consecutive messages of the same role
/// are merged. Thinking blocks go back only with their signature (or as redacted data);
/// reasoning from other providers is dropped. With a reasoning effort, thinking is enabled
/// with the budget above, `max_tokens` is raised above the budget when needed, and the
/// temperature is left out (the API allows none with thinking). JSON formats are asked for in
/// the system prompt, the API having no response-format field.
pub(crate) fn encode<'a>(
    request: &'a ChatRequest,
    model: &'a str,
) -> Result<Request<'a>, LlmError> {
    let mut system: Vec<String> = request
        .system
        .iter()
        .filter(|text| !text.is_empty())
        .cloned()
        .collect();
    let mut messages: Vec<WireMessage> = Vec::new();
    let marks = request.cache.as_ref();
    let mut marked_messages = Vec::new();
    for (index, message) in request.messages.iter().enumerate() {
        if message.role == Role::System && messages.is_empty() {
            let text: String = message.parts.iter().filter_map(part_text).collect();
            if !text.is_empty() {
                system.push(text);
            }
            continue;
        }
        let (role, blocks) = blocks(message)?;
        if blocks.is_empty() {
            continue;
        }
        let blocks = blocks.into_iter().map(MarkedBlock::from);
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(WireMessage {
                role,
                content: blocks.collect(),
            }),
        }
        if marks.is_some_and(|marks| marks.messages.contains(&index)) {
            let last = messages.len() - 1;
            marked_messages.push((last, messages[last].content.len() - 1));
        }
    }
    if let Some(instruction) = request.response_format.as_ref().and_then(json_instruction) {
        system.push(instruction);
    }
    let thinking = request.reasoning_effort.map(|effort| ThinkingConfig {
        kind: "enabled",
        budget_tokens: budget(effort),
    });
    let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(thinking) = &thinking
        && max_tokens <= thinking.budget_tokens
    {
        max_tokens += thinking.budget_tokens;
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    let mut tools: Vec<Tool> = request
        .tools
        .iter()
        .map(|tool| Tool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.parameters,
            cache_control: None,
        })
        .collect();
    let system = match marks {
        Some(marks) => {
            let marks = marks.within_limit(!tools.is_empty(), system.is_some());
            let control = CacheControl::new(marks.ttl);
            if marks.tools
                && let Some(last) = tools.last_mut()
            {
                last.cache_control = Some(control);
            }
            let room = marks.messages.len();
            for &(message, block) in marked_messages.iter().rev().take(room) {
                mark_block(&mut messages[message].content, block, control);
            }
            match system {
                Some(text) if marks.system => Some(System::Blocks([SystemBlock {
                    kind: "text",
                    text,
                    cache_control: control,
                }])),
                other => other.map(System::Text),
            }
        }
        None => system.map(System::Text),
    };
    Ok(Request {
        model,
        max_tokens,
        system,
        messages,
        tools: (tools.into_iter().map(WireTool::Function))
            .chain(
                request
                    .web_search
                    .then(|| WireTool::Server(web_search_tool())),
            )
            .collect(),
        tool_choice: request.tool_choice.as_ref().map(tool_choice),
        temperature: request
            .temperature
            .filter(|_| thinking.is_none())
            .map(temperature),
        top_p: request
            .top_p
            .filter(|_| thinking.is_none())
            .map(temperature),
        stop_sequences: &request.stop,
        thinking,
        stream: true,
    })
}

/// Anthropic's hosted web search tool, run by the server (its results come back as blocks
/// of the reply, which the decoder skips).
fn web_search_tool() -> Value {
    json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
}

/// Puts the breakpoint on the block at `index` of a message, or on the nearest block before
/// it that may carry one (thinking blocks may not).
fn mark_block(content: &mut [MarkedBlock], index: usize, control: CacheControl) {
    let target = content[..=index].iter_mut().rev().find(|marked| {
        !matches!(
            marked.block,
            Block::Thinking { .. } | Block::RedactedThinking { .. }
        )
    });
    if let Some(marked) = target {
        marked.cache_control = Some(control);
    }
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    }
}

fn json_instruction(format: &ResponseFormat) -> Option<String> {
    match format {
        ResponseFormat::Text => None,
        ResponseFormat::Json => {
            Some("Reply with a single valid JSON object and no other text.".to_owned())
        }
        ResponseFormat::JsonSchema { name, schema, .. } => {
            // Keys sorted explicitly: the same text whether or not serde_json keeps insertion
            // order in this build (its `preserve_order` feature).
            let mut schema = schema.clone();
            schema.sort_all_objects();
            Some(format!(
                "Reply with a single valid JSON object and no other text. It must match the \
                 JSON Schema \"{name}\": {schema}"
            ))
        }
    }
}

fn blocks(message: &Message) -> Result<(&'static str, Vec<Block>), LlmError> {
    let role = match message.role {
        Role::Assistant => "assistant",
        Role::User | Role::Tool | Role::System => "user",
    };
    let mut results = Vec::new();
    let mut blocks = Vec::new();
    let push_text = |blocks: &mut Vec<Block>, text: &str| {
        if text.is_empty() {
            return;
        }
        match blocks.last_mut() {
            Some(Block::Text { text: last }) => last.push_str(text),
            _ => blocks.push(Block::Text {
                text: text.to_owned(),
            }),
        }
    };
    for part in &message.parts {
        match part {
            Part::ToolResult(result) => results.push(Block::ToolResult {
                tool_use_id: result.call_id.clone(),
                content: result.content.clone(),
                is_error: result.is_error,
            }),
            Part::ToolCall(call) if role == "assistant" => blocks.push(Block::ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                input: arguments_object(call),
            }),
            Part::Thinking(thinking) if role == "assistant" => {
                if let Some(data) = &thinking.data {
                    blocks.push(Block::RedactedThinking { data: data.clone() });
                } else if let Some(signature) = &thinking.signature {
                    blocks.push(Block::Thinking {
                        thinking: thinking.content.clone(),
                        signature: signature.clone(),
                    });
                }
            }
            Part::Image(image) => {
                let source = match source(image)? {
                    images::ImageSource::Url(url) => ImageSource::Url {
                        url: url.to_owned(),
                    },
                    images::ImageSource::Base64 { media_type, data } => ImageSource::Base64 {
                        media_type: media_type.to_owned(),
                        data: data.to_owned(),
                    },
                };
                blocks.push(if images::is_document(image) {
                    Block::Document { source }
                } else {
                    Block::Image { source }
                });
            }
            other => {
                if let Some(text) = part_text(other) {
                    push_text(&mut blocks, &text);
                }
            }
        }
    }
    if message.role == Role::System {
        for block in &mut blocks {
            if let Block::Text { text } = block {
                *text = format!("<system-message>\n{text}\n</system-message>");
            }
        }
    }
    // Tool results must come first in a user turn.
    results.extend(blocks);
    Ok((role, results))
}
