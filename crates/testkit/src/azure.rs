//! Azure OpenAI: OpenAI's Chat Completions at a deployment
//! (`POST /openai/deployments/{name}/chat/completions?api-version=...`) or at the resource's
//! v1 API (`POST /openai/v1/chat/completions`), and the Responses API at
//! `POST /openai/v1/responses`.
//!
//! Streams are OpenAI's, with what Azure adds: a first chunk with no choices carrying the
//! `prompt_filter_results` of its content filter. Errors of Azure's own layer (a missing
//! key, an unknown route or `api-version`, a rate limit) are `{"error": {"code": "401",
//! "message"}}` with the status as a string; errors of the model (context too long) are
//! OpenAI's, passed through. A request without an `api-key` header or a bearer token is
//! refused with 401 as Azure does.
//!
//! Checked against Microsoft's Azure OpenAI REST reference (data-plane inference,
//! `api-version` 2024-10-21, and the v1 API) and its content-filtering page: deployment and
//! v1 paths, the `api-key` header or `Authorization: Bearer` (Entra ID), the 404 of a
//! versioned route without `api-version`, the first stream chunk with empty `choices` and
//! `prompt_filter_results`, and the 401 body of a missing or wrong key. Found no difference.

use serde_json::{Value, json};

use crate::openai::OpenAi;
use crate::script::Turn;
use crate::wire::{CREATED, Ctx, Frame, Wire, sse_data};

/// The Azure Chat Completions wire format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AzureChat;

const OPENAI: OpenAi = OpenAi { openrouter: false };

/// What an Azure route is: a chat at a deployment (its name) or the v1 API (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Chat Completions; the deployment when the path names one.
    Chat { deployment: Option<String> },
    /// The Responses API.
    Responses,
    /// The model list.
    Models,
}

/// The Azure route of a path and query; `Err` with Azure's status and body when the route is
/// Azure's but the request is refused (no `api-version` where one is needed).
pub(crate) fn route(path: &str, query: Option<&str>) -> Option<Result<Route, (u16, Value)>> {
    let versioned = (query.unwrap_or_default().split('&')).any(|pair| {
        pair.strip_prefix("api-version=")
            .is_some_and(|v| !v.is_empty())
    });
    let needs_version = |route: Route| {
        if versioned {
            Ok(route)
        } else {
            Err((404, error_body(404, "Resource not found")))
        }
    };
    if let Some(rest) = path.strip_prefix("/openai/deployments/") {
        let name = rest.strip_suffix("/chat/completions")?;
        return Some(needs_version(Route::Chat {
            deployment: Some(name.to_owned()),
        }));
    }
    match path {
        "/openai/v1/chat/completions" => Some(Ok(Route::Chat { deployment: None })),
        "/openai/v1/responses" => Some(Ok(Route::Responses)),
        "/openai/v1/models" => Some(Ok(Route::Models)),
        "/openai/models" => Some(needs_version(Route::Models)),
        _ => None,
    }
}

/// The 401 of a request that carries neither an `api-key` nor a bearer token.
pub(crate) fn unauthenticated() -> (u16, Value) {
    (
        401,
        error_body(
            401,
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to \
             provide a valid key for an active subscription and use a correct regional API \
             endpoint for your resource.",
        ),
    )
}

/// Azure's own error shape: the status as a string code.
fn error_body(status: u16, message: &str) -> Value {
    json!({"error": {"code": status.to_string(), "message": message}})
}

impl Wire for AzureChat {
    fn stream_content_type(&self) -> &'static str {
        OPENAI.stream_content_type()
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let filter = json!({
            "id": "", "object": "", "created": 0, "model": "", "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
                "hate": {"filtered": false, "severity": "safe"},
                "self_harm": {"filtered": false, "severity": "safe"},
                "sexual": {"filtered": false, "severity": "safe"},
                "violence": {"filtered": false, "severity": "safe"},
            }}],
        });
        let mut frames = vec![Frame::other(sse_data(&filter))];
        frames.extend(OPENAI.stream(turn, ctx));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        let mut body = OPENAI.complete(turn, ctx);
        if let Some(map) = body.as_object_mut() {
            map.insert("created".to_owned(), json!(CREATED));
            map.insert("prompt_filter_results".to_owned(), json!([]));
        }
        body
    }

    fn malformed_frame(&self) -> String {
        OPENAI.malformed_frame()
    }

    fn stream_error(&self, message: &str, ctx: &Ctx) -> Vec<String> {
        OPENAI.stream_error(message, ctx)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        match status {
            401 | 403 | 404 | 429 | 500..=599 => error_body(status, message),
            _ => OPENAI.error_body(status, message),
        }
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        OPENAI.overflow(prompt_tokens, max_tokens)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn routes_need_a_version_except_the_v1_api() {
        assert_eq!(
            route(
                "/openai/deployments/prod/chat/completions",
                Some("api-version=2024-10-21")
            ),
            Some(Ok(Route::Chat {
                deployment: Some("prod".into())
            }))
        );
        let refused = route("/openai/deployments/prod/chat/completions", None).unwrap();
        assert_eq!(refused.unwrap_err().0, 404);
        assert_eq!(
            route("/openai/v1/responses", None),
            Some(Ok(Route::Responses))
        );
        assert_eq!(route("/v1/chat/completions", None), None);
    }

    #[test]
    fn a_stream_opens_with_the_prompt_filter() {
        let ctx = Ctx {
            model: "gpt-4.1".into(),
            seq: 1,
            include_usage: true,
        };
        let frames = AzureChat.stream(&Turn::text(["hi"]), &ctx);
        assert!(frames[0].text.contains("prompt_filter_results"));
        assert!(frames.last().unwrap().text.contains("[DONE]"));
        assert_eq!(
            AzureChat.error_body(429, "slow")["error"]["code"],
            json!("429")
        );
    }
}
