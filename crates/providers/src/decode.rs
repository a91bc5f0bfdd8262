//! The decoder side shared by the adapters: the [`Decoder`] trait (a state machine fed frames
//! that emits [`StreamEvent`]s), the helpers the adapters' decoders share, and
//! [`decode_recorded`] to run a decoder over a recorded response body without a network. Which
//! decoder and framing a provider kind uses is `decoders`, above the adapters.

use bytes::Bytes;
use futures::StreamExt;
use ybs_core::{ErrorKind, LlmError, StreamEvent};

use crate::config::ProviderKind;
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

/// Decodes a recorded streaming response body, delivered in `chunks` as a network would cut
/// it and framed by `framing`, with `decoder`: the events a live stream would yield (an `Err`
/// last when the body is broken or cut short).
pub(crate) fn decode_recorded<I>(
    decoder: &mut dyn Decoder,
    framing: Framing,
    kind: ProviderKind,
    chunks: I,
) -> Vec<Result<StreamEvent, LlmError>>
where
    I: IntoIterator<Item = Bytes>,
    I::IntoIter: Send + 'static,
{
    let chunks = futures::stream::iter(chunks.into_iter().map(Ok));
    let mut frames = frames(framing, kind, chunks);
    let mut results = Vec::new();
    let mut out = Vec::new();
    futures::executor::block_on(async {
        loop {
            let result = feed(decoder, frames.next().await, &mut out);
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
