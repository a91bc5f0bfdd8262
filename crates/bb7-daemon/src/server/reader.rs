//! The reader: the thread that reads request lines from stdin, and does nothing slow. It
//! answers at once what needs no session (lines over 1 MiB, malformed lines, `ping`,
//! `version`, `cancel`), takes the stream slot for a `send` as it reads it, and queues every
//! other request for the worker in the order read. It never runs a request itself, so however
//! long the worker takes over one, `ping` and `cancel` are read and answered right away.

use std::io::{BufRead, Read};

use tokio::sync::mpsc;

use crate::send::shared::{Job, Shared, send};
use crate::server::dispatch;
use crate::wire::error::Error;
use crate::wire::parse::{self, MAX_LINE, TOO_LARGE};
use crate::wire::reply::Reply;
use crate::wire::requests::{Concurrency, Request};

/// One line of input, or the marker of a line that was too long.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    TooLong,
}

/// Reads lines of at most [`MAX_LINE`] bytes; longer lines are skipped whole.
fn next_line<R: BufRead>(reader: &mut R) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (_, true) => Some(Line::TooLong),
                (true, false) => None,
                (false, false) => Some(Line::Text(String::from_utf8_lossy(&line).into_owned())),
            });
        }
        let (taken, done) = match chunk.iter().position(|byte| *byte == b'\n') {
            Some(end) => (end + 1, true),
            None => (chunk.len(), false),
        };
        let body = &chunk[..if done { taken - 1 } else { taken }];
        if !too_long {
            if line.len() + body.len() > MAX_LINE {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(body);
            }
        }
        reader.consume(taken);
        if done {
            if too_long {
                return Ok(Some(Line::TooLong));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(Line::Text(
                String::from_utf8_lossy(&line).into_owned(),
            )));
        }
    }
}

/// Reads request lines from `input` until its end (then tells the daemon to stop through
/// `exit`) or a `shutdown` (which the worker answers before it stops the daemon; nothing
/// after it is read, as the first bb7 reads nothing after it).
pub(super) fn read<R: Read>(shared: &Shared, exit: &mpsc::UnboundedSender<()>, input: R) {
    let output = &shared.output;
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, input);
    loop {
        let line = match next_line(&mut reader) {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(Line::TooLong)) => {
                send(output, &Reply::error(TOO_LARGE));
                continue;
            }
            Ok(None) => break,
            Err(err) => {
                tracing::error!(error = %err, "stdin failed");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match parse::parse_line(&line) {
            Err(rejected) => send(
                output,
                &Reply::error(rejected.message).for_request(rejected.request_id.as_deref()),
            ),
            Ok((request_id, request)) if request.concurrency().is_immediate() => send(
                output,
                &dispatch::immediate(shared, request).for_request(request_id.as_deref()),
            ),
            // The stream slot is taken as the `send` is read, as the first bb7 does, so a
            // `cancel` read right after it already reaches it.
            Ok((request_id, request)) => {
                if request.concurrency() == Concurrency::Stream
                    && !shared.reserve_stream(request_id.as_deref())
                {
                    send(
                        output,
                        &Reply::error(Error::Busy.to_string()).for_request(request_id.as_deref()),
                    );
                    continue;
                }
                let shutdown = matches!(request, Request::Shutdown(_));
                shared.jobs.push(Job::Request(request_id, request));
                if shutdown {
                    return;
                }
            }
        }
    }
    let _ = exit.send(());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn long_lines_are_skipped_whole() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"a\":1}\r\nlast");
        let mut reader = std::io::BufReader::with_capacity(1024, input.as_slice());
        assert_eq!(next_line(&mut reader).unwrap(), Some(Line::TooLong));
        assert_eq!(
            next_line(&mut reader).unwrap(),
            Some(Line::Text("{\"a\":1}".into()))
        );
        assert_eq!(
            next_line(&mut reader).unwrap(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(next_line(&mut reader).unwrap(), None);
    }
}
