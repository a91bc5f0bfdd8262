//! Cutting a response body into frames: server-sent events (with `eventsource-stream`, which
//! handles comment lines, multi-line `data:`, CRLF and a BOM), newline-delimited JSON, or
//! AWS's binary event stream (`application/vnd.amazon.eventstream`, with
//! `aws-smithy-eventstream`, which checks the prelude's and the message's CRCs).

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use ybs_core::LlmError;

use crate::config::ProviderKind;
use crate::error::malformed;

/// One unit of a stream: an SSE event (its `event:` name, `message` by default, and its
/// joined `data:` lines) or one NDJSON line (with an empty event name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub event: String,
    pub data: String,
}

/// How a body is cut into frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Sse,
    Ndjson,
    /// An event stream message is a frame named by its `:event-type`; an exception or an
    /// error message is named `exception:<type>`, its payload (`{"message"}`) the data.
    EventStream,
}

/// The frames of a body arriving as `bytes`.
pub(crate) fn frames<S>(
    framing: Framing,
    provider: ProviderKind,
    bytes: S,
) -> BoxStream<'static, Result<Frame, LlmError>>
where
    S: Stream<Item = Result<Bytes, LlmError>> + Send + 'static,
{
    match framing {
        Framing::Sse => bytes
            .eventsource()
            .map(move |event| match event {
                Ok(event) => Ok(Frame {
                    event: event.event,
                    data: event.data,
                }),
                Err(EventStreamError::Transport(error)) => Err(error),
                Err(EventStreamError::Utf8(error)) => {
                    Err(malformed(provider, "not UTF-8", &error.to_string()))
                }
                Err(EventStreamError::Parser(error)) => {
                    Err(malformed(provider, "not server-sent events", &error.input))
                }
            })
            .boxed(),
        Framing::Ndjson => ndjson(provider, bytes).boxed(),
        Framing::EventStream => event_stream(provider, bytes).boxed(),
    }
}

fn event_stream<S>(
    provider: ProviderKind,
    bytes: S,
) -> impl Stream<Item = Result<Frame, LlmError>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, LlmError>> + Send + 'static,
{
    use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
    async_stream::stream! {
        let mut decoder = MessageFrameDecoder::new();
        let mut buffer = bytes::BytesMut::new();
        futures::pin_mut!(bytes);
        while let Some(chunk) = bytes.next().await {
            match chunk {
                Ok(chunk) => buffer.extend_from_slice(&chunk),
                Err(error) => {
                    yield Err(error);
                    return;
                }
            }
            loop {
                match decoder.decode_frame(&mut buffer) {
                    Ok(DecodedFrame::Complete(message)) => yield Ok(event_frame(&message)),
                    Ok(DecodedFrame::Incomplete) => break,
                    Err(error) => {
                        yield Err(malformed(provider, "not an event stream", &error.to_string()));
                        return;
                    }
                }
            }
        }
    }
}

/// The frame of one event stream message.
fn event_frame(message: &aws_smithy_types::event_stream::Message) -> Frame {
    let header = |name: &str| {
        (message.headers().iter())
            .find(|header| header.name().as_str() == name)
            .and_then(|header| header.value().as_string().ok())
            .map(|value| value.as_str().to_owned())
    };
    let data = String::from_utf8_lossy(message.payload()).into_owned();
    match header(":message-type").as_deref() {
        Some("exception") => Frame {
            event: format!(
                "exception:{}",
                header(":exception-type").unwrap_or_default()
            ),
            data,
        },
        Some("error") => Frame {
            event: format!("exception:{}", header(":error-code").unwrap_or_default()),
            data: serde_json::json!({"message": header(":error-message").unwrap_or_default()})
                .to_string(),
        },
        _ => Frame {
            event: header(":event-type").unwrap_or_default(),
            data,
        },
    }
}

fn ndjson<S>(
    provider: ProviderKind,
    bytes: S,
) -> impl Stream<Item = Result<Frame, LlmError>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, LlmError>> + Send + 'static,
{
    async_stream::stream! {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        futures::pin_mut!(bytes);
        while let Some(chunk) = bytes.next().await {
            match chunk {
                Ok(chunk) => lines.push(&chunk, &mut out),
                Err(error) => {
                    yield Err(error);
                    return;
                }
            }
            for line in out.drain(..) {
                yield line_frame(provider, line);
            }
        }
        if let Some(line) = lines.finish() {
            yield line_frame(provider, line);
        }
    }
}

fn line_frame(provider: ProviderKind, line: Vec<u8>) -> Result<Frame, LlmError> {
    match String::from_utf8(line) {
        Ok(data) => Ok(Frame {
            event: String::new(),
            data,
        }),
        Err(error) => Err(malformed(
            provider,
            "not UTF-8",
            &String::from_utf8_lossy(error.as_bytes()),
        )),
    }
}

/// Splits bytes into non-blank lines (a trailing `\r` removed), however the chunks cut them.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    partial: Vec<u8>,
}

impl Lines {
    /// Takes in a chunk and appends the lines it completes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Vec<u8>>) {
        while let Some(end) = chunk.iter().position(|&byte| byte == b'\n') {
            self.partial.extend_from_slice(&chunk[..end]);
            chunk = &chunk[end + 1..];
            let line = std::mem::take(&mut self.partial);
            if let Some(line) = non_blank(line) {
                out.push(line);
            }
        }
        self.partial.extend_from_slice(chunk);
    }

    /// The last line, when the body did not end with a newline.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        non_blank(std::mem::take(&mut self.partial))
    }
}

fn non_blank(mut line: Vec<u8>) -> Option<Vec<u8>> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use proptest::prelude::*;

    fn cut(body: &str, sizes: &[usize]) -> Vec<Result<Bytes, LlmError>> {
        let bytes = body.as_bytes();
        let mut chunks = Vec::new();
        let mut at = 0;
        let mut sizes = sizes.iter().cycle();
        while at < bytes.len() {
            let size = (*sizes.next().unwrap_or(&1)).max(1);
            let end = (at + size).min(bytes.len());
            chunks.push(Ok(Bytes::copy_from_slice(&bytes[at..end])));
            at = end;
        }
        chunks
    }

    fn collect(framing: Framing, chunks: Vec<Result<Bytes, LlmError>>) -> Vec<Frame> {
        block_on(
            frames(framing, ProviderKind::OpenAi, futures::stream::iter(chunks))
                .map(|frame| frame.unwrap())
                .collect(),
        )
    }

    fn frame(event: &str, data: &str) -> Frame {
        Frame {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn sse_handles_comments_multiline_data_and_crlf() {
        let body = ": OPENROUTER PROCESSING\r\n\r\nevent: ping\r\ndata: {\"a\":1}\r\n\r\n\
                    data: line one\ndata: line two\n\n: keep-alive\n\ndata: [DONE]\n\n";
        let expected = vec![
            frame("ping", "{\"a\":1}"),
            frame("message", "line one\nline two"),
            frame("message", "[DONE]"),
        ];
        assert_eq!(collect(Framing::Sse, cut(body, &[1000])), expected);
        assert_eq!(collect(Framing::Sse, cut(body, &[1])), expected);
        assert_eq!(collect(Framing::Sse, cut(body, &[3, 7, 2])), expected);
    }

    #[test]
    fn ndjson_splits_lines_across_chunks() {
        let body = "{\"a\":1}\r\n\n  \n{\"b\":\"é\"}\n{\"c\":3}";
        let expected = vec![
            frame("", "{\"a\":1}"),
            frame("", "{\"b\":\"é\"}"),
            frame("", "{\"c\":3}"),
        ];
        assert_eq!(collect(Framing::Ndjson, cut(body, &[1])), expected);
        assert_eq!(collect(Framing::Ndjson, cut(body, &[4, 9])), expected);
    }

    #[test]
    fn transport_errors_end_the_frames() {
        let chunks = vec![
            Ok(Bytes::from_static(b"data: 1\n\ndata: 2")),
            Err(LlmError::new(ybs_core::ErrorKind::Network, "reset")),
        ];
        let got: Vec<_> = block_on(
            frames(
                Framing::Sse,
                ProviderKind::OpenAi,
                futures::stream::iter(chunks),
            )
            .collect(),
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Ok(frame("message", "1")));
        assert_eq!(got[1].as_ref().unwrap_err().message, "reset");
    }

    proptest! {
        #[test]
        fn ndjson_lines_survive_any_chunking(
            lines in proptest::collection::vec("[a-z{}\":0-9 ]{1,20}", 1..20),
            sizes in proptest::collection::vec(1usize..17, 1..8),
        ) {
            let lines: Vec<String> = lines
                .into_iter()
                .filter(|line| !line.trim().is_empty())
                .collect();
            let body = lines.iter().map(|line| format!("{line}\n")).collect::<String>();
            let got: Vec<String> = collect(Framing::Ndjson, cut(&body, &sizes))
                .into_iter()
                .map(|frame| frame.data)
                .collect();
            prop_assert_eq!(got, lines);
        }
    }
}
