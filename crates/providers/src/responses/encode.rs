//! `ChatRequest` -> Responses body.

use std::path::Path;

use serde_json::{Map, Value, json};
use ybs_core::{ChatRequest, LlmError, Message, Part, ResponseFormat, Role, ToolChoice};

use super::wire::{Content, ContentPart, Item, Reasoning, Request, TextOptions, Tool, TypedItem};
use crate::images::{ImageSource, is_document, source};
use crate::openai::encode::is_openai_reasoning_model;
use crate::text::{message_text, part_text, temperature, thinking};
use crate::wire::with_extra;

/// The fields of a reasoning item the API takes back as input.
const REASONING_FIELDS: [&str; 5] = ["type", "id", "summary", "content", "encrypted_content"];

/// The streaming request body, with the request's pass-through fields merged in (a field
/// written here is never overridden by one). Images and documents must have been loaded.
///
/// The system prompt is `instructions`; later system messages stay `system` input messages.
/// Assistant turns go back as their reasoning items (as received, so a stateless request
/// keeps the model's reasoning: with `store: false` the encrypted content is asked for),
/// their text, and `function_call` items; tool results are `function_call_output` items.
pub(crate) fn encode(request: &ChatRequest, model: &str) -> Result<Value, LlmError> {
    let mut input = Vec::new();
    for message in &request.messages {
        encode_message(message, &mut input)?;
    }
    let mut tools: Vec<Tool<'_>> = request
        .tools
        .iter()
        .map(|tool| Tool::Function {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
        })
        .collect();
    if request.web_search {
        tools.push(Tool::WebSearch);
    }
    let reasoning_model = is_openai_reasoning_model(model);
    let body = Request {
        model,
        instructions: request.system.as_deref().filter(|s| !s.is_empty()),
        input,
        stream: true,
        store: request.store,
        previous_response_id: request.previous_response_id.as_deref(),
        tools,
        tool_choice: request.tool_choice.as_ref().map(tool_choice),
        temperature: request
            .temperature
            .filter(|_| !reasoning_model)
            .map(temperature),
        top_p: request.top_p.filter(|_| !reasoning_model).map(temperature),
        max_output_tokens: request.max_tokens,
        reasoning: request.reasoning_effort.map(|effort| Reasoning {
            effort: effort.as_str(),
            summary: "auto",
        }),
        text: request
            .response_format
            .as_ref()
            .and_then(text_format)
            .map(|format| TextOptions { format }),
        include: if request.store == Some(false) {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        prompt_cache_key: request.prompt_cache_key.as_deref(),
    };
    with_extra(body, request)
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
    }
}

fn text_format(format: &ResponseFormat) -> Option<Value> {
    match format {
        ResponseFormat::Text => None,
        ResponseFormat::Json => Some(json!({"type": "json_object"})),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => Some(json!({"type": "json_schema", "name": name, "schema": schema, "strict": strict})),
    }
}

fn encode_message(message: &Message, out: &mut Vec<Item>) -> Result<(), LlmError> {
    for part in &message.parts {
        if let Part::ToolResult(result) = part {
            out.push(Item::Typed(TypedItem::FunctionCallOutput {
                call_id: result.call_id.clone(),
                output: result.content.clone(),
            }));
        }
    }
    match message.role {
        Role::Assistant => assistant(message, out),
        Role::System => {
            let text = message_text(message);
            if !text.is_empty() {
                out.push(Item::Message {
                    role: "system",
                    content: Content::Text(text),
                });
            }
        }
        Role::User | Role::Tool => {
            if let Some(content) = user_content(message)? {
                out.push(Item::Message {
                    role: "user",
                    content,
                });
            }
        }
    }
    Ok(())
}

fn user_content(message: &Message) -> Result<Option<Content>, LlmError> {
    if !message
        .parts
        .iter()
        .any(|part| matches!(part, Part::Image(_)))
    {
        let text = message_text(message);
        return Ok((!text.is_empty()).then_some(Content::Text(text)));
    }
    let mut parts = Vec::new();
    for part in &message.parts {
        if let Part::Image(image) = part {
            let url = match source(image)? {
                ImageSource::Url(url) => url.to_owned(),
                ImageSource::Base64 { media_type, data } => {
                    format!("data:{media_type};base64,{data}")
                }
            };
            if is_document(image) {
                let filename = image
                    .path
                    .as_deref()
                    .and_then(|path| Path::new(path).file_name())
                    .and_then(|name| name.to_str())
                    .unwrap_or("document.pdf")
                    .to_owned();
                parts.push(ContentPart::File {
                    filename,
                    file_data: url,
                });
            } else {
                parts.push(ContentPart::Image { image_url: url });
            }
        } else if let Some(text) = part_text(part) {
            match parts.last_mut() {
                Some(ContentPart::Text { text: last }) => last.push_str(&text),
                _ => parts.push(ContentPart::Text {
                    text: text.into_owned(),
                }),
            }
        }
    }
    Ok(Some(Content::Parts(parts)))
}

fn assistant(message: &Message, out: &mut Vec<Item>) {
    for detail in thinking(message).flat_map(|thinking| thinking.details.iter().flatten()) {
        if detail.get("type").and_then(Value::as_str) == Some("reasoning")
            && let Value::Object(fields) = detail
        {
            let kept: Map<String, Value> = fields
                .iter()
                .filter(|(key, _)| REASONING_FIELDS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            out.push(Item::Raw(Value::Object(kept)));
        }
    }
    let text = message_text(message);
    if !text.is_empty() {
        out.push(Item::Message {
            role: "assistant",
            content: Content::Text(text),
        });
    }
    for call in message.tool_calls() {
        out.push(Item::Typed(TypedItem::FunctionCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments_text(),
        }));
    }
}
