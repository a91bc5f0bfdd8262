//! Taking an undone turn out of the session file it was saved in (`exec`, the REPL), so that
//! `--resume` does not hand the model a conversation in which its change is still there.
//!
//! The journal keeps the session file as it was before and after the turn was saved in it.
//! When the file is still as the turn left it, it is put back as it was before (removed when
//! the turn started it). When later turns were saved after it (a resumed session, a REPL
//! turn that changed no file and so left no undo record), only the undone turn's messages
//! are dropped and the later ones stay. A file changed otherwise since (compacted, edited by
//! hand, removed) is left alone: ybs cannot tell which of its messages are the turn's.

use ybs_chatfile::{ChatMessage, parse_messages, print};

use super::record::FileRecord;

/// What undo does to the session file of a turn; computed before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionPlan {
    /// The turn left the file as it was (its save failed): nothing to do.
    Unchanged,
    /// Write `bytes` (`None`: remove the file, which the turn created); `later` is how many
    /// turns saved after the undone one stay in it.
    Rewrite {
        /// The new contents.
        bytes: Option<Vec<u8>>,
        /// Turns saved after the undone one, kept.
        later: usize,
    },
    /// Leave the file as it is, for this reason.
    Leave(String),
}

/// What to do to the session file recorded as `record`, which is `now` on disk.
pub fn plan(record: &FileRecord, now: Option<&[u8]>) -> SessionPlan {
    if record.before == record.after {
        return SessionPlan::Unchanged;
    }
    let Some(now) = now else {
        return SessionPlan::Leave("it was removed since that turn".to_owned());
    };
    if record.after.as_deref() == Some(now) {
        return SessionPlan::Rewrite {
            bytes: record.before.clone(),
            later: 0,
        };
    }
    let messages = |bytes: &[u8]| std::str::from_utf8(bytes).ok().map(parse_messages);
    let before = record.before.as_deref().map_or(Some(Vec::new()), messages);
    let after = record.after.as_deref().and_then(messages);
    let (Some(before), Some(after), Some(now)) = (before, after, messages(now)) else {
        return SessionPlan::Leave("it is not a chat file any more".to_owned());
    };
    if !(after.starts_with(&before) && now.starts_with(&after)) {
        return SessionPlan::Leave(
            "it changed since that turn other than by later turns (compacted or edited), so \
             the turn's messages cannot be told apart"
                .to_owned(),
        );
    }
    let later_messages = &now[after.len()..];
    let later = (later_messages.iter())
        .filter(|message| message.role == "user")
        .count();
    let kept: Vec<ChatMessage> = before.into_iter().chain(later_messages.to_vec()).collect();
    if kept.is_empty() && record.before.is_none() {
        return SessionPlan::Rewrite { bytes: None, later };
    }
    match print(&kept) {
        Ok(text) => SessionPlan::Rewrite {
            bytes: Some(text.into_bytes()),
            later,
        },
        Err(error) => SessionPlan::Leave(format!("its messages cannot be written back: {error}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;

    use super::*;

    fn chat(messages: &[(&str, &str)]) -> Vec<u8> {
        let messages: Vec<ChatMessage> = (messages.iter())
            .map(|(role, content)| ChatMessage::new(*role, *content))
            .collect();
        print(&messages).unwrap().into_bytes()
    }

    fn record(before: Option<Vec<u8>>, after: Vec<u8>) -> FileRecord {
        FileRecord {
            path: PathBuf::from("/s.chat"),
            before,
            mode: Some(0o600),
            after: Some(after),
            unrestorable: None,
        }
    }

    const ONE: [(&str, &str); 2] = [("user", "one"), ("assistant", "did one")];
    const TWO: [(&str, &str); 2] = [("user", "two"), ("assistant", "did two")];
    const THREE: [(&str, &str); 2] = [("user", "three"), ("assistant", "did three")];

    #[test]
    fn a_session_as_the_turn_left_it_goes_back_as_it_was() {
        let before = chat(&ONE);
        let after = chat(&[ONE, TWO].concat());
        let record = record(Some(before.clone()), after.clone());
        assert_eq!(
            plan(&record, Some(&after)),
            SessionPlan::Rewrite {
                bytes: Some(before),
                later: 0
            }
        );
        // The turn started the session: it is removed.
        let started = FileRecord {
            before: None,
            ..record.clone()
        };
        assert_eq!(
            plan(&started, Some(&after)),
            SessionPlan::Rewrite {
                bytes: None,
                later: 0
            }
        );
        let failed_save = FileRecord {
            after: record.before.clone(),
            ..record
        };
        assert_eq!(plan(&failed_save, Some(&after)), SessionPlan::Unchanged);
    }

    #[test]
    fn later_turns_stay_and_only_the_undone_turn_is_dropped() {
        let record = record(Some(chat(&ONE)), chat(&[ONE, TWO].concat()));
        let now = chat(&[ONE, TWO, THREE].concat());
        assert_eq!(
            plan(&record, Some(&now)),
            SessionPlan::Rewrite {
                bytes: Some(chat(&[ONE, THREE].concat())),
                later: 1
            }
        );
        let started = FileRecord {
            before: None,
            ..record
        };
        assert_eq!(
            plan(&started, Some(&now)),
            SessionPlan::Rewrite {
                bytes: Some(chat(&THREE)),
                later: 1
            }
        );
    }

    #[test]
    fn a_session_changed_otherwise_is_left_alone() {
        let record = record(Some(chat(&ONE)), chat(&[ONE, TWO].concat()));
        let compacted = chat(&[("user", "summary"), TWO[1], THREE[0]]);
        let SessionPlan::Leave(reason) = plan(&record, Some(&compacted)) else {
            panic!("rewritten");
        };
        assert!(reason.contains("compacted or edited"), "{reason}");
        assert_eq!(
            plan(&record, None),
            SessionPlan::Leave("it was removed since that turn".to_owned())
        );
        assert!(matches!(
            plan(&record, Some(&[0xff, 0xfe])),
            SessionPlan::Leave(_)
        ));
    }
}
