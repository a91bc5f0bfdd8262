//! `ybs chat parse|print|expand`: `.chat` files as JSON for programs in other languages.
//! `parse` prints `[{"role","content","lines":[start,end]}]`, `print` reads that JSON (the
//! `lines` are optional) on stdin and writes the file text, `expand` prints the conversation
//! as the model would get it (imports, files and options resolved). Errors name the file and
//! line; the exit code is then 1.

use std::io::{Read, Write};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};
use ybs_chatfile::{Access, ChatMessage, Expander, parse_document, print};

use crate::cli::ChatAction;

/// One message of `print`'s input.
#[derive(Deserialize)]
struct Incoming {
    role: String,
    content: String,
}

/// Runs `action` in `cwd`; returns the exit code.
pub fn run(
    action: &ChatAction,
    cwd: &Path,
    access: Option<Access>,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<u8> {
    let result = match action {
        ChatAction::Parse { file } => parse_file(cwd, file),
        ChatAction::Print => print_stdin(stdin),
        ChatAction::Expand { file } => expand_file(cwd, file, access),
    };
    match result {
        Ok((text, warnings)) => {
            for warning in warnings {
                writeln!(
                    err,
                    "ybs: warning: {}",
                    crate::render::inert_lines(&warning.to_string())
                )?;
            }
            out.write_all(text.as_bytes())?;
            Ok(0)
        }
        Err(message) => {
            writeln!(
                err,
                "ybs: error: {}",
                crate::render::inert_lines(&message.to_string())
            )?;
            Ok(1)
        }
    }
}

fn read(cwd: &Path, file: &Path) -> Result<String, String> {
    std::fs::read_to_string(cwd.join(file))
        .map_err(|e| format!("{}: cannot read: {e}", file.display()))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

type Outcome = Result<(String, Vec<String>), String>;

fn parse_file(cwd: &Path, file: &Path) -> Outcome {
    let document = parse_document(&read(cwd, file)?);
    let messages: Vec<Value> = (document.messages.iter())
        .map(|m| json!({"role": m.role, "content": m.content, "lines": [m.span.start, m.span.end]}))
        .collect();
    let warnings = (document.unclosed.iter())
        .map(|open| {
            format!(
                "{}:{}: this {} is never closed; it runs to the end of the file",
                file.display(),
                open.line,
                open.kind.describe()
            )
        })
        .collect();
    Ok((pretty(&Value::Array(messages)), warnings))
}

fn print_stdin(stdin: &mut dyn Read) -> Outcome {
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .map_err(|e| format!("stdin: cannot read: {e}"))?;
    let incoming: Vec<Incoming> = serde_json::from_str(&text).map_err(|e| {
        format!(
            "stdin:{}:{}: not a JSON list of {{\"role\", \"content\"}} objects: {e}",
            e.line(),
            e.column()
        )
    })?;
    let messages: Vec<ChatMessage> = (incoming.into_iter())
        .map(|m| ChatMessage::new(m.role, m.content))
        .collect();
    let text = print(&messages).map_err(|e| format!("stdin: {e}"))?;
    Ok((text, Vec::new()))
}

fn expand_file(cwd: &Path, file: &Path, access: Option<Access>) -> Outcome {
    let mut expander = Expander::new(cwd);
    if let Some(access) = access {
        expander = expander.with_access(access);
    }
    let expansion = expander
        .expand_file(&cwd.join(file))
        .map_err(|e| e.to_string())?;
    let messages: Vec<Value> = (expansion.messages.iter())
        .map(|m| {
            json!({"role": m.role, "content": m.content,
                   "file": m.source.file.display().to_string(), "line": m.source.line})
        })
        .collect();
    let tools: Vec<Value> = (expansion.tools.iter())
        .map(|t| {
            json!({"kind": t.kind, "args": t.args,
                   "file": t.source.file.display().to_string(), "line": t.source.line})
        })
        .collect();
    let value = json!({
        "messages": messages,
        "options": expansion.options.effective(),
        "tools": tools,
    });
    Ok((pretty(&value), Vec::new()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn go(action: ChatAction, cwd: &Path, input: &str) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(
            &action,
            cwd,
            None,
            &mut input.as_bytes(),
            &mut out,
            &mut err,
        )
        .unwrap();
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    const CHAT: &str = "system:\nBe brief.\n\nuser:\nWhat is\n2+2?\n\nassistant:\n4\n";

    #[test]
    fn parse_then_print_gives_the_messages_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.chat"), CHAT).unwrap();
        let (code, json, err) = go(
            ChatAction::Parse {
                file: "a.chat".into(),
            },
            dir.path(),
            "",
        );
        assert_eq!((code, err.as_str()), (0, ""));
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value[1],
            json!({"role": "user", "content": "What is\n2+2?", "lines": [4, 6]})
        );
        assert_eq!(value.as_array().unwrap().len(), 3);
        let (code, text, _) = go(ChatAction::Print, dir.path(), &json);
        assert_eq!(code, 0);
        assert_eq!(
            ybs_chatfile::parse_messages(&text),
            ybs_chatfile::parse_messages(CHAT)
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let (code, out, err) = go(ChatAction::Print, dir.path(), "[{\"role\": \"user\"}\n,]");
        assert_eq!(code, 1);
        assert!(out.is_empty());
        assert!(err.starts_with("ybs: error: stdin:1:"), "{err}");
        let (code, _, err) = go(
            ChatAction::Print,
            dir.path(),
            r#"[{"role": "Bad Role", "content": "x"}]"#,
        );
        assert_eq!(code, 1);
        assert!(err.contains("role `Bad Role`"), "{err}");
        let (code, _, err) = go(
            ChatAction::Parse {
                file: "none.chat".into(),
            },
            dir.path(),
            "",
        );
        assert_eq!(code, 1);
        assert!(
            err.starts_with("ybs: error: none.chat: cannot read"),
            "{err}"
        );
        std::fs::write(
            dir.path().join("b.chat"),
            "user:\nhi\n\nfile: missing.txt\n",
        )
        .unwrap();
        let (code, _, err) = go(
            ChatAction::Expand {
                file: "b.chat".into(),
            },
            dir.path(),
            "",
        );
        assert_eq!(code, 1);
        assert!(
            err.contains("b.chat:4: File not found: missing.txt"),
            "{err}"
        );
    }

    #[test]
    fn expand_resolves_files_and_options() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.txt"), "forty-two\n").unwrap();
        let chat = "option: temperature 0.2\n\nuser:\nRead this.\n\nfile: n.txt\n";
        std::fs::write(dir.path().join("c.chat"), chat).unwrap();
        let (code, json, err) = go(
            ChatAction::Expand {
                file: "c.chat".into(),
            },
            dir.path(),
            "",
        );
        assert_eq!(code, 0, "{err}");
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["options"]["temperature"], "0.2");
        let contents: String = (value["messages"].as_array().unwrap().iter())
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect();
        assert!(contents.contains("forty-two"), "{json}");
        assert!(value["messages"][0]["line"].is_u64());
    }
}
