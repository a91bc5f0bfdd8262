//! [`Reply`]: one line on stdout, a JSON object with a `type` (the body's
//! [`ReplyBody::KIND`]) plus `request_id` when it answers a request, written with the keys of
//! every object sorted ([`crate::wire::sorted`]). The bodies are in
//! [`crate::wire::replies`].

use serde_json::{Map, Value};

use crate::store::model::ContextFile;
use crate::wire::replies::{Ack, ContextList, ErrorReply, ReplyBody};

/// One line on stdout: a JSON object with a `type`, and `request_id` when it answers a
/// request. Built from a body with [`Reply::new`]; [`Reply::get`] and [`Reply::fields`] read
/// it (tests and benchmarks look into replies).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    fields: Map<String, Value>,
    /// One more field, already JSON text with sorted keys ([`crate::wire::raw_lists`]).
    raw: Option<(&'static str, String)>,
}

impl Reply {
    /// The line of `body`.
    pub fn new<B: ReplyBody + ?Sized>(body: &B) -> Reply {
        let mut fields = match serde_json::to_value(body) {
            Ok(Value::Object(fields)) => fields,
            Ok(_) => Map::new(),
            Err(err) => {
                return Reply::error(format!("Internal error: cannot encode the reply: {err}"));
            }
        };
        fields.insert("type".into(), B::KIND.into());
        Reply { fields, raw: None }
    }

    /// `context_list`: the same line as `Reply::new(&ContextList { files })`, written without
    /// a `Value` tree.
    pub fn context_list(files: &[ContextFile]) -> Reply {
        let mut fields = Map::new();
        fields.insert("type".into(), ContextList::KIND.into());
        Reply {
            fields,
            raw: Some(("files", crate::wire::raw_lists::context_files(files))),
        }
    }

    /// `{"type": "ok"}`.
    pub fn ok() -> Reply {
        Reply::new(&Ack {})
    }

    /// `{"type": "error", "message": ...}`.
    pub fn error(message: impl Into<String>) -> Reply {
        Reply::new(&ErrorReply {
            message: message.into(),
            counters: None,
        })
    }

    /// Sets the request id (nothing when `None`).
    pub fn for_request(mut self, request_id: Option<&str>) -> Reply {
        if let Some(id) = request_id {
            self.fields.insert("request_id".into(), id.into());
        }
        self
    }

    /// The `type` field.
    pub fn kind(&self) -> &str {
        self.fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The field `key`, if the reply has it.
    pub fn get(&self, key: &str) -> Option<Value> {
        match &self.raw {
            Some((raw, json)) if *raw == key => serde_json::from_str(json).ok(),
            _ => self.fields.get(key).cloned(),
        }
    }

    /// Every field of the reply.
    pub fn fields(&self) -> Map<String, Value> {
        let mut fields = self.fields.clone();
        if let Some((key, json)) = &self.raw {
            fields.insert(
                (*key).into(),
                serde_json::from_str(json).unwrap_or(Value::Null),
            );
        }
        fields
    }

    /// The reply as one JSON line (without the newline), the keys of every object sorted.
    pub fn to_line(&self) -> String {
        let line = match &self.raw {
            None => serde_json::to_string(&crate::wire::sorted::SortedMap(&self.fields)),
            Some((key, json)) => self.line_with_raw(key, json),
        };
        line.unwrap_or_else(|err| {
            serde_json::json!({"message": format!("Internal error: cannot encode the reply: {err}"),
                "type": "error"})
            .to_string()
        })
    }

    /// The line with the raw field `key` (JSON text `json`) in its sorted place.
    fn line_with_raw(&self, key: &str, json: &str) -> serde_json::Result<String> {
        let mut entries: Vec<(&str, Option<&Value>)> = (self.fields.iter())
            .filter(|(name, _)| name.as_str() != key)
            .map(|(name, value)| (name.as_str(), Some(value)))
            .collect();
        entries.push((key, None));
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut line = String::with_capacity(json.len() + 64);
        line.push('{');
        for (index, (name, value)) in entries.into_iter().enumerate() {
            if index > 0 {
                line.push(',');
            }
            line.push_str(&serde_json::to_string(name)?);
            line.push(':');
            match value {
                Some(value) => {
                    line.push_str(&serde_json::to_string(&crate::wire::sorted::Sorted(value))?)
                }
                None => line.push_str(json),
            }
        }
        line.push('}');
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::replies::{
        Counters, Done, Opened, TextTokenEstimate, TokenCounts, UsageFigures,
    };

    #[test]
    fn context_list_lines_are_those_of_the_body() {
        let file = |path: &str, version: &str, section: Option<(u32, u32)>| ContextFile {
            path: path.into(),
            readonly: path.len() % 2 == 0,
            external: path.starts_with('/'),
            version: version.into(),
            start_line: section.map(|s| s.0),
            end_line: section.map(|s| s.1),
        };
        let lists = [
            Vec::new(),
            vec![file("src/a.rs", "f71218ef", None)],
            vec![
                file("/abs/ext \"quoted\".md", "", Some((3, 9))),
                file("ünï\u{7}\\code\n.rs", "00", None),
                file("b", "", None),
            ],
        ];
        for files in lists {
            let fast = Reply::context_list(&files).for_request(Some("r1"));
            let slow = Reply::new(&ContextList { files: &files }).for_request(Some("r1"));
            assert_eq!(fast.to_line(), slow.to_line());
            assert_eq!(fast.fields(), slow.fields());
            assert_eq!(fast.get("files"), slow.get("files"));
            assert_eq!(fast.kind(), "context_list");
        }
        // Every field of a context file is written: one added later must be added there too.
        let full = file("/x", "v", Some((1, 2)));
        let keys = serde_json::to_value(&full).unwrap();
        let written: Value = serde_json::from_str(&crate::wire::raw_lists::context_files(
            std::slice::from_ref(&full),
        ))
        .unwrap();
        assert_eq!(written[0], keys);
    }

    #[test]
    fn lines_have_sorted_keys_and_leave_out_what_is_empty() {
        let done = Reply::new(&Done {
            output_files: vec!["a.rs".into()],
            usage: UsageFigures::default(),
            duration: 1.5,
            counters: Counters {
                predicted: 2,
                trimmed: 0,
                visible: 3,
            },
        })
        .for_request(Some("7"));
        assert_eq!(
            done.to_line(),
            r#"{"duration":1.5,"output_files":["a.rs"],"predicted":2,"request_id":"7","trimmed":0,"type":"done","usage":{"cached_tokens":0,"completion_tokens":0,"cost":0.0,"prompt_tokens":0,"total_tokens":0},"visible":3}"#
        );
        assert_eq!(Reply::new(&Opened::default()).to_line(), r#"{"type":"ok"}"#);
        // Sorted whatever order the keys were inserted in, nested objects too.
        let mut inserted = Map::new();
        inserted.insert(
            "zeta".into(),
            serde_json::json!({"b": 1, "a": [{"d": 2, "c": 3}]}),
        );
        inserted.insert("alpha".into(), Value::Null);
        assert_eq!(
            Reply {
                fields: inserted,
                raw: None
            }
            .to_line(),
            r#"{"alpha":null,"zeta":{"a":[{"c":3,"d":2}],"b":1}}"#
        );
        assert_eq!(
            Reply::error("No active chat").to_line(),
            r#"{"message":"No active chat","type":"error"}"#
        );
        assert_eq!(
            Reply::new(&TextTokenEstimate {
                tokens: TokenCounts::Each(vec![1, 2])
            })
            .to_line(),
            r#"{"tokens":[1,2],"type":"text_token_estimate"}"#
        );
    }
}
