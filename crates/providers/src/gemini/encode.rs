//! `ChatRequest` -> Gemini `generateContent` body.

use std::collections::HashMap;

use serde_json::{Value, json};
use ybs_core::{
    ChatRequest, LlmError, Message, Part, ReasoningEffort, ResponseFormat, Role, ToolChoice,
};

use super::wire::{
    Blob, Content, FileData, FunctionCall, FunctionResponse, GenerationConfig, Request,
    ThinkingConfig, WirePart,
};
use crate::images::{self, source};
use crate::text::{part_text, temperature, thinking};
use crate::wire::arguments_object;

/// The prefix of tool call ids this crate makes up for calls the API sent without one; they
/// are not sent back as ids.
pub(crate) const MINTED_CALL_ID: &str = "gemini-call-";

/// The `format` of a reasoning detail that carries a Gemini thought signature (OpenRouter
/// names Gemini's signatures so too, so either source's signatures go back).
pub(crate) const SIGNATURE_FORMAT: &str = "google-gemini-v1";

/// What Gemini 3 takes in place of a signature on a function call it did not make (a
/// conversation begun with another provider): its validation of the call is skipped.
const NO_SIGNATURE: &str = "skip_thought_signature_validator";

/// The thinking budget of a reasoning effort (Gemini 2.5).
fn budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Minimal => 512,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        ReasoningEffort::High => 24576,
    }
}

/// Gemini 3 is asked how hard to think by level rather than by budget.
fn is_gemini_3(model: &str) -> bool {
    model.contains("gemini-3")
}

/// Models that think by default, whose thought summaries are asked for.
fn thinks(model: &str) -> bool {
    model.contains("gemini-2.5") || is_gemini_3(model)
}

/// The request body. Images must have been loaded.
///
/// System messages before the first turn join the system instruction; a later one becomes
/// user text in `<system-message>`, as the API has no such role. Consecutive turns of one
/// role are merged. Tool results become `functionResponse` parts named after their call.
/// Gemini's thought signatures (kept as reasoning details) go back on the part they came
/// with; thought summaries are not sent back. Tool schemas and JSON response schemas go as
/// JSON Schema (`parametersJsonSchema`, `responseJsonSchema`).
pub(crate) fn encode(request: &ChatRequest, model: &str) -> Result<Request, LlmError> {
    let mut system: Vec<String> = (request.system.iter())
        .filter(|text| !text.is_empty())
        .cloned()
        .collect();
    let mut contents: Vec<Content> = Vec::new();
    let mut call_names: HashMap<String, String> = HashMap::new();
    for message in &request.messages {
        if message.role == Role::System && contents.is_empty() {
            let text: String = message.parts.iter().filter_map(part_text).collect();
            if !text.is_empty() {
                system.push(text);
            }
            continue;
        }
        let (role, parts) = parts(message, model, &mut call_names)?;
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(last) if last.role == Some(role) => last.parts.extend(parts),
            _ => contents.push(Content {
                role: Some(role),
                parts,
            }),
        }
    }
    let system_instruction = (!system.is_empty()).then(|| Content {
        role: None,
        parts: vec![WirePart {
            text: Some(system.join("\n\n")),
            ..WirePart::default()
        }],
    });
    let declarations: Vec<Value> = (request.tools.iter())
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "parametersJsonSchema": tool.parameters,
            })
        })
        .collect();
    let tools = if declarations.is_empty() {
        Vec::new()
    } else {
        vec![json!({"functionDeclarations": declarations})]
    };
    let (response_mime_type, response_json_schema) = match &request.response_format {
        Some(ResponseFormat::Json) => (Some("application/json"), None),
        Some(ResponseFormat::JsonSchema { schema, .. }) => {
            (Some("application/json"), Some(schema.clone()))
        }
        Some(ResponseFormat::Text) | None => (None, None),
    };
    let thinking_config = match request.reasoning_effort {
        Some(effort) if is_gemini_3(model) => Some(ThinkingConfig {
            include_thoughts: true,
            thinking_budget: None,
            thinking_level: Some(match effort {
                ReasoningEffort::Minimal | ReasoningEffort::Low => "low",
                ReasoningEffort::Medium | ReasoningEffort::High => "high",
            }),
        }),
        Some(effort) => Some(ThinkingConfig {
            include_thoughts: true,
            thinking_budget: Some(budget(effort)),
            thinking_level: None,
        }),
        None => thinks(model).then_some(ThinkingConfig {
            include_thoughts: true,
            thinking_budget: None,
            thinking_level: None,
        }),
    };
    Ok(Request {
        contents,
        system_instruction,
        tool_config: (request.tool_choice.as_ref())
            .filter(|_| !tools.is_empty())
            .map(tool_config),
        tools,
        generation_config: GenerationConfig {
            temperature: request.temperature.map(temperature),
            top_p: request.top_p.map(temperature),
            max_output_tokens: request.max_tokens,
            stop_sequences: request.stop.clone(),
            seed: request.seed,
            response_mime_type,
            response_json_schema,
            thinking_config,
        },
    })
}

fn tool_config(choice: &ToolChoice) -> Value {
    let config = match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    };
    json!({"functionCallingConfig": config})
}

/// The Gemini thought signatures of a message: by the id of the call they came with, and
/// the one that came with text (`None` key).
fn signatures(message: &Message) -> HashMap<Option<String>, String> {
    let mut found = HashMap::new();
    for detail in thinking(message).flat_map(|thinking| thinking.details.iter().flatten()) {
        if detail.get("format").and_then(Value::as_str) != Some(SIGNATURE_FORMAT) {
            continue;
        }
        if let Some(data) = detail.get("data").and_then(Value::as_str) {
            let id = detail.get("id").and_then(Value::as_str).map(str::to_owned);
            found.entry(id).or_insert_with(|| data.to_owned());
        }
    }
    found
}

fn parts(
    message: &Message,
    model: &str,
    call_names: &mut HashMap<String, String>,
) -> Result<(&'static str, Vec<WirePart>), LlmError> {
    let role = match message.role {
        Role::Assistant => "model",
        Role::User | Role::Tool | Role::System => "user",
    };
    let mut signatures = if role == "model" {
        signatures(message)
    } else {
        HashMap::new()
    };
    let mut results = Vec::new();
    let mut parts: Vec<WirePart> = Vec::new();
    let mut first_call = true;
    for part in &message.parts {
        match part {
            Part::ToolResult(result) => {
                let name = (result.name.clone())
                    .or_else(|| call_names.get(&result.call_id).cloned())
                    .unwrap_or_default();
                let key = if result.is_error { "error" } else { "result" };
                results.push(WirePart {
                    function_response: Some(FunctionResponse {
                        id: sent_id(&result.call_id),
                        name,
                        response: json!({ key: result.content }),
                    }),
                    ..WirePart::default()
                });
            }
            Part::ToolCall(call) if role == "model" => {
                call_names.insert(call.id.clone(), call.name.clone());
                let mut signature = signatures.remove(&Some(call.id.clone()));
                if signature.is_none() && first_call && is_gemini_3(model) {
                    signature = Some(NO_SIGNATURE.to_owned());
                }
                first_call = false;
                parts.push(WirePart {
                    function_call: Some(FunctionCall {
                        id: sent_id(&call.id),
                        name: call.name.clone(),
                        args: arguments_object(call),
                    }),
                    thought_signature: signature,
                    ..WirePart::default()
                });
            }
            Part::Image(image) => {
                let media_type = image.media_type.clone();
                parts.push(match source(image)? {
                    images::ImageSource::Url(url) => WirePart {
                        file_data: Some(FileData {
                            mime_type: media_type,
                            file_uri: url.to_owned(),
                        }),
                        ..WirePart::default()
                    },
                    images::ImageSource::Base64 { media_type, data } => WirePart {
                        inline_data: Some(Blob {
                            mime_type: media_type.to_owned(),
                            data: data.to_owned(),
                        }),
                        ..WirePart::default()
                    },
                });
            }
            Part::Thinking(_) => {}
            other => {
                let Some(text) = part_text(other).filter(|text| !text.is_empty()) else {
                    continue;
                };
                match parts.last_mut() {
                    Some(WirePart {
                        text: Some(last),
                        thought: None,
                        ..
                    }) => last.push_str(&text),
                    _ => parts.push(WirePart {
                        text: Some(text.into_owned()),
                        ..WirePart::default()
                    }),
                }
            }
        }
    }
    if let Some(signature) = signatures.remove(&None)
        && let Some(part) = parts.iter_mut().find(|part| part.text.is_some())
    {
        part.thought_signature = Some(signature);
    }
    if message.role == Role::System {
        for part in &mut parts {
            if let Some(text) = &mut part.text {
                *text = format!("<system-message>\n{text}\n</system-message>");
            }
        }
    }
    // Function responses answer the calls of the turn before, so they come first.
    results.extend(parts);
    Ok((role, results))
}

/// The id sent for a call: the API's own, not one made up for a call that had none.
fn sent_id(id: &str) -> Option<String> {
    (!id.is_empty() && !id.starts_with(MINTED_CALL_ID)).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ybs_core::{Thinking, ToolCall, ToolResult, ToolSpec};

    fn body(request: &ChatRequest, model: &str) -> Value {
        serde_json::to_value(encode(request, model).unwrap()).unwrap()
    }

    fn signed_call_turn() -> Message {
        let detail = json!({"type": "reasoning.encrypted", "format": SIGNATURE_FORMAT,
            "id": "gemini-call-0", "data": "c2ln"});
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking(Thinking {
                    content: "I should look.".into(),
                    details: Some(vec![detail]),
                    ..Thinking::default()
                }),
                Part::text("Looking."),
                Part::ToolCall(ToolCall::new(
                    "gemini-call-0",
                    "read_file",
                    json!({"path": "a.rs"}),
                )),
            ],
            ..Message::user("")
        }
    }

    #[test]
    fn a_tool_round_trip_keeps_names_and_signatures() {
        let result = Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: "gemini-call-0".into(),
                name: None,
                content: "fn main() {}".into(),
                is_error: false,
            })],
            ..Message::user("")
        };
        let mut request = ChatRequest::new(
            "",
            vec![
                Message::system("Be brief."),
                Message::user("Read a.rs"),
                signed_call_turn(),
                result,
            ],
        );
        request.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "additionalProperties": false}),
        }];
        request.tool_choice = Some(ToolChoice::Tool("read_file".into()));
        let body = body(&request, "gemini-2.5-flash");
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "Read a.rs"}]},
                {"role": "model", "parts": [
                    {"text": "Looking."},
                    {"functionCall": {"name": "read_file", "args": {"path": "a.rs"}},
                     "thoughtSignature": "c2ln"},
                ]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                    "response": {"result": "fn main() {}"}}}]},
            ])
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
            json!({"type": "object", "additionalProperties": false})
        );
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}})
        );
        assert_eq!(
            body["generationConfig"]["thinkingConfig"],
            json!({"includeThoughts": true})
        );
    }

    #[test]
    fn reasoning_effort_is_a_budget_or_a_level() {
        let mut request = ChatRequest::new("", vec![Message::user("hi")]);
        request.reasoning_effort = Some(ReasoningEffort::High);
        request.max_tokens = Some(100);
        request.temperature = Some(0.2);
        let flash = body(&request, "gemini-2.5-flash");
        assert_eq!(
            flash["generationConfig"],
            json!({"temperature": 0.2, "maxOutputTokens": 100,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 24576}})
        );
        let three = body(&request, "gemini-3-pro-preview");
        assert_eq!(
            three["generationConfig"]["thinkingConfig"],
            json!({"includeThoughts": true, "thinkingLevel": "high"})
        );
        request.reasoning_effort = None;
        let old = body(&request, "gemini-2.0-flash");
        assert!(old["generationConfig"].get("thinkingConfig").is_none());
    }

    #[test]
    fn a_call_from_another_provider_skips_gemini_3_validation() {
        let mut turn = signed_call_turn();
        turn.parts.remove(0);
        let request = ChatRequest::new("", vec![Message::user("go"), turn]);
        let body = body(&request, "gemini-3-pro-preview");
        assert_eq!(
            body["contents"][1]["parts"][1]["thoughtSignature"],
            NO_SIGNATURE
        );
    }
}
