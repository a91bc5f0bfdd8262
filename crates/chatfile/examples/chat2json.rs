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
/// One thread does it all: a second one escaping and writing was faster only when the two
/// shared a core's cache, and slower than one when they did not. The outer error is the
/// reading's, the inner one the writing's.
fn write_parsed(path: &Path) -> std::io::Result<std::io::Result<()>> {
    let mut file = File::open(path)?;
    let mut out = JsonArray::new(std::io::stdout().lock());
    let push = |message: MessageRef<'_>| out.push(message.role, &message.content);
    if file.metadata()?.is_file() {
        parse_reader(&mut file, push)?;
    } else {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        parse_reader(Cursor::new(bytes), push)?;
    }
    // A read error above returns before the array is closed (or what is gathered written).
    Ok(out.finish().map(drop))
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

    /// Adds an element. A long content is escaped a chunk at a time, written as the buffer
    /// fills, so that the buffer stays about a chunk long. (Only ASCII bytes are escaped, so
    /// a piece may end inside a character.)
    fn push(&mut self, role: &str, content: &str) {
        self.buffer.extend_from_slice(if self.count == 0 {
            b"[\n  {\n    \"role\": \""
        } else {
            b",\n  {\n    \"role\": \""
        });
        escape_body(&mut self.buffer, role.as_bytes());
        self.buffer.extend_from_slice(b"\",\n    \"content\": \"");
        for piece in content.as_bytes().chunks(CHUNK) {
            escape_body(&mut self.buffer, piece);
            if self.buffer.len() >= CHUNK {
                self.write_buffer();
            }
        }
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

/// Appends `bytes` escaped as serde_json escapes the inside of a JSON string. Eight bytes are
/// looked at and copied at a time (a copy of a known size is a single store, where a run of
/// any length is a call); a word holding a byte to escape is copied whole and cut back to
/// just before that byte.
fn escape_body(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + bytes.len() / 8);
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = escape_mask(&word);
        out.extend_from_slice(&word);
        if mask == 0 {
            at += 8;
            continue;
        }
        let clean = (mask.trailing_zeros() / 8) as usize;
        out.truncate(out.len() - (8 - clean));
        push_escape(out, word[clean]);
        at += clean + 1;
    }
    for &byte in &bytes[at..] {
        if ESCAPES[usize::from(byte)] == 0 {
            out.push(byte);
        } else {
            push_escape(out, byte);
        }
    }
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
fn escape_mask(chunk: &[u8; 8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = u64::from_le_bytes(*chunk);
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

    #[test]
    fn long_contents_are_escaped_in_pieces_and_come_out_whole() {
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
                role: "user",
                content: &long[1..CHUNK + 1],
            },
        ];
        assert_eq!(ours(&messages), serde_jsons(&messages));
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
