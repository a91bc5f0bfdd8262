//! Amazon Bedrock's Converse API: `POST /model/{modelId}/converse` (JSON) and
//! `/converse-stream` (AWS's binary event stream), and the control plane's
//! `GET /foundation-models`.
//!
//! Checked against AWS's public API reference (Amazon Bedrock API Reference: Converse,
//! ConverseStream, ListFoundationModels, Common Errors; the event-stream encoding of the
//! AWS SDKs; Signature Version 4 in the IAM user guide):
//!
//! - Every request must be signed: SigV4 with the access key [`ACCESS_KEY_ID`] and the
//!   secret [`SECRET_ACCESS_KEY`] (any session token), the signature recomputed with
//!   `aws-sigv4` from the request as received, or a Bedrock API key ([`API_KEY`]) as a
//!   bearer token. An unknown key is a 403 `UnrecognizedClientException`, a wrong
//!   signature a 403 `InvalidSignatureException`, each with the `x-amzn-errortype` header
//!   and a `{"message": ...}` body, as Bedrock answers.
//! - A stream is event-stream messages (prelude with total and headers length and its CRC,
//!   string headers `:event-type`, `:content-type` `application/json` and `:message-type`
//!   `event`, the JSON payload, the message CRC): `messageStart`, per content block
//!   `contentBlockStart` (tool use only) / `contentBlockDelta` / `contentBlockStop`
//!   (reasoning text then its signature, text, tool input as JSON text), `messageStop` with
//!   `stopReason`, and `metadata` with `usage` (`inputTokens` without the cached tokens,
//!   `cacheReadInputTokens`, `cacheWriteInputTokens`) and `metrics`. Each payload carries
//!   the `p` padding field Bedrock adds.
//! - Errors: the exception in `x-amzn-errortype` (`ThrottlingException` 429,
//!   `ValidationException` 400 with "Input is too long for requested model." for a
//!   too-long prompt, `AccessDeniedException` 403, `ResourceNotFoundException` 404,
//!   `InternalServerException` 500, `ServiceUnavailableException` 503); mid-stream, an
//!   `exception` message whose `:exception-type` is the exception in lower camel case.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use serde_json::{Value, json};

use crate::script::{FinishReason, Turn, Usage};

/// The access key id the fake takes.
pub const ACCESS_KEY_ID: &str = "AKIAFAKEBEDROCK00001";
/// The secret access key that goes with [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "fake-bedrock-secret-never-shown";
/// The Bedrock API key the fake takes as a bearer token.
pub const API_KEY: &str = "ABSKfake-bedrock-api-key-never-shown";

/// What a Bedrock runtime path names: the model and whether it streams.
pub(crate) fn model_path(path: &str) -> Option<(String, bool)> {
    let rest = path.strip_prefix("/model/")?;
    let (model, method) = rest.rsplit_once('/')?;
    let streams = match method {
        "converse-stream" => true,
        "converse" => false,
        _ => return None,
    };
    let model = percent_encoding::percent_decode_str(model).decode_utf8_lossy();
    Some((model.into_owned(), streams))
}

/// The exception Bedrock names for an HTTP status.
pub(crate) fn exception(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// The `x-amzn-errortype` header value of an exception.
pub(crate) fn error_type(exception: &str) -> String {
    format!("{exception}:http://internal.amazon.com/coral/com.amazon.bedrock/")
}

/// The body of an error.
pub(crate) fn error_body(message: &str) -> Value {
    json!({"message": message})
}

/// The message of a too-long prompt.
pub(crate) const TOO_LONG: &str = "Input is too long for requested model.";

/// A request as the fake received it, for checking its signature.
pub(crate) struct Received<'a> {
    pub method: &'a str,
    /// `path?query` as sent.
    pub path_and_query: &'a str,
    pub header: &'a dyn Fn(&str) -> Option<String>,
    pub body: &'a [u8],
}

/// Why a request is refused: `(status, exception, message)`; `None` when it is authorized.
pub(crate) fn refusal(request: &Received<'_>) -> Option<(u16, &'static str, String)> {
    let header = request.header;
    let Some(authorization) = header("authorization") else {
        return Some((
            403,
            "AccessDeniedException",
            "Missing Authentication Token".to_owned(),
        ));
    };
    if let Some(token) = authorization.strip_prefix("Bearer ") {
        return (token != API_KEY).then(|| {
            (
                403,
                "UnrecognizedClientException",
                "Invalid API Key format: Must start with pre-defined prefix".to_owned(),
            )
        });
    }
    let invalid_token = || {
        Some((
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".to_owned(),
        ))
    };
    let Some(parts) = authorization.strip_prefix("AWS4-HMAC-SHA256 ") else {
        return invalid_token();
    };
    let field = |name: &str| {
        (parts.split(','))
            .find_map(|part| part.trim().strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let (Some(credential), Some(signed), Some(signature)) = (
        field("Credential"),
        field("SignedHeaders"),
        field("Signature"),
    ) else {
        return invalid_token();
    };
    let scope: Vec<&str> = credential.split('/').collect();
    if scope.len() != 5 || scope[0] != ACCESS_KEY_ID || scope[3] != "bedrock" {
        return invalid_token();
    }
    let mismatch = || {
        Some((
            403,
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. \
             Check your AWS Secret Access Key and signing method. Consult the service \
             documentation for details."
                .to_owned(),
        ))
    };
    let Some(time) = header("x-amz-date").as_deref().and_then(parse_amz_date) else {
        return mismatch();
    };
    let expected = signature_of(request, scope[2], &signed, time);
    if expected.as_deref() != Some(signature.as_str()) {
        return mismatch();
    }
    None
}

/// The signature of `request` by the fake's keys, as `aws-sigv4` computes it.
fn signature_of(
    request: &Received<'_>,
    region: &str,
    signed: &str,
    time: SystemTime,
) -> Option<String> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
    let header = request.header;
    let identity = aws_credential_types::Credentials::new(
        ACCESS_KEY_ID,
        SECRET_ACCESS_KEY,
        header("x-amz-security-token"),
        None,
        "fake-llm",
    )
    .into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("bedrock")
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .ok()?
        .into();
    // The signer adds the host, the date and the token itself; the other signed headers
    // are given with the values received.
    let added = ["host", "x-amz-date", "x-amz-security-token"];
    let values: Vec<(String, String)> = (signed.split(';'))
        .filter(|name| !added.contains(name))
        .map(|name| (name.to_owned(), header(name).unwrap_or_default()))
        .collect();
    let url = format!("http://{}{}", header("host")?, request.path_and_query);
    let signable = SignableRequest::new(
        request.method,
        url,
        values
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
        SignableBody::Bytes(request.body),
    )
    .ok()?;
    let (_, signature) = sign(signable, &params).ok()?.into_parts();
    Some(signature)
}

/// `20231114T221320Z` as a time.
fn parse_amz_date(text: &str) -> Option<SystemTime> {
    let digits = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    if text.len() != 16 || text.as_bytes()[8] != b'T' || !text.ends_with('Z') {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let seconds = digits(9..11)? * 3600 + digits(11..13)? * 60 + digits(13..15)?;
    // Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let of_era_days = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    let days = era * 146_097 + of_era_days - 719_468;
    let total = u64::try_from(days * 86_400 + seconds).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(total))
}

fn stop_reason(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop => "end_turn",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::Length => "max_tokens",
        FinishReason::ContentFilter => "content_filtered",
    }
}

/// Converse's usage: `inputTokens` leaves out the tokens read from or written to the cache.
fn usage(usage: &Usage) -> Value {
    let input = (usage.prompt_tokens)
        .saturating_sub(usage.cached_tokens)
        .saturating_sub(usage.cache_write_tokens);
    let mut wire = json!({
        "inputTokens": input,
        "outputTokens": usage.completion_tokens,
        "totalTokens": usage.prompt_tokens + usage.completion_tokens,
    });
    if let Some(fields) = wire.as_object_mut() {
        if usage.cached_tokens > 0 {
            fields.insert("cacheReadInputTokens".into(), json!(usage.cached_tokens));
        }
        if usage.cache_write_tokens > 0 {
            fields.insert(
                "cacheWriteInputTokens".into(),
                json!(usage.cache_write_tokens),
            );
        }
    }
    wire
}

/// One event message's bytes: `(bytes, carries scripted content)`.
pub(crate) type EventFrame = (Vec<u8>, bool);

fn message(headers: Vec<Header>, payload: &Value) -> Vec<u8> {
    let message = Message::new_from_parts(headers, crate::wire::json_text(payload).into_bytes());
    let mut bytes = Vec::new();
    // Writing to a Vec fails only for a message over the format's limits.
    let _ = write_message_to(&message, &mut bytes);
    bytes
}

fn string(name: &'static str, value: &str) -> Header {
    Header::new(name, HeaderValue::String(value.to_owned().into()))
}

/// An event message; Bedrock pads each payload with a `p` field of varying length.
pub(crate) fn event(kind: &str, mut payload: Value) -> Vec<u8> {
    if let Some(fields) = payload.as_object_mut() {
        let padding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123";
        fields.insert(
            "p".into(),
            json!(&padding[..(kind.len() * 3) % padding.len()]),
        );
    }
    let headers = vec![
        string(":event-type", kind),
        string(":content-type", "application/json"),
        string(":message-type", "event"),
    ];
    message(headers, &payload)
}

/// An exception message mid-stream (`modelStreamErrorException`...).
pub(crate) fn exception_event(kind: &str, text: &str) -> Vec<u8> {
    let headers = vec![
        string(":exception-type", kind),
        string(":content-type", "application/json"),
        string(":message-type", "exception"),
    ];
    message(headers, &json!({"message": text}))
}

/// The content blocks of a turn, in order: reasoning, text, tool uses.
pub(crate) fn stream(turn: &Turn) -> Vec<EventFrame> {
    let mut frames = vec![(event("messageStart", json!({"role": "assistant"})), false)];
    let mut index = 0;
    let delta = |index: usize, delta: Value| {
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": delta}),
        )
    };
    let stop = |index: usize| event("contentBlockStop", json!({"contentBlockIndex": index}));
    if !turn.thinking.is_empty() {
        for chunk in &turn.thinking {
            frames.push((
                delta(index, json!({"reasoningContent": {"text": chunk}})),
                true,
            ));
        }
        if let Some(signature) = &turn.signature {
            let signed = delta(index, json!({"reasoningContent": {"signature": signature}}));
            frames.push((signed, false));
        }
        frames.push((stop(index), false));
        index += 1;
    }
    if !turn.text.is_empty() {
        for chunk in &turn.text {
            frames.push((delta(index, json!({"text": chunk})), true));
        }
        frames.push((stop(index), false));
        index += 1;
    }
    for call in &turn.tool_calls {
        let start = json!({"contentBlockIndex": index,
            "start": {"toolUse": {"toolUseId": call.id, "name": call.name}}});
        frames.push((event("contentBlockStart", start), true));
        for fragment in call.argument_fragments() {
            frames.push((delta(index, json!({"toolUse": {"input": fragment}})), true));
        }
        frames.push((stop(index), false));
        index += 1;
    }
    let reason = stop_reason(turn.finish_reason());
    frames.push((event("messageStop", json!({"stopReason": reason})), false));
    let metadata = json!({"usage": usage(&turn.usage_or_default()), "metrics": {"latencyMs": 412}});
    frames.push((event("metadata", metadata), false));
    frames
}

/// The body of a Converse (not streamed) reply.
pub(crate) fn complete(turn: &Turn) -> Value {
    let mut content = Vec::new();
    if !turn.thinking.is_empty() {
        let mut text = json!({"text": turn.thinking.concat()});
        if let (Some(signature), Some(fields)) = (&turn.signature, text.as_object_mut()) {
            fields.insert("signature".into(), json!(signature));
        }
        content.push(json!({"reasoningContent": {"reasoningText": text}}));
    }
    if !turn.text.is_empty() {
        content.push(json!({"text": turn.text.concat()}));
    }
    for call in &turn.tool_calls {
        content.push(json!({"toolUse": {"toolUseId": call.id, "name": call.name,
            "input": call.arguments_value()}}));
    }
    json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason(turn.finish_reason()),
        "usage": usage(&turn.usage_or_default()),
        "metrics": {"latencyMs": 412},
    })
}

/// `GET /foundation-models`: the script's models as Bedrock's summaries.
pub(crate) fn foundation_models(ids: &[String]) -> Value {
    let summaries: Vec<Value> = (ids.iter())
        .map(|id| {
            let provider = id
                .split('.')
                .find(|part| !["us", "eu", "apac"].contains(part));
            json!({"modelArn": format!("arn:aws:bedrock:us-east-1::foundation-model/{id}"),
                "modelId": id, "modelName": id, "providerName": provider.unwrap_or("Amazon"),
                "inputModalities": ["TEXT"], "outputModalities": ["TEXT"],
                "responseStreamingSupported": true,
                "inferenceTypesSupported": ["ON_DEMAND"],
                "modelLifecycle": {"status": "ACTIVE"}})
        })
        .collect();
    json!({"modelSummaries": summaries})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::script::ToolCall;
    use aws_smithy_eventstream::frame::read_message_from;

    #[test]
    fn paths_name_the_model_and_whether_it_streams() {
        assert_eq!(
            model_path("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"),
            Some((
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0".to_owned(),
                true
            ))
        );
        assert_eq!(
            model_path("/model/m/converse"),
            Some(("m".to_owned(), false))
        );
        assert_eq!(model_path("/model/m/invoke"), None);
    }

    #[test]
    fn amz_dates_are_read() {
        assert_eq!(
            parse_amz_date("20231114T221320Z"),
            Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
        assert_eq!(parse_amz_date("2023-11-14"), None);
    }

    #[test]
    fn a_stream_is_event_messages_with_their_headers() {
        let turn = Turn::text(["Hi"]).with_tool_call(ToolCall::new(
            "tooluse_1",
            "read_file",
            json!({"path": "a"}),
        ));
        let frames = stream(&turn);
        let mut bytes = bytes::Bytes::from(frames[2].0.clone());
        let message = read_message_from(&mut bytes).unwrap();
        let header = |name: &str| {
            message
                .headers()
                .iter()
                .find(|h| h.name().as_str() == name)
                .map(|h| h.value().as_string().unwrap().as_str().to_owned())
        };
        assert_eq!(header(":event-type").as_deref(), Some("contentBlockStop"));
        assert_eq!(header(":message-type").as_deref(), Some("event"));
        let last = frames.last().unwrap();
        let message = read_message_from(&mut bytes::Bytes::from(last.0.clone())).unwrap();
        let payload: Value = serde_json::from_slice(message.payload()).unwrap();
        assert_eq!(payload["usage"]["inputTokens"], 0);
    }
}
