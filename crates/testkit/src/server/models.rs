//! The model lists of each wire format, and Ollama's model details.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::respond::json_response;
use super::state::Shared;
use crate::listing::Model;
use crate::wire::{CREATED, CREATED_AT};

/// Waits as long as the script's `models_delay_ms`.
pub(super) async fn models_delay(shared: &Shared) {
    let delay = shared.lock().models_delay_ms;
    if delay > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
    }
}

/// The OpenAI model list; with a window, each entry has llama.cpp's `meta.n_ctx`.
pub(super) fn openai_models(shared: &Shared) -> Value {
    let (models, window) = {
        let inner = shared.lock();
        (inner.models.clone(), inner.window)
    };
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            let mut entry =
                json!({"id": m.id, "object": "model", "created": CREATED, "owned_by": "fake-llm"});
            if let Some(window) = window {
                entry["meta"] = json!({"n_ctx": window.n_ctx, "n_ctx_train": m.context_length});
            }
            entry
        })
        .collect();
    json!({"object": "list", "data": data})
}

/// Gemini's `GET /v1beta/models`: every model with its input and output limits, all able
/// to chat and think (`outputTokenLimit` is the model's `max_completion_tokens`, else 8192).
pub(super) fn gemini_models(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let list: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "name": format!("models/{}", m.id),
                "version": "001",
                "displayName": m.display_name(),
                "description": format!("fake-llm's {}", m.id),
                "inputTokenLimit": m.context_length,
                "outputTokenLimit": m.max_completion_tokens.unwrap_or(8192),
                "supportedGenerationMethods": ["generateContent", "countTokens"],
                "temperature": 1.0,
                "maxTemperature": 2.0,
                "topP": 0.95,
                "topK": 64,
                "thinking": true,
            })
        })
        .collect();
    json!({"models": list})
}

/// llama.cpp's `GET /props`: the window of a request slot; 404 without a window.
pub(super) fn props(shared: &Shared) -> Response {
    match shared.lock().window {
        Some(window) => json_response(
            StatusCode::OK,
            &json!({"default_generation_settings": {"n_ctx": window.n_ctx}, "total_slots": 1}),
        ),
        None => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": "fake-llm: no window in the script, so no /props"}),
        ),
    }
}

/// llama.cpp's `POST /tokenize`: `{"tokens": [...]}`, as many as the window counts for the
/// `content`'s bytes (the ids mean nothing).
pub(super) fn tokenize(shared: &Shared, body: &Value) -> Response {
    let Some(window) = shared.lock().window else {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": "fake-llm: no window in the script, so no /tokenize"}),
        );
    };
    let content = body.get("content").and_then(Value::as_str).unwrap_or("");
    let count = window.tokens(content.len());
    let tokens: Vec<u64> = (0..count).collect();
    json_response(StatusCode::OK, &json!({ "tokens": tokens }))
}

/// llama.cpp's refusal of a chat request larger than the window, if `body` is.
pub(super) fn over_window(shared: &Shared, body: &Value) -> Option<Response> {
    let window = shared.lock().window?;
    let tokens = window.tokens(body.to_string().len());
    (tokens > window.n_ctx).then(|| {
        json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": {
                "code": 400,
                "message": format!(
                    "request ({tokens} tokens) exceeds the available context size ({} tokens), \
                     try increasing it",
                    window.n_ctx
                ),
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": window.n_ctx,
            }}),
        )
    })
}

/// LM Studio's own model entry (`/api/v0/models`).
fn lm_studio_entry(model: &Model) -> Value {
    let mut entry = json!({
        "id": model.id,
        "object": "model",
        "type": "llm",
        "publisher": "fake-llm",
        "arch": model.architecture,
        "compatibility_type": "gguf",
        "quantization": "Q4_K_M",
        "state": if model.loaded_context_length.is_some() { "loaded" } else { "not-loaded" },
        "max_context_length": model.context_length,
    });
    if let Some(loaded) = model.loaded_context_length {
        entry["loaded_context_length"] = json!(loaded);
    }
    entry
}

/// LM Studio's `GET /api/v0/models` (`rest` empty) and `GET /api/v0/models/{id}`; 404 when
/// the script is not LM Studio's or the model is unknown.
pub(super) fn lm_studio_models(shared: &Shared, rest: &str) -> Response {
    let (models, on) = {
        let inner = shared.lock();
        (inner.models.clone(), inner.lm_studio)
    };
    if !on {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": "fake-llm: not LM Studio, so no /api/v0/models"}),
        );
    }
    if rest.is_empty() {
        let data: Vec<Value> = models.iter().map(lm_studio_entry).collect();
        return json_response(StatusCode::OK, &json!({"object": "list", "data": data}));
    }
    match models.iter().find(|m| m.id == rest) {
        Some(model) => json_response(StatusCode::OK, &lm_studio_entry(model)),
        None => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("Model \"{rest}\" not found")}),
        ),
    }
}

/// The OpenRouter model list, with pricing and context lengths.
pub(super) fn openrouter_models(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "canonical_slug": m.id,
                "name": m.display_name(),
                "created": CREATED,
                "description": "A scripted fake model for tests.",
                "context_length": m.context_length,
                "architecture": {
                    "modality": "text->text",
                    "input_modalities": ["text"],
                    "output_modalities": ["text"],
                    "tokenizer": "Other",
                    "instruct_type": null,
                },
                "pricing": {
                    "prompt": m.prompt_price,
                    "completion": m.completion_price,
                    "request": "0",
                    "image": "0",
                    "web_search": "0",
                    "internal_reasoning": "0",
                },
                "top_provider": {
                    "context_length": m.context_length,
                    "max_completion_tokens": m.max_completion_tokens,
                    "is_moderated": false,
                },
                "per_request_limits": null,
                "supported_parameters": m.supported_parameters,
            })
        })
        .collect();
    json!({"data": data})
}

const FAKE_DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn ollama_details(model: &Model) -> Value {
    json!({
        "parent_model": "",
        "format": "gguf",
        "family": model.architecture,
        "families": [model.architecture],
        "parameter_size": "1B",
        "quantization_level": "Q4_K_M",
    })
}

/// Ollama's model list (`/api/tags`).
pub(super) fn ollama_tags(shared: &Shared) -> Value {
    let models = shared.lock().models.clone();
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({
                "name": m.id,
                "model": m.id,
                "modified_at": CREATED_AT,
                "size": 1_000_000_000u64,
                "digest": FAKE_DIGEST,
                "details": ollama_details(m),
            })
        })
        .collect();
    json!({"models": data})
}

/// Ollama's details of one model (`/api/show`), its context length included.
pub(super) fn ollama_show(shared: &Shared, body: &Value) -> Response {
    let wanted = body
        .get("model")
        .or_else(|| body.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let models = shared.lock().models.clone();
    let strip = |name: &str| name.strip_suffix(":latest").unwrap_or(name).to_owned();
    let Some(model) = models.iter().find(|m| strip(&m.id) == strip(wanted)) else {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("model '{wanted}' not found")}),
        );
    };
    let mut info = serde_json::Map::new();
    info.insert("general.architecture".to_owned(), json!(model.architecture));
    info.insert(
        "general.parameter_count".to_owned(),
        json!(1_000_000_000u64),
    );
    info.insert(
        format!("{}.context_length", model.architecture),
        json!(model.context_length),
    );
    json_response(
        StatusCode::OK,
        &json!({
            "modelfile": format!("# Modelfile generated by fake-llm\nFROM {}\n", model.id),
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": ollama_details(model),
            "model_info": Value::Object(info),
            "capabilities": ["completion", "tools"],
            "modified_at": CREATED_AT,
        }),
    )
}
