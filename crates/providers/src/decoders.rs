//! Which decoder and framing each provider kind uses, and [`replay`] to decode a recorded
//! response body of any kind without a network. Above the adapters' decoders, which implement
//! the [`Decoder`] trait of `decode`.

use bytes::Bytes;
use ybs_core::{LlmError, StreamEvent};

use crate::anthropic::decode::AnthropicDecoder;
use crate::bedrock::decode::BedrockDecoder;
use crate::config::{Protocol, ProviderKind};
use crate::decode::{Decoder, decode_recorded};
use crate::framing::Framing;
use crate::gemini::decode::GeminiDecoder;
use crate::ollama::decode::OllamaDecoder;
use crate::openai::decode::OpenAiDecoder;
use crate::responses::decode::ResponsesDecoder;

/// How a provider kind's streams are framed.
pub(crate) fn framing_for(kind: ProviderKind) -> Framing {
    match kind.protocol() {
        Protocol::Ollama => Framing::Ndjson,
        Protocol::Bedrock => Framing::EventStream,
        _ => Framing::Sse,
    }
}

/// The decoder of a provider kind.
pub(crate) fn decoder_for(kind: ProviderKind) -> Box<dyn Decoder> {
    match kind.protocol() {
        Protocol::Anthropic | Protocol::VertexAnthropic => Box::new(AnthropicDecoder::default()),
        Protocol::Ollama => Box::new(OllamaDecoder::default()),
        Protocol::Bedrock => Box::new(BedrockDecoder::default()),
        Protocol::Responses | Protocol::AzureResponses => Box::new(ResponsesDecoder::default()),
        Protocol::Gemini | Protocol::Vertex => Box::new(GeminiDecoder::new(kind)),
        Protocol::OpenAi | Protocol::AzureChat | Protocol::Unavailable => {
            Box::new(OpenAiDecoder::new(kind))
        }
    }
}

/// Decodes a recorded streaming response body of `kind`'s wire format, delivered in
/// `chunks` as a network would cut it, into the events a live stream would yield (an `Err`
/// last when the body is broken or cut short).
///
/// For tests, benchmarks and debugging a captured stream.
pub fn replay<I>(kind: ProviderKind, chunks: I) -> Vec<Result<StreamEvent, LlmError>>
where
    I: IntoIterator<Item = Bytes>,
    I::IntoIter: Send + 'static,
{
    decode_recorded(decoder_for(kind).as_mut(), framing_for(kind), kind, chunks)
}
