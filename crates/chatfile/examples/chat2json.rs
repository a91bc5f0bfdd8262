//! Prints a chat file's messages as a JSON array of `{"role","content"}` objects, one message
//! per element, in file order: as parsed, or with `--expand` as expanded (imports, files,
//! options and tool lines taken out).
//!
//! `cargo run -p ybs-chatfile --example chat2json -- [--expand] FILE`

use std::fs::File;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ybs_chatfile::{MessageRef, expand_file, parse_reader};

fn main() -> ExitCode {
    let mut expand = false;
    let mut file: Option<PathBuf> = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--expand" => expand = true,
            "-h" | "--help" => {
                println!("usage: chat2json [--expand] FILE");
                return ExitCode::SUCCESS;
            }
            _ if file.is_none() => file = Some(PathBuf::from(arg)),
            _ => {
                eprintln!(
                    "chat2json: unexpected argument `{arg}`; usage: chat2json [--expand] FILE"
                );
                return ExitCode::from(2);
            }
        }
    }
    let Some(file) = file else {
        eprintln!("chat2json: no chat file given; usage: chat2json [--expand] FILE");
        return ExitCode::from(2);
    };
    let written = if expand {
        let expansion = match expand_file(&file) {
            Ok(expansion) => expansion,
            Err(err) => {
                eprintln!("chat2json: {err}");
                return ExitCode::FAILURE;
            }
        };
        let mut out = JsonArray::new(std::io::stdout().lock());
        for message in &expansion.messages {
            out.push(&message.role, &message.content);
        }
        out.finish().map(drop)
    } else {
        match write_parsed(&file) {
            Ok(written) => written,
            Err(err) => {
                eprintln!("chat2json: cannot read {}: {err}", file.display());
                return ExitCode::FAILURE;
            }
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("chat2json: cannot write JSON: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Parses the chat file at `path` and writes its messages to standard output, each as soon as
/// it is final: a regular file is read a window at a time, anything else (a pipe) whole first.
/// The messages are escaped and written by a second thread while the parser goes on. The outer
/// error is the reading's, the inner one the writing's.
fn write_parsed(path: &Path) -> std::io::Result<std::io::Result<()>> {
    let mut file = File::open(path)?;
    let (full_sender, full) = std::sync::mpsc::sync_channel::<Batch>(2);
    let (empty_sender, empty) = std::sync::mpsc::channel::<Batch>();
    // Set when reading failed: the array is then left unfinished (and what is still gathered
    // unwritten) rather than closed as if the file ended there.
    let read_failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut out = JsonArray::new(std::io::stdout().lock());
            for mut batch in full {
                for piece in batch.pieces() {
                    if piece.first {
                        out.begin(piece.role);
                    }
                    out.content(piece.text);
                    if piece.last {
                        out.end();
                    }
                }
                batch.clear();
                // The parser may have finished and stopped taking batches back.
                let _ = empty_sender.send(batch);
            }
            if read_failed.load(std::sync::atomic::Ordering::Acquire) {
                return Ok(());
            }
            out.finish().map(drop)
        });
        let mut batch = Batch::default();
        let mut push = |message: MessageRef<'_>| {
            batch.push_message(message.role, &message.content, |batch| {
                let next = empty.try_recv().unwrap_or_default();
                // Only fails once the writer is gone, which `join` below reports.
                let _ = full_sender.send(std::mem::replace(batch, next));
            });
        };
        let read = match file.metadata() {
            Ok(meta) if meta.is_file() => parse_reader(&mut file, &mut push),
            Ok(_) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)
                    .and_then(|_| parse_reader(Cursor::new(bytes), &mut push))
            }
            Err(err) => Err(err),
        };
        if read.is_ok() {
            let _ = full_sender.send(batch);
        } else {
            read_failed.store(true, std::sync::atomic::Ordering::Release);
        }
        drop(full_sender);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writing thread panicked")));
        read.map(|_| written)
    })
}

/// Messages copied out of the parser for the writing thread, in pieces of at most about a
/// chunk: their roles and contents one after another in one string, and each piece.
#[derive(Default)]
struct Batch {
    text: String,
    pieces: Vec<PieceAt>,
}

/// Where a piece of a message ends in [`Batch::text`], its role (given with the first piece
/// only) before it.
struct PieceAt {
    role_end: usize,
    end: usize,
    first: bool,
    last: bool,
}

/// A piece of a message's content, with its role.
struct Piece<'a> {
    role: &'a str,
    text: &'a str,
    first: bool,
    last: bool,
}

impl Batch {
    /// Adds a message, in pieces when it is long, so that no batch (nor the writer's buffer)
    /// grows much past a chunk; `full` is called whenever the batch holds a chunk.
    fn push_message(&mut self, role: &str, content: &str, mut full: impl FnMut(&mut Batch)) {
        let mut rest = content;
        let mut first = true;
        loop {
            let (piece, after) = rest.split_at(piece_end(rest, CHUNK));
            let last = after.is_empty();
            self.push(role, piece, first, last);
            if self.text.len() >= CHUNK {
                full(self);
            }
            if last {
                return;
            }
            (rest, first) = (after, false);
        }
    }

    fn push(&mut self, role: &str, text: &str, first: bool, last: bool) {
        if self.text.capacity() == 0 {
            self.text.reserve(2 * CHUNK);
        }
        if first {
            self.text.push_str(role);
        }
        let role_end = self.text.len();
        self.text.push_str(text);
        self.pieces.push(PieceAt {
            role_end,
            end: self.text.len(),
            first,
            last,
        });
    }

    /// Each piece, in order.
    fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        let mut start = 0;
        self.pieces.iter().map(move |at| {
            let piece = Piece {
                role: self.text.get(start..at.role_end).unwrap_or_default(),
                text: self.text.get(at.role_end..at.end).unwrap_or_default(),
                first: at.first,
                last: at.last,
            };
            start = at.end;
            piece
        })
    }

    fn clear(&mut self) {
        self.text.clear();
        self.pieces.clear();
    }
}

/// The end of the first piece of `text` of at most `most` bytes (at least one character).
fn piece_end(text: &str, most: usize) -> usize {
    if text.len() <= most {
        return text.len();
    }
    let mut end = most.max(1);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// How much output is gathered before it is written.
const CHUNK: usize = 1 << 18;

/// A JSON array of `{"role","content"}` objects written as it grows, laid out as
/// `serde_json::to_writer_pretty` lays it out, then a newline.
struct JsonArray<W: Write> {
    out: W,
    buffer: Vec<u8>,
    count: usize,
    /// The first write error; nothing more is written after it.
    error: Option<std::io::Error>,
}

impl<W: Write> JsonArray<W> {
    fn new(out: W) -> Self {
        JsonArray {
            out,
            buffer: Vec::with_capacity(CHUNK + (CHUNK >> 2)),
            count: 0,
            error: None,
        }
    }

    fn push(&mut self, role: &str, content: &str) {
        self.begin(role);
        self.content(content);
        self.end();
    }

    /// Opens an element: its role, and its content's opening quote.
    fn begin(&mut self, role: &str) {
        self.buffer.extend_from_slice(if self.count == 0 {
            b"[\n  {\n    \"role\": \""
        } else {
            b",\n  {\n    \"role\": \""
        });
        escape_body(&mut self.buffer, role);
        self.buffer.extend_from_slice(b"\",\n    \"content\": \"");
    }

    /// Adds to the open element's content.
    fn content(&mut self, text: &str) {
        escape_body(&mut self.buffer, text);
        if self.buffer.len() >= CHUNK {
            self.write_buffer();
        }
    }

    /// Closes the open element.
    fn end(&mut self) {
        self.buffer.extend_from_slice(b"\"\n  }");
        self.count += 1;
        if self.buffer.len() >= CHUNK {
            self.write_buffer();
        }
    }

    fn write_buffer(&mut self) {
        if self.error.is_none() {
            if let Err(err) = self.out.write_all(&self.buffer) {
                self.error = Some(err);
            }
        }
        self.buffer.clear();
    }

    /// Closes the array, writes what is left and gives the writer back.
    fn finish(mut self) -> std::io::Result<W> {
        self.buffer
            .extend_from_slice(if self.count == 0 { b"[]\n" } else { b"\n]\n" });
        self.write_buffer();
        match self.error.take() {
            Some(err) => Err(err),
            None => self.out.flush().map(|()| self.out),
        }
    }
}

/// Appends `text` escaped as serde_json escapes the inside of a JSON string: runs that need
/// no escape are found eight bytes at a time and copied whole.
fn escape_body(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len());
    // The start of the run of bytes not yet copied, and where the scan is.
    let mut run = 0;
    let mut at = 0;
    loop {
        // The first byte at or after `at` that needs an escape, if any.
        let found = loop {
            match bytes.get(at..at + 8) {
                Some(chunk) => {
                    let mask = escape_mask(chunk);
                    if mask != 0 {
                        break Some(at + (mask.trailing_zeros() / 8) as usize);
                    }
                    at += 8;
                }
                None => {
                    break bytes[at..]
                        .iter()
                        .position(|&b| ESCAPES[usize::from(b)] != 0)
                        .map(|p| at + p);
                }
            }
        };
        let Some(position) = found else { break };
        out.extend_from_slice(&bytes[run..position]);
        push_escape(out, bytes[position]);
        run = position + 1;
        at = run;
    }
    out.extend_from_slice(&bytes[run..]);
}

/// For each byte, the letter of its two-byte escape (`n` for `\\n`), `u` where serde_json
/// writes `\\u00XX`, 0 where it needs no escape.
const ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// For eight bytes (little-endian), a word whose lowest set bit is the high bit of the first
/// byte that needs an escape (0 when none does). The bits above it may be wrong (borrows), so
/// only the lowest one is used.
fn escape_mask(chunk: &[u8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(chunk);
    let word = u64::from_le_bytes(bytes);
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & HIGH;
    // With bit 1 flipped, the control characters stay below 0x20 and only the quote (0x22)
    // becomes 0x20: one test for both.
    below(word ^ (ONES * 0x02), 0x21) | below(word ^ (ONES * u64::from(b'\\')), 1)
}

/// Appends the escape of one byte that needs one.
fn push_escape(out: &mut Vec<u8>, byte: u8) {
    match ESCAPES[usize::from(byte)] {
        b'u' => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xF)],
            ]);
        }
        letter => out.extend_from_slice(&[b'\\', letter]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use serde::Serialize;
    use ybs_chatfile::parse_borrowed;

    /// One element of the output, as serde_json writes it.
    #[derive(Serialize)]
    struct Message<'a> {
        role: &'a str,
        content: &'a str,
    }

    fn ours(messages: &[Message<'_>]) -> String {
        let mut out = JsonArray::new(Vec::new());
        for message in messages {
            out.push(message.role, message.content);
        }
        String::from_utf8_lossy(&out.finish().unwrap_or_default()).into_owned()
    }

    fn serde_jsons(messages: &[Message<'_>]) -> String {
        let mut theirs = serde_json::to_string_pretty(messages).unwrap_or_default();
        theirs.push('\n');
        theirs
    }

    #[test]
    fn output_is_serde_jsons_pretty_output() {
        let mut every_byte: String = (0u8..0x80).map(char::from).collect();
        every_byte.push_str("\u{a0}é日本\u{7f}\"\\ tail of more than eight bytes");
        // Longer than one chunk, so that it is written in several.
        let long = "line of text\twith \"quotes\"\n".repeat(CHUNK / 10);
        let messages = [
            Message {
                role: "user",
                content: "plain text, long enough",
            },
            Message {
                role: "assistant",
                content: &every_byte,
            },
            Message {
                role: "x",
                content: "\"",
            },
            Message {
                role: "user",
                content: &long,
            },
            Message {
                role: "user",
                content: "",
            },
        ];
        for count in 0..=messages.len() {
            assert_eq!(ours(&messages[..count]), serde_jsons(&messages[..count]));
        }
    }

    /// What the writing thread makes of `messages` sent through batches.
    fn through_batches(messages: &[Message<'_>]) -> String {
        let mut batches = Vec::new();
        let mut batch = Batch::default();
        for message in messages {
            batch.push_message(message.role, message.content, |full| {
                batches.push(std::mem::take(full));
            });
        }
        batches.push(batch);
        assert!(batches.iter().all(|batch| batch.text.len() < 2 * CHUNK));
        let mut out = JsonArray::new(Vec::new());
        for batch in &batches {
            for piece in batch.pieces() {
                if piece.first {
                    out.begin(piece.role);
                }
                out.content(piece.text);
                if piece.last {
                    out.end();
                }
            }
        }
        String::from_utf8_lossy(&out.finish().unwrap_or_default()).into_owned()
    }

    #[test]
    fn long_messages_go_through_batches_in_pieces_and_come_out_whole() {
        // Several chunks long, with characters of 1 to 4 bytes across every piece's end.
        let long = "a\té日本語🦀\"\n".repeat(3 * CHUNK / 10);
        let messages = [
            Message {
                role: "user",
                content: "short",
            },
            Message {
                role: "assistant",
                content: &long,
            },
            Message {
                role: "x",
                content: "",
            },
            Message {
                role: "user",
                content: &long[1..CHUNK + 1],
            },
        ];
        for count in 0..=messages.len() {
            assert_eq!(
                through_batches(&messages[..count]),
                serde_jsons(&messages[..count])
            );
        }
        assert_eq!(piece_end("日本", 1), 3);
        assert_eq!(piece_end("ab", 5), 2);
    }

    #[test]
    fn a_parsed_file_is_written_as_serde_json_writes_its_messages() {
        let text = "intro\nuser:\n\nsee \"this\"\t\\\n```\nsystem: in\n```\n[[\nx: y\n]]\n\
                    sh:-- ls {{{\na\nsh:-- ls }}}\n<file a>\nb\n</file>\nassistant: inline\n\\user: x\n";
        let mut out = JsonArray::new(Vec::new());
        let read = parse_reader(Cursor::new(text), |message| {
            out.push(message.role, &message.content)
        });
        assert!(read.is_ok());
        let streamed = String::from_utf8_lossy(&out.finish().unwrap_or_default()).into_owned();
        let parsed = parse_borrowed(text);
        let messages: Vec<Message<'_>> = parsed
            .iter()
            .map(|message| Message {
                role: message.role,
                content: &message.content,
            })
            .collect();
        assert!(messages.len() > 3);
        assert_eq!(streamed, serde_jsons(&messages));
    }

    proptest! {
        #[test]
        fn any_text_is_escaped_as_serde_json_escapes_it(
            content in "(\\PC|[\\x00-\\x1f\"\\\\\\x7f])*"
        ) {
            let messages = [Message { role: "user", content: &content }];
            prop_assert_eq!(ours(&messages), serde_jsons(&messages));
        }
    }
}
