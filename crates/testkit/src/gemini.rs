//! Google's Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and
//! `:generateContent`, `GET /v1beta/models`).
//!
//! Streams are SSE frames with only a `data:` line, each a whole `GenerateContentResponse`:
//! thought summaries (`"thought": true` parts), text parts, then each function call whole in
//! one part (no call ids, as the Gemini API sends them; the turn's signature as the first
//! call's `thoughtSignature`, or the last text's when there is no call), and a last chunk
//! with the `finishReason` (`STOP` for tool calls too) and `usageMetadata`. There is no
//! terminator: the body just ends. Errors are Google's `{"error": {"code", "message",
//! "status", "details"}}`; a rate limit says when to retry in a `google.rpc.RetryInfo`
//! detail, not in a header.
//!
//! Checked against Google's Gemini API reference (ai.google.dev: `models.generateContent` and
//! `models.streamGenerateContent`, `GenerateContentResponse` with `UsageMetadata` and its
//! `cachedContentTokenCount` and `thoughtsTokenCount`, `models.list`, the thinking and
//! thought-signature guides, and the API's error codes page).

use serde_json::{Value, json};

use crate::script::{FinishReason, Turn, Usage};
use crate::wire::{Ctx, Frame, Wire, sse_data};

/// The Gemini API wire format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gemini;

/// The model and method of a Gemini content path (`/v1beta/models/M:streamGenerateContent`):
/// `Some((model, streams))`.
pub(crate) fn content_path(path: &str) -> Option<(String, bool)> {
    let rest = ["/v1beta/models/", "/v1/models/"]
        .iter()
        .find_map(|prefix| path.strip_prefix(prefix))?;
    let (model, method) = rest.rsplit_once(':')?;
    match method {
        "streamGenerateContent" => Some((model.to_owned(), true)),
        "generateContent" => Some((model.to_owned(), false)),
        _ => None,
    }
}

fn finish_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop | FinishReason::ToolCalls => "STOP",
        FinishReason::Length => "MAX_TOKENS",
        FinishReason::ContentFilter => "SAFETY",
    }
}

fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

fn usage_metadata(usage: &Usage) -> Value {
    let candidates = usage
        .completion_tokens
        .saturating_sub(usage.reasoning_tokens);
    let mut metadata = json!({
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": candidates,
        "totalTokenCount": usage.prompt_tokens + usage.completion_tokens,
    });
    if let Some(map) = metadata.as_object_mut() {
        if usage.cached_tokens > 0 {
            map.insert(
                "cachedContentTokenCount".to_owned(),
                json!(usage.cached_tokens),
            );
        }
        if usage.reasoning_tokens > 0 {
            map.insert(
                "thoughtsTokenCount".to_owned(),
                json!(usage.reasoning_tokens),
            );
        }
    }
    metadata
}

/// The parts of a turn, in order, each with whether it carries scripted content.
fn parts(turn: &Turn) -> Vec<Value> {
    let mut parts: Vec<Value> = (turn.thinking.iter())
        .map(|chunk| json!({"text": chunk, "thought": true}))
        .collect();
    parts.extend(turn.text.iter().map(|chunk| json!({"text": chunk})));
    let text_end = parts.len();
    parts.extend(
        turn.tool_calls.iter().map(
            |call| json!({"functionCall": {"name": call.name, "args": call.arguments_value()}}),
        ),
    );
    if let Some(signature) = &turn.signature {
        let signed = if turn.tool_calls.is_empty() {
            text_end.checked_sub(1)
        } else {
            Some(text_end)
        };
        if let Some(map) = signed
            .and_then(|index| parts.get_mut(index))
            .and_then(Value::as_object_mut)
        {
            map.insert("thoughtSignature".to_owned(), json!(signature));
        }
    }
    parts
}

fn response(ctx: &Ctx, parts: Vec<Value>, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut response = json!({
        "modelVersion": ctx.model,
        "responseId": format!("fake-response-{}", ctx.seq),
    });
    if let (Some(finish), Some(map)) = (finish, candidate.as_object_mut()) {
        map.insert("finishReason".to_owned(), json!(finish));
    }
    if let Some(map) = response.as_object_mut() {
        map.insert("candidates".to_owned(), json!([candidate]));
        if let Some(usage) = usage {
            map.insert("usageMetadata".to_owned(), usage);
        }
    }
    response
}

impl Wire for Gemini {
    fn stream_content_type(&self) -> &'static str {
        "text/event-stream"
    }

    fn stream(&self, turn: &Turn, ctx: &Ctx) -> Vec<Frame> {
        let usage = turn.usage_or_default();
        let mut frames: Vec<Frame> = parts(turn)
            .into_iter()
            .map(|part| Frame::delta(sse_data(&response(ctx, vec![part], None, None))))
            .collect();
        frames.push(Frame::other(sse_data(&response(
            ctx,
            vec![json!({"text": ""})],
            Some(finish_reason(turn.finish_reason())),
            Some(usage_metadata(&usage)),
        ))));
        frames
    }

    fn complete(&self, turn: &Turn, ctx: &Ctx) -> Value {
        response(
            ctx,
            parts(turn),
            Some(finish_reason(turn.finish_reason())),
            Some(usage_metadata(&turn.usage_or_default())),
        )
    }

    fn malformed_frame(&self) -> String {
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\":\n\n".to_owned()
    }

    fn stream_error(&self, message: &str, _ctx: &Ctx) -> Vec<String> {
        vec![sse_data(&self.error_body(503, message))]
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        json!({"error": {"code": status, "message": message, "status": status_name(status)}})
    }

    fn with_retry_info(&self, mut body: Value, retry_after: &str) -> Option<Value> {
        let seconds: f64 = retry_after.trim().parse().ok()?;
        let detail = json!({
            "@type": "type.googleapis.com/google.rpc.RetryInfo",
            "retryDelay": format!("{seconds}s"),
        });
        body.get_mut("error")?
            .as_object_mut()?
            .insert("details".to_owned(), json!([detail]));
        Some(body)
    }

    fn overflow(&self, prompt_tokens: u64, max_tokens: u64) -> (u16, Value) {
        (
            400,
            self.error_body(
                400,
                &format!(
                    "The input token count ({prompt_tokens}) exceeds the maximum number of \
                     tokens allowed ({max_tokens})."
                ),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::script::ToolCall;

    fn ctx() -> Ctx {
        Ctx {
            model: "gemini-2.5-flash".into(),
            seq: 1,
            include_usage: false,
        }
    }

    #[test]
    fn paths_name_the_model_and_whether_it_streams() {
        assert_eq!(
            content_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Some(("gemini-2.5-pro".to_owned(), true))
        );
        assert_eq!(
            content_path("/v1beta/models/m:generateContent"),
            Some(("m".to_owned(), false))
        );
        assert_eq!(content_path("/v1beta/models/m:countTokens"), None);
    }

    #[test]
    fn a_streamed_call_is_whole_signed_and_ends_with_stop() {
        let turn = Turn::text(["Reading."])
            .with_thinking(["Look first."])
            .with_signature("c2ln")
            .with_tool_call(ToolCall::new("ignored", "read_file", json!({"path": "a"})));
        let frames = Gemini.stream(&turn, &ctx());
        assert_eq!(frames.len(), 4);
        assert!(frames[0].text.contains(r#""thought":true"#));
        let call: Value =
            serde_json::from_str(frames[2].text.trim().strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(
            call["candidates"][0]["content"]["parts"][0],
            json!({"functionCall": {"name": "read_file", "args": {"path": "a"}},
                "thoughtSignature": "c2ln"})
        );
        assert!(frames[3].text.contains(r#""finishReason":"STOP""#));
        assert!(!frames[3].delta);
    }

    #[test]
    fn a_rate_limit_says_when_to_retry_in_its_body() {
        let body = Gemini
            .with_retry_info(Gemini.error_body(429, "slow down"), "7")
            .unwrap();
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(body["error"]["details"][0]["retryDelay"], "7s");
    }
}
