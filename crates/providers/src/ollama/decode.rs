//! Ollama NDJSON lines -> `StreamEvent`s.

use ybs_core::{FinishReason, LlmError, StreamEvent, Usage};

use super::wire::Line;
use crate::config::ProviderKind;
use crate::decode::{Decoder, cut_short, push_text, push_thinking};
use crate::error::{llm_error, malformed};
use crate::framing::Frame;

/// Decodes lines until `done: true`. Tool calls arrive whole (arguments as an object), each
/// becoming start, arguments and end at once; calls without an id get `call_N`. A reply
/// with tool calls finishes with `ToolCalls` (Ollama says `stop`).
#[derive(Debug, Default)]
pub(crate) struct OllamaDecoder {
    calls: usize,
    done: bool,
}

impl Decoder for OllamaDecoder {
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let line: Line = serde_json::from_str(&frame.data)
            .map_err(|error| malformed(ProviderKind::Ollama, &error.to_string(), &frame.data))?;
        if let Some(error) = line.error {
            return Err(llm_error(None, None, error));
        }
        if let Some(message) = line.message {
            push_thinking(out, message.thinking.unwrap_or_default());
            push_text(out, message.content.unwrap_or_default());
            for call in message.tool_calls.into_iter().flatten() {
                let index = self.calls;
                self.calls += 1;
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: call
                        .id
                        .filter(|id| !id.is_empty())
                        .unwrap_or_else(|| format!("call_{index}")),
                    name: call.function.name,
                });
                let arguments = if call.function.arguments.is_null() {
                    "{}".to_owned()
                } else {
                    call.function.arguments.to_string()
                };
                out.push(StreamEvent::ToolCallDelta { index, arguments });
                out.push(StreamEvent::ToolCallEnd { index });
            }
        }
        if line.done {
            let prompt = line.prompt_eval_count.unwrap_or_default();
            let completion = line.eval_count.unwrap_or_default();
            out.push(StreamEvent::Usage(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
                ..Usage::default()
            }));
            let finish_reason = match line.done_reason.as_deref() {
                _ if self.calls > 0 => FinishReason::ToolCalls,
                Some(reason) => FinishReason::from_provider(reason),
                None => FinishReason::Stop,
            };
            out.push(StreamEvent::Done { finish_reason });
            self.done = true;
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        Err(cut_short(ProviderKind::Ollama, "no done line"))
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_recorded;
    use crate::framing::Framing;
    use bytes::Bytes;
    use serde_json::json;
    use ybs_core::Accumulator;

    /// The body decoded by this module's decoder alone, framed as the kind's streams are.
    fn replay<I>(kind: ProviderKind, chunks: I) -> Vec<Result<StreamEvent, LlmError>>
    where
        I: IntoIterator<Item = Bytes>,
        I::IntoIter: Send + 'static,
    {
        decode_recorded(&mut OllamaDecoder::default(), Framing::Ndjson, kind, chunks)
    }

    #[test]
    fn thinking_text_tool_calls_and_counts() {
        let body = [
            json!({"model": "q", "message": {"role": "assistant", "content": "", "thinking": "hm"}, "done": false}),
            json!({"model": "q", "message": {"role": "assistant", "content": "Hi"}, "done": false}),
            json!({"model": "q", "message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "read", "arguments": {"path": "a"}}},
                {"id": "c9", "function": {"index": 1, "name": "list", "arguments": {}}}]}, "done": false}),
            json!({"model": "q", "message": {"role": "assistant", "content": ""}, "done": true,
                   "done_reason": "stop", "prompt_eval_count": 7, "eval_count": 3}),
        ]
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
        let mut accumulator = Accumulator::new();
        for event in replay(ProviderKind::Ollama, [Bytes::from(body)]) {
            accumulator.push(event.unwrap());
        }
        let reply = accumulator.finish();
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(
            (reply.usage.prompt_tokens, reply.usage.total_tokens),
            (7, 10)
        );
        assert_eq!(reply.message.text_content(), "Hi");
        let calls: Vec<_> = reply.message.tool_calls().cloned().collect();
        assert_eq!(calls[0].id, "call_0");
        assert_eq!(calls[0].arguments, json!({"path": "a"}));
        assert_eq!(
            (calls[1].id.as_str(), calls[1].name.as_str()),
            ("c9", "list")
        );
    }

    #[test]
    fn error_lines_and_cut_streams_fail() {
        let body =
            "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"model crashed\"}\n";
        let got = replay(ProviderKind::Ollama, [Bytes::from(body)]);
        assert_eq!(got[0], Ok(StreamEvent::TextDelta { text: "a".into() }));
        assert_eq!(got[1].clone().unwrap_err().message, "model crashed");

        let cut = "{\"message\":{\"content\":\"a\"},\"done\":false}\n";
        let got = replay(ProviderKind::Ollama, [Bytes::from(cut)]);
        assert_eq!(
            got[1].clone().unwrap_err().message,
            "the stream from Ollama ended before the reply was complete (no done line)"
        );
    }
}
