//! `ChatRequest` -> Ollama `/api/chat` body.

use serde_json::json;
use ybs_core::{
    ChatRequest, ErrorKind, LlmError, Message, Part, ReasoningEffort, ResponseFormat, Role,
};

use super::wire::{Options, OutCall, OutFunction, Request, WireMessage};
use crate::config::OllamaOptions;
use crate::images::{ImageSource, source};
use crate::text::{message_text, reasoning_text, temperature};
use crate::wire::{arguments_object, function_tools};

/// The streaming request body. Images must have been loaded.
///
/// `options.num_ctx` comes from the configured context size (Ollama otherwise silently cuts
/// prompts to its small default); the reasoning effort becomes `think` as a level, which
/// models with levels (gpt-oss) use and others take as their default thinking.
pub(crate) fn encode<'a>(
    request: &'a ChatRequest,
    model: &'a str,
    options: &'a OllamaOptions,
) -> Result<Request<'a>, LlmError> {
    crate::images::refuse_documents(request, "Ollama")?;
    let mut messages = Vec::new();
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(WireMessage::new("system", system.to_owned()));
    }
    for message in &request.messages {
        encode_message(message, &mut messages)?;
    }
    Ok(Request {
        model,
        messages,
        stream: true,
        tools: function_tools(&request.tools),
        format: request
            .response_format
            .as_ref()
            .and_then(|format| match format {
                ResponseFormat::Text => None,
                ResponseFormat::Json => Some(json!("json")),
                ResponseFormat::JsonSchema { schema, .. } => Some(schema.clone()),
            }),
        options: Options {
            num_ctx: options.num_ctx,
            temperature: request.temperature.map(temperature),
            top_p: request.top_p.map(temperature),
            seed: request.seed,
            num_predict: request.max_tokens,
            stop: &request.stop,
        },
        keep_alive: options.keep_alive.as_deref(),
        think: request.reasoning_effort.map(|effort| match effort {
            ReasoningEffort::Minimal | ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }),
    })
}

fn encode_message(message: &Message, out: &mut Vec<WireMessage>) -> Result<(), LlmError> {
    for part in &message.parts {
        if let Part::ToolResult(result) = part {
            let mut wire = WireMessage::new("tool", result.content.clone());
            wire.tool_name = result.name.clone();
            out.push(wire);
        }
    }
    let role = match message.role {
        Role::System => "system",
        Role::User | Role::Tool => "user",
        Role::Assistant => "assistant",
    };
    let mut wire = WireMessage::new(role, message_text(message));
    for part in &message.parts {
        match part {
            Part::Image(image) => match source(image)? {
                ImageSource::Base64 { data, .. } => wire.images.push(data.to_owned()),
                ImageSource::Url(url) => {
                    return Err(LlmError::new(
                        ErrorKind::BadRequest,
                        format!(
                            "Ollama takes images as data, not URLs: download {url} and attach the file"
                        ),
                    ));
                }
            },
            Part::ToolCall(call) if role == "assistant" => wire.tool_calls.push(OutCall {
                function: OutFunction {
                    name: call.name.clone(),
                    arguments: arguments_object(call),
                },
            }),
            _ => {}
        }
    }
    if role == "assistant" {
        let reasoning = reasoning_text(message);
        wire.thinking = (!reasoning.is_empty()).then_some(reasoning);
    }
    let empty = wire.content.is_empty() && wire.images.is_empty() && wire.tool_calls.is_empty();
    if !empty {
        out.push(wire);
    }
    Ok(())
}
