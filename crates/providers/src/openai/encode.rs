//! `ChatRequest` -> OpenAI chat-completions body, in the dialect of the preset.

use serde_json::{Value, json};
use ybs_core::{
    ChatRequest, DataCollection, LlmError, Message, Part, ResponseFormat, Role, ToolChoice,
};

use super::wire::{
    CallFunction, Content, ContentPart, ImageUrl, Reasoning, Request, StreamOptions, WireMessage,
    WireToolCall,
};
use crate::config::{OpenRouterOptions, ProviderKind};
use crate::images::{ImageSource, source};
use crate::text::{message_text, part_text, reasoning_text, temperature, thinking};
use crate::wire::{CacheControl, function_tools};

/// How a backend wants earlier reasoning sent back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReasoningBack {
    /// It does not take it (OpenAI).
    Never,
    /// As `reasoning_details` (or `reasoning` text) on the assistant message (OpenRouter).
    Details,
    /// As `reasoning_content` (DeepSeek, vLLM, llama.cpp, LM Studio...).
    Content,
}

fn reasoning_back(kind: ProviderKind) -> ReasoningBack {
    match kind {
        ProviderKind::OpenAi => ReasoningBack::Never,
        ProviderKind::OpenRouter => ReasoningBack::Details,
        _ => ReasoningBack::Content,
    }
}

/// The streaming request body for `kind`. Images must have been loaded.
pub(crate) fn encode<'a>(
    request: &'a ChatRequest,
    model: &'a str,
    kind: ProviderKind,
    openrouter: &OpenRouterOptions,
) -> Result<Request<'a>, LlmError> {
    crate::images::refuse_documents(request, kind.display_name())?;
    let openrouter_kind = kind == ProviderKind::OpenRouter;
    let system = request.system.as_deref().filter(|s| !s.is_empty());
    // OpenRouter passes cache breakpoints on content parts through to Anthropic models;
    // OpenAI and DeepSeek cache by themselves.
    let marks = request
        .cache
        .as_ref()
        .filter(|_| openrouter_kind && is_anthropic_model(model))
        .map(|marks| marks.within_limit(!request.tools.is_empty(), system.is_some()));
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(WireMessage::new(
            "system",
            Some(Content::Text(system.to_owned())),
        ));
        if let Some(marks) = marks.as_ref().filter(|marks| marks.system) {
            mark_last_part(&mut messages[0], CacheControl::new(marks.ttl));
        }
    }
    for (index, message) in request.messages.iter().enumerate() {
        let before = messages.len();
        encode_message(message, reasoning_back(kind), &mut messages)?;
        if let Some(marks) = marks
            .as_ref()
            .filter(|marks| marks.messages.contains(&index))
            && messages.len() > before
            && let Some(last) = messages.last_mut()
        {
            mark_last_part(last, CacheControl::new(marks.ttl));
        }
    }
    let effort = request.reasoning_effort.map(|effort| effort.as_str());
    let mut tools = function_tools(&request.tools);
    if let Some(marks) = marks.as_ref().filter(|marks| marks.tools)
        && let Some(last) = tools.last_mut()
    {
        last.cache_control = Some(CacheControl::new(marks.ttl));
    }
    // OpenRouter's hosted web search: the model's `:online` variant.
    let sent_model = if openrouter_kind && request.web_search && !model.ends_with(":online") {
        std::borrow::Cow::Owned(format!("{model}:online"))
    } else {
        std::borrow::Cow::Borrowed(model)
    };
    Ok(Request {
        model: sent_model,
        messages,
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        tools,
        tool_choice: request.tool_choice.as_ref().map(tool_choice),
        temperature: request
            .temperature
            .filter(|_| !(kind == ProviderKind::OpenAi && is_openai_reasoning_model(model)))
            .map(temperature),
        top_p: request
            .top_p
            .filter(|_| !(kind == ProviderKind::OpenAi && is_openai_reasoning_model(model)))
            .map(temperature),
        seed: request.seed,
        max_tokens: request.max_tokens.filter(|_| kind != ProviderKind::OpenAi),
        max_completion_tokens: request.max_tokens.filter(|_| kind == ProviderKind::OpenAi),
        reasoning_effort: effort.filter(|_| !openrouter_kind && kind != ProviderKind::DeepSeek),
        reasoning: effort
            .filter(|_| openrouter_kind)
            .map(|effort| Reasoning { effort }),
        stop: &request.stop,
        response_format: request.response_format.as_ref().and_then(response_format),
        prompt_cache_key: request
            .prompt_cache_key
            .as_deref()
            .filter(|_| matches!(kind, ProviderKind::OpenAi | ProviderKind::OpenRouter)),
        provider: openrouter_kind.then(|| routing(request, openrouter)),
    })
}

/// An Anthropic model as OpenRouter names it (`anthropic/claude-sonnet-4.5`).
fn is_anthropic_model(model: &str) -> bool {
    model.starts_with("anthropic/")
}

/// Turns the message's text into content parts and puts the breakpoint on the last one; a
/// message without text (only tool calls) is left as it is.
fn mark_last_part(message: &mut WireMessage, control: CacheControl) {
    let mut parts = match message.content.take() {
        Some(Content::Text(text)) => vec![ContentPart::Text {
            text,
            cache_control: None,
        }],
        Some(Content::Parts(parts)) => parts,
        None => return,
    };
    if let Some(ContentPart::Text { cache_control, .. }) = parts
        .iter_mut()
        .rev()
        .find(|part| matches!(part, ContentPart::Text { .. }))
    {
        *cache_control = Some(control);
    }
    message.content = Some(Content::Parts(parts));
}

/// OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) accept no temperature but the
/// default; sending one is a 400, so it is left out for them.
pub(crate) fn is_openai_reasoning_model(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    let o_series = model.starts_with('o') && model[1..].starts_with(|c: char| c.is_ascii_digit());
    o_series || (model.starts_with("gpt-5") && !model.starts_with("gpt-5-chat"))
}

/// OpenRouter's `provider` object: the request's preferences plus the account's privacy
/// settings (`data_collection: "deny"` unless training is allowed, `zdr: true` when data
/// retention is not).
fn routing(request: &ChatRequest, options: &OpenRouterOptions) -> ybs_core::ProviderRouting {
    let mut routing = request.routing.clone().unwrap_or_default();
    if !options.allow_training {
        routing.data_collection = Some(DataCollection::Deny);
    }
    if !options.allow_data_retention {
        routing.zdr = Some(true);
    }
    routing
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

fn response_format(format: &ResponseFormat) -> Option<Value> {
    match format {
        ResponseFormat::Text => None,
        ResponseFormat::Json => Some(json!({"type": "json_object"})),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => Some(json!({
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": strict},
        })),
    }
}

fn encode_message(
    message: &Message,
    back: ReasoningBack,
    out: &mut Vec<WireMessage>,
) -> Result<(), LlmError> {
    // Tool results become `role: tool` messages wherever they sit.
    for part in &message.parts {
        if let Part::ToolResult(result) = part {
            let mut wire = WireMessage::new("tool", Some(Content::Text(result.content.clone())));
            wire.tool_call_id = Some(result.call_id.clone());
            out.push(wire);
        }
    }
    match message.role {
        Role::Assistant => out.extend(assistant(message, back)),
        Role::System => {
            let text = message_text(message);
            if !text.is_empty() {
                out.push(WireMessage::new("system", Some(Content::Text(text))));
            }
        }
        Role::User | Role::Tool => {
            if let Some(content) = user_content(message)? {
                out.push(WireMessage::new("user", Some(content)));
            }
        }
    }
    Ok(())
}

fn user_content(message: &Message) -> Result<Option<Content>, LlmError> {
    let has_images = message
        .parts
        .iter()
        .any(|part| matches!(part, Part::Image(_)));
    if !has_images {
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
            parts.push(ContentPart::ImageUrl {
                image_url: ImageUrl { url },
            });
        } else if let Some(text) = part_text(part) {
            match parts.last_mut() {
                Some(ContentPart::Text { text: last, .. }) => last.push_str(&text),
                _ => parts.push(ContentPart::Text {
                    text: text.into_owned(),
                    cache_control: None,
                }),
            }
        }
    }
    Ok(Some(Content::Parts(parts)))
}

fn assistant(message: &Message, back: ReasoningBack) -> Option<WireMessage> {
    let text = message_text(message);
    let tool_calls: Vec<WireToolCall> = message
        .tool_calls()
        .map(|call| WireToolCall {
            id: call.id.clone(),
            kind: "function",
            function: CallFunction {
                name: call.name.clone(),
                arguments: call.arguments_text(),
            },
        })
        .collect();
    if text.is_empty() && tool_calls.is_empty() {
        return None;
    }
    let mut wire = WireMessage::new(
        "assistant",
        (!text.is_empty()).then_some(Content::Text(text)),
    );
    wire.tool_calls = tool_calls;
    let reasoning = reasoning_text(message);
    match back {
        ReasoningBack::Never => {}
        ReasoningBack::Content => {
            wire.reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
        }
        ReasoningBack::Details => {
            let details: Vec<Value> = thinking(message)
                .flat_map(|thinking| thinking.details.iter().flatten().cloned())
                .collect();
            if details.is_empty() {
                wire.reasoning = (!reasoning.is_empty()).then_some(reasoning);
            } else {
                wire.reasoning_details = Some(details);
            }
        }
    }
    Some(wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ybs_core::Message;

    #[test]
    fn openai_reasoning_models_get_no_temperature() {
        for model in ["o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini"] {
            assert!(is_openai_reasoning_model(model), "{model}");
        }
        for model in ["gpt-4o", "gpt-4.1", "gpt-5-chat-latest", "omni-moderation"] {
            assert!(!is_openai_reasoning_model(model), "{model}");
        }
        let mut request = ChatRequest::new("o3", vec![Message::user("hi")]);
        request.temperature = Some(0.7);
        let options = OpenRouterOptions::default();
        let body = encode(&request, "o3", ProviderKind::OpenAi, &options).unwrap();
        assert_eq!(body.temperature, None);
        let body = encode(&request, "gpt-4o", ProviderKind::OpenAi, &options).unwrap();
        assert_eq!(body.temperature, Some(0.7));
        // Other backends decide for themselves.
        let body = encode(&request, "o3", ProviderKind::OpenRouter, &options).unwrap();
        assert_eq!(body.temperature, Some(0.7));
    }
}
