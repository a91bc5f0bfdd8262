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
    let written = serde_json::to_writer_pretty(&mut out, &messages)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("chat2json: cannot write JSON: {err}");
            ExitCode::FAILURE
        }
    }
}
