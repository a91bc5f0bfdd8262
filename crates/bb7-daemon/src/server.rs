//! The process around a [`Session`]: reads request lines from stdin (refusing lines over
//! 1 MiB), answers malformed ones at once, and hands the rest in order to a worker thread that
//! owns the session. Replies are written as single flushed lines; nothing else ever goes to
//! stdout. `ping` and `version` are answered by the reader directly, so they can overtake
//! queued work.
//!
//! The daemon stops cleanly on `shutdown`, on end of input and on SIGTERM (releasing its chat
//! lock). When the safety guard trips it prints the reason on stderr and exits at once with
//! status 2.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

use crate::protocol::{self, MAX_LINE, Reply, Request, TOO_LARGE};
use crate::session::Session;

/// Where replies go.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes one reply line and flushes.
pub fn send(output: &Output, reply: &Reply) {
    let line = reply.to_line();
    tracing::debug!(reply = %line, "reply");
    if let Ok(mut out) = output.lock() {
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// One line of input, or the marker of a line that was too long.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    TooLong,
}

/// Reads lines of at most [`MAX_LINE`] bytes; longer lines are skipped whole.
async fn next_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = reader.fill_buf().await?;
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

/// Runs the daemon until shutdown, end of input or SIGTERM. Returns the exit status.
pub async fn serve<R: AsyncRead + Unpin>(session: Session, input: R, output: Output) -> i32 {
    let (queue, mut requests) = mpsc::unbounded_channel::<(Option<String>, Request)>();
    let (exit_tx, mut exit_rx) = mpsc::unbounded_channel::<()>();
    let worker_output = output.clone();
    let worker = std::thread::spawn(move || {
        let mut session = session;
        while let Some((request_id, request)) = requests.blocking_recv() {
            let action = request.action();
            tracing::debug!(action, "request");
            // A bug in one handler must not take the daemon (and the user's session) down.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                session.dispatch(request)
            }))
            .unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|text| (*text).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                Err(crate::Error::Invalid(format!(
                    "Internal error while handling {action}: {why}"
                )))
            });
            match outcome {
                Ok(Some(reply)) => send(&worker_output, &reply.for_request(request_id.as_deref())),
                Ok(None) => {
                    send(
                        &worker_output,
                        &Reply::ok().for_request(request_id.as_deref()),
                    );
                    let _ = exit_tx.send(());
                    break;
                }
                Err(err) if err.is_fatal() => {
                    tracing::error!(error = %err, "safety guard tripped; exiting");
                    eprintln!("{err}");
                    std::process::exit(2);
                }
                Err(err) => {
                    tracing::info!(action, error = %err, "request failed");
                    send(
                        &worker_output,
                        &Reply::error(err.to_string()).for_request(request_id.as_deref()),
                    );
                }
            }
        }
        drop(session);
    });

    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut terminate = terminate_signal();
    loop {
        let line = tokio::select! {
            line = next_line(&mut reader) => line,
            _ = exit_rx.recv() => break,
            _ = wait(&mut terminate) => {
                tracing::info!("SIGTERM: shutting down");
                break;
            }
        };
        let line = match line {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(Line::TooLong)) => {
                send(&output, &Reply::error(TOO_LARGE));
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
        match protocol::parse_line(&line) {
            Err(rejected) => {
                send(
                    &output,
                    &Reply::error(rejected.message).for_request(rejected.request_id.as_deref()),
                );
            }
            Ok((request_id, Request::Ping)) => {
                send(&output, &Reply::ok().for_request(request_id.as_deref()))
            }
            Ok((request_id, Request::Version)) => send(
                &output,
                &Reply::typed("version")
                    .with("version", env!("CARGO_PKG_VERSION"))
                    .for_request(request_id.as_deref()),
            ),
            Ok(pair) => {
                if queue.send(pair).is_err() {
                    break;
                }
            }
        }
    }
    drop(queue);
    let _ = tokio::task::spawn_blocking(move || worker.join()).await;
    0
}

#[cfg(unix)]
type Terminate = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Terminate = Option<()>;

#[cfg(unix)]
fn terminate_signal() -> Terminate {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
}

#[cfg(not(unix))]
fn terminate_signal() -> Terminate {
    None
}

#[cfg(unix)]
async fn wait(signal: &mut Terminate) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn wait(_: &mut Terminate) {
    std::future::pending::<()>().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"a\":1}\r\nlast");
        let mut reader = BufReader::with_capacity(1024, input.as_slice());
        assert_eq!(next_line(&mut reader).await.unwrap(), Some(Line::TooLong));
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Line::Text("{\"a\":1}".into()))
        );
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(next_line(&mut reader).await.unwrap(), None);
    }
}
