//! `ChatRequest` -> the body of Bedrock's Converse and ConverseStream (the same for both;
//! the model is named by the URL).

use serde_json::{Map, Value, json};
use ybs_core::{
    ChatRequest, ErrorKind, LlmError, Message, Part, ReasoningEffort, Role, ToolChoice,
};

use crate::images::{self, source};
use crate::text::{part_text, temperature};
use crate::wire::arguments_object;

/// `maxTokens` when the request sets none; every model Bedrock serves allows this much.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// What a model on Bedrock takes beyond the common Converse fields, by its id: Claude
/// models think through `additionalModelRequestFields`; Claude and Nova models take cache
/// points, a forced tool choice and a tool result's `status`; the others (Llama,
/// Mistral...) refuse those fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ModelFeatures {
    pub thinking: bool,
    pub cache_points: bool,
    pub tool_choice_and_status: bool,
}

impl ModelFeatures {
    /// The features of the model id (a base model id, a cross-region inference profile
    /// `us.anthropic...`, or an ARN naming one).
    pub(crate) fn of(model: &str) -> Self {
        let model = model.to_ascii_lowercase();
        let claude = model.contains("anthropic.claude");
        ModelFeatures {
            thinking: claude,
            cache_points: claude || model.contains("amazon.nova"),
            tool_choice_and_status: claude || model.contains("amazon.nova"),
        }
    }
}

/// The thinking budget for a reasoning effort (Anthropic's minimum is 1024).
fn budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Minimal => 1024,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        ReasoningEffort::High => 24576,
    }
}

fn cache_point() -> Value {
    json!({"cachePoint": {"type": "default"}})
}

/// The request body. Images must have been loaded.
///
/// System messages before the first turn join the system prompt; a later one becomes user
/// text in `<system-message>`, as Converse has no such role. Consecutive messages of one
/// role are merged (Converse wants them alternating), tool results first in a user turn.
/// Reasoning goes back only with its signature or as redacted content. Cache points follow
/// the system prompt, the tools and the marked messages when the model takes them.
pub(crate) fn encode(request: &ChatRequest, model: &str) -> Result<Value, LlmError> {
    let features = ModelFeatures::of(model);
    let mut system: Vec<String> = (request.system.iter())
        .filter(|text| !text.is_empty())
        .cloned()
        .collect();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let marks = request.cache.as_ref().filter(|_| features.cache_points);
    let marks = marks.map(|marks| marks.within_limit(!request.tools.is_empty(), true));
    for (index, message) in request.messages.iter().enumerate() {
        if message.role == Role::System && messages.is_empty() {
            let text: String = message.parts.iter().filter_map(part_text).collect();
            if !text.is_empty() {
                system.push(text);
            }
            continue;
        }
        let (role, mut blocks) = blocks(message, features)?;
        if blocks.is_empty() {
            continue;
        }
        if marks
            .as_ref()
            .is_some_and(|marks| marks.messages.contains(&index))
        {
            blocks.push(cache_point());
        }
        match messages.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let mut body = Map::new();
    body.insert(
        "messages".to_owned(),
        (messages.into_iter())
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect(),
    );
    if !system.is_empty() {
        let mut blocks = vec![json!({"text": system.join("\n\n")})];
        if marks.as_ref().is_some_and(|marks| marks.system) {
            blocks.push(cache_point());
        }
        body.insert("system".to_owned(), Value::Array(blocks));
    }
    let thinking = request
        .reasoning_effort
        .filter(|_| features.thinking)
        .map(budget);
    let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(budget) = thinking
        && max_tokens <= budget
    {
        max_tokens += budget;
    }
    let mut inference = Map::new();
    inference.insert("maxTokens".to_owned(), json!(max_tokens));
    // Claude allows no temperature or top-p while it thinks.
    if thinking.is_none() {
        if let Some(value) = request.temperature {
            inference.insert("temperature".to_owned(), json!(temperature(value)));
        }
        if let Some(value) = request.top_p {
            inference.insert("topP".to_owned(), json!(temperature(value)));
        }
    }
    if !request.stop.is_empty() {
        inference.insert("stopSequences".to_owned(), json!(request.stop));
    }
    body.insert("inferenceConfig".to_owned(), Value::Object(inference));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = (request.tools.iter())
            .map(|tool| {
                json!({"toolSpec": {"name": tool.name, "description": tool.description,
                    "inputSchema": {"json": tool.parameters}}})
            })
            .collect();
        if marks.as_ref().is_some_and(|marks| marks.tools) {
            tools.push(cache_point());
        }
        let mut config = json!({"tools": tools});
        // Converse has no "none": the tools stay (earlier calls need them) and the model
        // chooses.
        let choice = match &request.tool_choice {
            _ if !features.tool_choice_and_status => None,
            Some(ToolChoice::Required) => Some(json!({"any": {}})),
            Some(ToolChoice::Tool(name)) => Some(json!({"tool": {"name": name}})),
            Some(ToolChoice::Auto) => Some(json!({"auto": {}})),
            Some(ToolChoice::None) | None => None,
        };
        if let (Some(choice), Some(fields)) = (choice, config.as_object_mut()) {
            fields.insert("toolChoice".to_owned(), choice);
        }
        body.insert("toolConfig".to_owned(), config);
    }
    if let Some(budget) = thinking {
        body.insert(
            "additionalModelRequestFields".to_owned(),
            json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
        );
    }
    Ok(Value::Object(body))
}

/// The role and content blocks of one message.
fn blocks(
    message: &Message,
    features: ModelFeatures,
) -> Result<(&'static str, Vec<Value>), LlmError> {
    let assistant = message.role == Role::Assistant;
    let role = if assistant { "assistant" } else { "user" };
    let mut results = Vec::new();
    let mut blocks: Vec<Value> = Vec::new();
    let mut documents = 0;
    for part in &message.parts {
        match part {
            Part::ToolResult(result) => {
                // Converse refuses an empty text block.
                let text = if result.content.is_empty() {
                    "(no output)"
                } else {
                    &result.content
                };
                let mut block = json!({"toolUseId": result.call_id, "content": [{"text": text}]});
                if let (true, Some(fields)) =
                    (features.tool_choice_and_status, block.as_object_mut())
                {
                    let status = if result.is_error { "error" } else { "success" };
                    fields.insert("status".to_owned(), json!(status));
                }
                results.push(json!({"toolResult": block}));
            }
            Part::ToolCall(call) if assistant => blocks.push(json!({"toolUse": {
                "toolUseId": call.id, "name": call.name, "input": arguments_object(call)}})),
            Part::Thinking(thinking) if assistant => {
                if let Some(data) = &thinking.data {
                    blocks.push(json!({"reasoningContent": {"redactedContent": data}}));
                } else if let Some(signature) = &thinking.signature {
                    blocks.push(json!({"reasoningContent": {"reasoningText": {
                        "text": thinking.content, "signature": signature}}}));
                }
            }
            Part::Image(image) => {
                let (media_type, data) = match source(image)? {
                    images::ImageSource::Base64 { media_type, data } => (media_type, data),
                    images::ImageSource::Url(url) => {
                        return Err(LlmError::new(
                            ErrorKind::BadRequest,
                            format!(
                                "Amazon Bedrock takes images as their bytes, not by URL ({url}): \
                                 save the image and attach the file"
                            ),
                        ));
                    }
                };
                let format = media_type.rsplit('/').next().unwrap_or(media_type);
                if images::is_document(image) {
                    documents += 1;
                    blocks.push(json!({"document": {"format": "pdf",
                        "name": format!("document {documents}"), "source": {"bytes": data}}}));
                } else {
                    let format = if format == "jpg" { "jpeg" } else { format };
                    blocks.push(json!({"image": {"format": format, "source": {"bytes": data}}}));
                }
            }
            other => {
                if let Some(text) = part_text(other).filter(|text| !text.is_empty()) {
                    match blocks.last_mut().and_then(|last| last.get_mut("text")) {
                        Some(Value::String(last)) => last.push_str(&text),
                        _ => blocks.push(json!({"text": text})),
                    }
                }
            }
        }
    }
    if message.role == Role::System {
        for block in &mut blocks {
            if let Some(Value::String(text)) = block.get_mut("text") {
                *text = format!("<system-message>\n{text}\n</system-message>");
            }
        }
    }
    results.extend(blocks);
    Ok((role, results))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ybs_core::{CacheBreakpoints, CacheTtl, Thinking, ToolCall, ToolResult, ToolSpec};

    fn conversation() -> ChatRequest {
        let mut call = ToolCall::new("tooluse_1", "read_file", json!({"path": "a"}));
        call.arguments_error = None;
        ChatRequest {
            system: Some("Be brief.".into()),
            messages: vec![
                Message::user("What is in a?"),
                Message::new(
                    Role::Assistant,
                    vec![
                        Part::Thinking(Thinking {
                            content: "Read it.".into(),
                            signature: Some("sig".into()),
                            ..Thinking::default()
                        }),
                        Part::ToolCall(call),
                    ],
                ),
                Message::new(
                    Role::Tool,
                    vec![Part::ToolResult(ToolResult {
                        call_id: "tooluse_1".into(),
                        name: Some("read_file".into()),
                        content: "42".into(),
                        is_error: false,
                    })],
                ),
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file".into(),
                parameters: json!({"type": "object"}),
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn a_conversation_with_a_tool_call_is_written_as_converse_takes_it() {
        let body = encode(
            &conversation(),
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        )
        .unwrap();
        assert_eq!(body["system"], json!([{"text": "Be brief."}]));
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"reasoningContent": {"reasoningText": {"text": "Read it.", "signature": "sig"}}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "read_file", "input": {"path": "a"}}}
            ])
        );
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1",
                "content": [{"text": "42"}], "status": "success"}}]})
        );
        assert_eq!(
            body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"],
            json!({"json": {"type": "object"}})
        );
        assert_eq!(body["inferenceConfig"]["maxTokens"], 4096);
        assert!(body.get("additionalModelRequestFields").is_none());
    }

    #[test]
    fn claude_thinks_and_caches_where_llama_does_neither() {
        let mut request = conversation();
        request.reasoning_effort = Some(ReasoningEffort::Low);
        request.temperature = Some(0.5);
        request.cache = Some(CacheBreakpoints {
            tools: true,
            system: true,
            messages: vec![0],
            ttl: CacheTtl::FiveMinutes,
        });
        let claude = encode(&request, "anthropic.claude-sonnet-4-20250514-v1:0").unwrap();
        assert_eq!(
            claude["additionalModelRequestFields"],
            json!({"thinking": {"type": "enabled", "budget_tokens": 2048}})
        );
        assert!(claude["inferenceConfig"].get("temperature").is_none());
        assert_eq!(claude["system"][1], cache_point());
        assert_eq!(claude["toolConfig"]["tools"][1], cache_point());
        assert_eq!(claude["messages"][0]["content"][1], cache_point());

        request.tool_choice = Some(ToolChoice::Required);
        let llama = encode(&request, "meta.llama3-3-70b-instruct-v1:0").unwrap();
        assert!(llama.get("additionalModelRequestFields").is_none());
        assert!(llama["toolConfig"].get("toolChoice").is_none());
        assert!(
            llama["messages"][2]["content"][0]["toolResult"]
                .get("status")
                .is_none()
        );
        assert_eq!(llama["inferenceConfig"]["temperature"], 0.5);
        assert!(!llama.to_string().contains("cachePoint"));
    }
}
