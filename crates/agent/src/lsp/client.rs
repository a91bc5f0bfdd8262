//! One language server over stdio: JSON-RPC with `Content-Length` framing, a reader thread
//! that answers the server's own requests (with nothing: ybs offers no workspace features)
//! and keeps the newest diagnostics published for each document.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ybs_tools::shell::Service;

/// A diagnostic as ybs compares and shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// `error`, `warning`, …
    pub severity: &'static str,
    /// The server's message.
    pub message: String,
}

#[derive(Default)]
struct Published {
    /// Per document URI: how many times diagnostics were published, and the newest.
    by_uri: HashMap<String, (u64, Vec<Diagnostic>)>,
    /// Responses by request id.
    responses: HashMap<u64, Value>,
    closed: bool,
}

type Shared = Arc<(Mutex<Published>, Condvar)>;

/// The server's stdin, written by the client and by the reader answering the server.
type Writer = Arc<Mutex<std::process::ChildStdin>>;

/// A running server.
pub struct Client {
    service: Service,
    stdin: Writer,
    shared: Shared,
    next_id: u64,
    versions: HashMap<String, i64>,
}

/// Why a server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// It could not be started.
    #[error("cannot start the language server: {0}")]
    Start(String),
    /// It did not answer in time, or its pipe closed.
    #[error("the language server did not answer: {0}")]
    NoAnswer(String),
}

fn locked(shared: &Shared) -> std::sync::MutexGuard<'_, Published> {
    shared.0.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Client {
    /// Starts the server (already set up in its sandbox) and initializes it for `root`.
    pub fn start(mut service: Service, root: &Path, wait: Duration) -> Result<Client, ClientError> {
        let stdin =
            (service.child.stdin.take()).ok_or_else(|| ClientError::Start("no stdin".into()))?;
        let stdout =
            (service.child.stdout.take()).ok_or_else(|| ClientError::Start("no stdout".into()))?;
        let shared: Shared = Arc::default();
        let stdin: Writer = Arc::new(Mutex::new(stdin));
        let (reader_shared, answers) = (Arc::clone(&shared), Arc::clone(&stdin));
        std::thread::spawn(move || read_messages(stdout, &reader_shared, &answers));
        let mut client = Client {
            service,
            stdin,
            shared,
            next_id: 0,
            versions: HashMap::new(),
        };
        let uri = file_uri(root);
        let id = client.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "project"}],
                "capabilities": {
                    "textDocument": {"publishDiagnostics": {"versionSupport": true}},
                    "workspace": {"configuration": true, "workspaceFolders": true},
                },
            }),
        )?;
        client.wait_response(id, wait)?;
        client.notify("initialized", json!({}))?;
        Ok(client)
    }

    /// Sends `text` as the document at `path` (opened the first time, changed after) and
    /// waits at most `wait` for the diagnostics published after it; `None` if none came.
    pub fn check(
        &mut self,
        path: &Path,
        language: &str,
        text: &str,
        wait: Duration,
    ) -> Result<Option<Vec<Diagnostic>>, ClientError> {
        let uri = file_uri(path);
        let before = locked(&self.shared)
            .by_uri
            .get(&uri)
            .map_or(0, |(count, _)| *count);
        match self.versions.get_mut(&uri) {
            Some(version) => {
                *version += 1;
                let version = *version;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version},
                           "contentChanges": [{"text": text}]}),
                )?;
            }
            None => {
                self.versions.insert(uri.clone(), 1);
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language,
                                            "version": 1, "text": text}}),
                )?;
            }
        }
        let deadline = Instant::now() + wait;
        let (lock, ready) = &*self.shared;
        let mut published = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some((count, list)) = published.by_uri.get(&uri) {
                if *count > before {
                    return Ok(Some(list.clone()));
                }
            }
            if published.closed {
                return Err(ClientError::NoAnswer("it exited".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            published = ready
                .wait_timeout(published, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Asks the server to shut down, then stops it.
    pub fn stop(&mut self) {
        if let Ok(id) = self.request("shutdown", Value::Null) {
            let _ = self.wait_response(id, Duration::from_secs(2));
            let _ = self.notify("exit", Value::Null);
        }
        self.service.stop();
    }

    fn request(&mut self, method: &str, params: Value) -> Result<u64, ClientError> {
        self.next_id += 1;
        let id = self.next_id;
        send(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        Ok(id)
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        send(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        )
    }

    fn wait_response(&self, id: u64, wait: Duration) -> Result<Value, ClientError> {
        let deadline = Instant::now() + wait;
        let (lock, ready) = &*self.shared;
        let mut published = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(response) = published.responses.remove(&id) {
                return Ok(response);
            }
            if published.closed {
                return Err(ClientError::NoAnswer("it exited".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::NoAnswer(format!(
                    "no answer within {} s",
                    wait.as_secs()
                )));
            }
            published = ready
                .wait_timeout(published, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes one message with its `Content-Length` header.
fn send(writer: &Writer, message: &Value) -> Result<(), ClientError> {
    let body = message.to_string();
    let mut stdin = writer.lock().unwrap_or_else(PoisonError::into_inner);
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
        .and_then(|()| stdin.flush())
        .map_err(|e| ClientError::NoAnswer(e.to_string()))
}

/// The most a single message may be: a server is not trusted to bound itself.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Reads one framed message; `None` at the end of the stream or on a malformed frame.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.filter(|n| *n <= MAX_MESSAGE_BYTES)?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Reads the server's messages until it closes its stdout: responses are kept, requests
/// answered with `null` (a configuration request with one `null` per item asked), published
/// diagnostics kept per document.
fn read_messages(stdout: impl Read, shared: &Shared, answers: &Writer) {
    let mut reader = BufReader::new(stdout);
    while let Some(message) = read_message(&mut reader) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => {
                let result = if method == "workspace/configuration" {
                    let asked = message["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; asked])
                } else {
                    Value::Null
                };
                let _ = send(
                    answers,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                );
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                let params = &message["params"];
                let Some(uri) = params["uri"].as_str() else {
                    continue;
                };
                let list = (params["diagnostics"].as_array().into_iter().flatten())
                    .map(diagnostic)
                    .collect();
                let mut published = locked(shared);
                let entry = published.by_uri.entry(uri.to_owned()).or_default();
                entry.0 += 1;
                entry.1 = list;
                shared.1.notify_all();
            }
            (None, Some(id)) => {
                if let Some(id) = id.as_u64() {
                    locked(shared).responses.insert(id, message);
                    shared.1.notify_all();
                }
            }
            _ => {}
        }
    }
    locked(shared).closed = true;
    shared.1.notify_all();
}

fn diagnostic(value: &Value) -> Diagnostic {
    let start = &value["range"]["start"];
    let number = |v: &Value| v.as_u64().unwrap_or(0) + 1;
    Diagnostic {
        line: number(&start["line"]),
        column: number(&start["character"]),
        severity: match value["severity"].as_u64() {
            Some(1) | None => "error",
            Some(2) => "warning",
            Some(3) => "information",
            _ => "hint",
        },
        message: value["message"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The `file://` URI of an absolute path (its bytes percent-encoded where a URI needs it).
pub fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for byte in path.as_os_str().as_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(*byte));
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_read_by_their_length() {
        let body = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        let input = format!(
            "Content-Length: {}\r\n\r\n{body}Content-Length: 2\r\n\r\n{{",
            body.len()
        );
        let mut reader = BufReader::new(input.as_bytes());
        assert_eq!(
            read_message(&mut reader),
            Some(json!({"jsonrpc":"2.0","id":1,"result":null}))
        );
        // A cut frame ends the stream.
        assert_eq!(read_message(&mut reader), None);
    }

    #[test]
    fn paths_become_file_uris() {
        assert_eq!(file_uri(Path::new("/a b/c.py")), "file:///a%20b/c.py");
    }
}
