//! Gemini `streamGenerateContent` chunks (SSE `data:` lines, each a whole
//! `GenerateContentResponse`) -> `StreamEvent`s.

use serde_json::{Value, json};
use ybs_core::{ErrorKind, FinishReason, LlmError, StreamEvent, Usage};

use super::encode::{MINTED_CALL_ID, SIGNATURE_FORMAT};
use super::wire::{Chunk, UsageMetadata, WirePart};
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{error_parts, error_status, malformed, stream_error};
use crate::framing::Frame;

/// The stream has no terminal event: the reply is over when the body ends after a chunk
/// with a `finishReason`. Function calls arrive whole, each in one part (one without an id,
/// as the Gemini API sends them, gets one made of the reply's id); thought summaries
/// are parts marked `thought`; a `thoughtSignature` on any part is kept as a reasoning
/// detail (with the call's id when it came on a call) so the encoder can send it back.
#[derive(Debug)]
pub(crate) struct GeminiDecoder {
    kind: ProviderKind,
    calls: usize,
    finish: Option<String>,
    blocked: Option<String>,
    usage: Usage,
    /// The reply's `responseId`, which makes the ids given to calls unique.
    response_id: Option<String>,
}

impl GeminiDecoder {
    pub(crate) fn new(kind: ProviderKind) -> Self {
        GeminiDecoder {
            kind,
            calls: 0,
            finish: None,
            blocked: None,
            usage: Usage::default(),
            response_id: None,
        }
    }

    fn part(&mut self, part: WirePart, out: &mut Vec<StreamEvent>) {
        let signature = part.thought_signature;
        if let Some(call) = part.function_call {
            let index = self.calls;
            self.calls += 1;
            let reply = self.response_id.as_deref().unwrap_or("0");
            let id = (call.id.filter(|id| !id.is_empty()))
                .unwrap_or_else(|| format!("{MINTED_CALL_ID}{reply}-{index}"));
            if let Some(signature) = signature {
                out.push(signature_detail(signature, Some(&id)));
            }
            out.push(StreamEvent::ToolCallStart {
                index,
                id,
                name: call.name,
            });
            let arguments = match call.args {
                Value::Null => json!({}),
                args => args,
            };
            out.push(StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.to_string(),
            });
            out.push(StreamEvent::ToolCallEnd { index });
            return;
        }
        if let Some(signature) = signature {
            out.push(signature_detail(signature, None));
        }
        if let Some(text) = part.text {
            if part.thought == Some(true) {
                push_thinking(out, text);
            } else {
                push_text(out, text);
            }
        }
    }

    fn usage(&mut self, wire: &UsageMetadata, out: &mut Vec<StreamEvent>) {
        let thoughts = wire.thoughts_token_count.unwrap_or_default();
        let prompt = wire.prompt_token_count.unwrap_or_default()
            + wire.tool_use_prompt_token_count.unwrap_or_default();
        let completion = wire.candidates_token_count.unwrap_or_default() + thoughts;
        self.usage = Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: wire.cached_content_token_count.unwrap_or_default(),
            reasoning_tokens: thoughts,
            total_tokens: wire.total_token_count.unwrap_or(prompt + completion),
            ..Usage::default()
        };
        out.push(StreamEvent::Usage(self.usage));
    }
}

/// A thought signature as the reasoning detail OpenRouter uses for Gemini's signatures.
fn signature_detail(signature: String, call_id: Option<&str>) -> StreamEvent {
    let mut detail = json!({"type": "reasoning.encrypted", "format": SIGNATURE_FORMAT,
        "data": signature});
    if let (Some(id), Some(map)) = (call_id, detail.as_object_mut()) {
        map.insert("id".to_owned(), json!(id));
    }
    StreamEvent::ReasoningDetail { detail }
}

fn finish_reason(reason: &str, called: bool) -> FinishReason {
    match reason {
        "STOP" if called => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::Other(other.to_ascii_lowercase()),
    }
}

impl Decoder for GeminiDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let chunk: Chunk = serde_json::from_str(&frame.data)
            .map_err(|error| malformed(self.kind, &error.to_string(), &frame.data))?;
        if let Some(error) = &chunk.error {
            let (message, code) = error_parts(error);
            return Err(stream_error(self.kind, error_status(error), code, message));
        }
        if self.response_id.is_none() {
            self.response_id = chunk.response_id;
        }
        if let Some(reason) = chunk
            .prompt_feedback
            .and_then(|feedback| feedback.block_reason)
        {
            self.blocked = Some(reason);
        }
        for candidate in chunk.candidates.into_iter().take(1) {
            for part in candidate
                .content
                .into_iter()
                .flat_map(|content| content.parts)
            {
                self.part(part, out);
            }
            if candidate.finish_reason.is_some() {
                self.finish = candidate.finish_reason;
            }
        }
        if let Some(usage) = &chunk.usage_metadata {
            self.usage(usage, out);
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if let Some(reason) = &self.blocked {
            return Err(LlmError::new(
                ErrorKind::BadRequest,
                format!("{} refused the prompt ({reason})", self.kind.display_name()),
            ));
        }
        match &self.finish {
            Some(reason) if reason == "MALFORMED_FUNCTION_CALL" => Err(LlmError::new(
                ErrorKind::Server,
                format!(
                    "{} wrote a malformed function call (MALFORMED_FUNCTION_CALL)",
                    self.kind.display_name()
                ),
            )),
            Some(reason) => {
                out.push(StreamEvent::Done {
                    finish_reason: finish_reason(reason, self.calls > 0),
                });
                Ok(())
            }
            None => Err(cut_short(self.kind, "no finishReason")),
        }
    }

    fn is_done(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::decode::decode_recorded;
    use crate::framing::Framing;
    use bytes::Bytes;
    use ybs_core::{Accumulator, Part, Reply};

    fn run(chunks: &[Value]) -> Vec<Result<StreamEvent, LlmError>> {
        let body: String = (chunks.iter())
            .map(|chunk| format!("data: {chunk}\r\n\r\n"))
            .collect();
        decode_recorded(
            &mut GeminiDecoder::new(ProviderKind::Gemini),
            Framing::Sse,
            ProviderKind::Gemini,
            [Bytes::from(body)],
        )
    }

    fn reply(chunks: &[Value]) -> Reply {
        let mut accumulator = Accumulator::new();
        for event in run(chunks) {
            accumulator.push(event.unwrap());
        }
        accumulator.finish()
    }

    fn recorded() -> Vec<Value> {
        vec![
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "The user wants a file.", "thought": true}]}, "index": 0}],
                "usageMetadata": {"promptTokenCount": 120, "thoughtsTokenCount": 7, "totalTokenCount": 127},
                "modelVersion": "gemini-2.5-flash", "responseId": "r1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Reading "}]}, "index": 0}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "it."},
                {"functionCall": {"name": "read_file", "args": {"path": "a.rs"}},
                 "thoughtSignature": "c2lnbmF0dXJl"}]},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 120, "cachedContentTokenCount": 100,
                    "candidatesTokenCount": 15, "thoughtsTokenCount": 7, "totalTokenCount": 142}}),
        ]
    }

    #[test]
    fn thoughts_text_calls_signatures_and_usage_fold_into_the_reply() {
        let reply = reply(&recorded());
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(
            (reply.usage.prompt_tokens, reply.usage.cached_tokens),
            (120, 100)
        );
        assert_eq!(
            (reply.usage.completion_tokens, reply.usage.reasoning_tokens),
            (22, 7)
        );
        assert_eq!(reply.usage.total_tokens, 142);
        let parts = &reply.message.parts;
        let Part::Thinking(thinking) = &parts[0] else {
            panic!("{parts:?}")
        };
        assert_eq!(thinking.content, "The user wants a file.");
        assert_eq!(parts[1], Part::text("Reading it."));
        let Some(Part::ToolCall(call)) = parts.iter().find(|p| matches!(p, Part::ToolCall(_)))
        else {
            panic!("{parts:?}")
        };
        assert_eq!(call.id, "gemini-call-r1-0");
        assert_eq!(call.arguments, json!({"path": "a.rs"}));
        let details: Vec<&Value> = (parts.iter())
            .filter_map(|part| match part {
                Part::Thinking(thinking) => thinking.details.as_ref(),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(details.len(), 1);
        assert_eq!(details[0]["id"], "gemini-call-r1-0");
        assert_eq!(details[0]["data"], "c2lnbmF0dXJl");
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_cut_short() {
        let got = run(&recorded()[..2]);
        assert_eq!(
            got.last().unwrap().clone().unwrap_err().message,
            "the stream from Gemini ended before the reply was complete (no finishReason)"
        );
        assert!(got.contains(&Ok(StreamEvent::TextDelta {
            text: "Reading ".into()
        })));
    }

    #[test]
    fn an_error_in_the_stream_is_classified() {
        let mut chunks = recorded()[..1].to_vec();
        chunks.push(
            json!({"error": {"code": 503, "message": "The model is overloaded.",
            "status": "UNAVAILABLE"}}),
        );
        let err = run(&chunks).pop().unwrap().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Server);
        assert_eq!(err.message, "The model is overloaded.");
        assert_eq!(err.status, Some(503));
        assert_eq!(err.code.as_deref(), Some("UNAVAILABLE"));
    }

    #[test]
    fn finish_reasons_map_and_blocked_prompts_fail() {
        let end = |reason: &str| {
            vec![
                json!({"candidates": [{"content": {"parts": [{"text": "x"}]},
                "finishReason": reason}]}),
            ]
        };
        assert_eq!(
            reply(&end("MAX_TOKENS")).finish_reason,
            Some(FinishReason::Length)
        );
        assert_eq!(
            reply(&end("SAFETY")).finish_reason,
            Some(FinishReason::ContentFilter)
        );
        let blocked = [
            json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}}),
        ];
        let err = run(&blocked).pop().unwrap().unwrap_err();
        assert_eq!(
            err.message,
            "Gemini refused the prompt (PROHIBITED_CONTENT)"
        );
    }
}
