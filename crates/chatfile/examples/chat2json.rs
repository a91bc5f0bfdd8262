//! Prints a chat file's messages as a JSON array of `{"role","content"}` objects, one message
//! per element, in file order: as parsed, or with `--expand` as expanded (imports, files,
//! options and tool lines taken out).
//!
//! `cargo run -p ybs-chatfile --example chat2json -- [--expand] FILE`

use std::borrow::Cow;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use ybs_chatfile::{expand_file, parse_borrowed};

/// One element of the output: a message's role and content.
#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: Cow<'a, str>,
}

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
    let text: String;
    let expansion;
    let messages: Vec<Message<'_>> = if expand {
        expansion = match expand_file(&file) {
            Ok(expansion) => expansion,
            Err(err) => {
                eprintln!("chat2json: {err}");
                return ExitCode::FAILURE;
            }
        };
        expansion
            .messages
            .iter()
            .map(|message| Message {
                role: &message.role,
                content: Cow::Borrowed(&message.content),
            })
            .collect()
    } else {
        text = match std::fs::read(&file) {
            // Valid UTF-8 is checked at memory speed; only invalid input pays for the
            // replacement characters.
            Ok(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()),
            Err(err) => {
                eprintln!("chat2json: cannot read {}: {err}", file.display());
                return ExitCode::FAILURE;
            }
        };
        // The messages borrow from the text: only rewritten content is copied.
        parse_borrowed(&text)
            .into_iter()
            .map(|message| Message {
                role: message.role,
                content: message.content,
            })
            .collect()
    };
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = write_pretty(&mut out, &messages).and_then(|()| out.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("chat2json: cannot write JSON: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `messages` as `serde_json::to_writer_pretty` does, then a newline, with strings
/// escaped eight bytes at a time (most of a chat needs no escape).
fn write_pretty(out: &mut impl Write, messages: &[Message<'_>]) -> std::io::Result<()> {
    if messages.is_empty() {
        return out.write_all(b"[]\n");
    }
    let mut buffer = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        buffer.clear();
        buffer.extend_from_slice(if index == 0 {
            b"[\n  {\n    \"role\": "
        } else {
            b",\n  {\n    \"role\": "
        });
        escape_into(&mut buffer, message.role);
        buffer.extend_from_slice(b",\n    \"content\": ");
        escape_into(&mut buffer, &message.content);
        buffer.extend_from_slice(b"\n  }");
        out.write_all(&buffer)?;
    }
    out.write_all(b"\n]\n")
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it.
fn escape_into(out: &mut Vec<u8>, text: &str) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether some byte of `word` is below 0x20, a quote or a backslash (exact as an "any").
    fn needs_escape(word: u64) -> bool {
        let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        let below = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
        below | zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) != 0
    }
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // The start of the run of bytes not yet copied, and where the scan is.
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if !needs_escape(u64::from_le_bytes(word)) {
                at += 8;
                continue;
            }
        }
        let end = (at + 8).min(bytes.len());
        for position in at..end {
            let byte = bytes[position];
            let escape: &[u8] = match byte {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0C => b"\\f",
                0x00..=0x1F => b"",
                _ => continue,
            };
            out.extend_from_slice(&bytes[run..position]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(byte >> 4)]);
                out.push(HEX[usize::from(byte & 0xF)]);
            } else {
                out.extend_from_slice(escape);
            }
            run = position + 1;
        }
        at = end;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_serde_jsons_pretty_output() {
        let mut every_byte: String = (0u8..0x80).map(char::from).collect();
        every_byte.push_str("\u{a0}é日本\u{7f}\"\\ tail of more than eight bytes");
        for messages in [
            vec![],
            vec![Message {
                role: "user",
                content: Cow::Borrowed(""),
            }],
            vec![
                Message {
                    role: "user",
                    content: Cow::Borrowed("plain text, long enough"),
                },
                Message {
                    role: "assistant",
                    content: Cow::Owned(every_byte.clone()),
                },
                Message {
                    role: "x",
                    content: Cow::Borrowed("\""),
                },
            ],
        ] {
            let mut ours = Vec::new();
            write_pretty(&mut ours, &messages).unwrap_or_default();
            let mut theirs = serde_json::to_vec_pretty(&messages).unwrap_or_default();
            theirs.push(b'\n');
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
    }
}
