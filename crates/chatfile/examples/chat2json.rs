//! Prints a chat file's messages as a JSON array of `{"role","content"}` objects, one message
//! per element, in file order: as parsed, or with `--expand` as expanded (imports, files,
//! options and tool lines taken out).
//!
//! `cargo run -p ybs-chatfile --example chat2json -- [--expand] FILE`

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use ybs_chatfile::{ChatMessage, expand_file, parse_messages};

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
    let messages: Vec<ChatMessage> = if expand {
        match expand_file(&file) {
            Ok(expansion) => expansion
                .messages
                .iter()
                .map(|message| message.to_message())
                .collect(),
            Err(err) => {
                eprintln!("chat2json: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        match std::fs::read(&file) {
            // Valid UTF-8 is checked at memory speed; only invalid input pays for the
            // replacement characters.
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => parse_messages(&text),
                Err(err) => parse_messages(&String::from_utf8_lossy(err.as_bytes())),
            },
            Err(err) => {
                eprintln!("chat2json: cannot read {}: {err}", file.display());
                return ExitCode::FAILURE;
            }
        }
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
