//! The decoder side shared by the adapters: a state machine fed frames that emits
//! [`StreamEvent`]s, and [`replay`] to decode a recorded response body without a network.

use bytes::Bytes;
use futures::StreamExt;
use ybs_core::{ErrorKind, LlmError, StreamEvent};

use crate::config::{Protocol, ProviderKind};
use crate::framing::{Frame, Framing, frames};

/// A wire decoder: pure, fed one frame at a time.
pub(crate) trait Decoder: Send {
    /// Decodes one frame, appending the events it carries to `out`. An `Err` ends the stream
    /// (events appended before it are still delivered).
    fn frame(&mut self, frame: &Frame, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;

    /// The body ended: appends what is still pending, or fails when the reply was cut short.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;

    /// Whether the terminal frame arrived (nothing more needs to be read).
    fn is_done(&self) -> bool;
}

/// How a provider kind's streams are framed.
pub(crate) fn framing_for(kind: ProviderKind) -> Framing {
    match kind.protocol() {
        Protocol::Ollama => Framing::Ndjson,
        _ => Framing::Sse,
    }
}

/// The decoder of a provider kind.
pub(crate) fn decoder_for(kind: ProviderKind) -> Box<dyn Decoder> {
    match kind.protocol() {
        Protocol::Anthropic => Box::new(crate::anthropic::decode::AnthropicDecoder::default()),
        Protocol::Ollama => Box::new(crate::ollama::decode::OllamaDecoder::default()),
        Protocol::OpenAi | Protocol::Unavailable => {
            Box::new(crate::openai::decode::OpenAiDecoder::new(kind))
        }
    }
}

/// Feeds `decoder` what the framing gave next (`None`: the body ended), appending the events
/// to `out`. `Ok(true)` when the reply is over; an `Err` ends it too.
pub(crate) fn feed(
    decoder: &mut dyn Decoder,
    next: Option<Result<Frame, LlmError>>,
    out: &mut Vec<StreamEvent>,
) -> Result<bool, LlmError> {
    match next {
        Some(Ok(frame)) => decoder.frame(&frame, out).map(|()| decoder.is_done()),
        Some(Err(error)) => Err(error),
        None => decoder.finish(out).map(|()| true),
    }
}

/// Appends a text delta; an empty one is no event.
pub(crate) fn push_text(out: &mut Vec<StreamEvent>, text: String) {
    if !text.is_empty() {
        out.push(StreamEvent::TextDelta { text });
    }
}

/// Appends a (not yet signed) thinking delta; an empty one is no event.
pub(crate) fn push_thinking(out: &mut Vec<StreamEvent>, text: String) {
    if !text.is_empty() {
        out.push(StreamEvent::ThinkingDelta {
            text,
            signature: None,
        });
    }
}

/// The error of a body that ended before the reply did; `missing` says what never came.
pub(crate) fn cut_short(kind: ProviderKind, missing: &str) -> LlmError {
    LlmError::new(
        ErrorKind::Network,
        format!(
            "the stream from {} ended before the reply was complete ({missing})",
            kind.display_name()
        ),
    )
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
    let mut decoder = decoder_for(kind);
    let chunks = futures::stream::iter(chunks.into_iter().map(Ok));
    let mut frames = frames(framing_for(kind), kind, chunks);
    let mut results = Vec::new();
    let mut out = Vec::new();
    futures::executor::block_on(async {
        loop {
            let result = feed(decoder.as_mut(), frames.next().await, &mut out);
            results.extend(out.drain(..).map(Ok));
            match result {
                Err(error) => return results.push(Err(error)),
                Ok(true) => return,
                Ok(false) => {}
            }
        }
    });
    results
}
