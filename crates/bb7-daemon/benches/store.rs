//! Benchmarks of the store's hot paths: `get_file_statuses` on a chat with 200 context files
//! (50 of them with pending output, so their tokens are counted twice), `search_chats` over
//! 1,000 chats of 10 messages each (a query that matches nothing, so every chat is read), and
//! the small actions `chat_new`, `chat_list`, `context_add` (20 KB) and `context_list` in a
//! project of 300 chats (`scripts/bench-bb7-actions` times the same through the protocol,
//! side by side with the first bb7).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use bb7_daemon::store::ChatStore;
use bb7_daemon::store::model::Chat;
use bb7_daemon::wire::requests::fields;
use bb7_daemon::{Home, Request, Session};
use criterion::{Criterion, criterion_group, criterion_main};
use ybs_core::Message;

fn source_file(n: usize) -> String {
    (0..60)
        .map(|line| {
            format!("    let value_{line} = compute_{n}(input_{line}, {line}); // step {line}\n")
        })
        .collect()
}

fn session(dir: &std::path::Path) -> Session {
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut session = Session::new(Home::new(dir.join("home"), None));
    let root = project.display().to_string();
    session
        .dispatch(Request::Bb7Init(fields::Bb7Init {
            project_root: root.clone(),
        }))
        .unwrap();
    session
        .dispatch(Request::Init(fields::Init { project_root: root }))
        .unwrap();
    session
}

fn file_statuses(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut session = session(dir.path());
    session
        .dispatch(Request::ChatNew(fields::ChatNew {
            name: "bench".into(),
            model: None,
            global: false,
        }))
        .unwrap();
    let active = session.active_mut().unwrap();
    for n in 0..200 {
        active
            .add_file(&format!("src/file_{n}.rs"), &source_file(n), false)
            .unwrap();
        if n % 4 == 0 {
            active
                .write_output(&format!("src/file_{n}.rs"), &source_file(n + 1000))
                .unwrap();
        }
    }
    c.bench_function("get_file_statuses/200_files", |b| {
        b.iter(|| {
            let statuses = session.active().unwrap().file_statuses().unwrap();
            assert_eq!(statuses.len(), 200);
        })
    });
}

fn search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut session = session(dir.path());
    let store = ChatStore::new(dir.path().join("project/.bb7/chats"), false);
    for n in 0..1000 {
        let mut chat = Chat::new(String::new(), format!("chat number {n}"), "m".into(), false);
        for m in 0..10 {
            chat.messages.push(Message::user(format!(
                "message {m} of chat {n}: please refactor the physics engine so that collisions are resolved \
                 before integration, and keep the public API of the world module unchanged."
            )));
        }
        store.create(chat).unwrap();
    }
    c.bench_function("search_chats/1000_chats_no_match", |b| {
        b.iter(|| {
            let reply = session
                .dispatch(Request::SearchChats(fields::SearchChats {
                    query: "zebra crossing".into(),
                    global: false,
                }))
                .unwrap()
                .unwrap();
            assert_eq!(reply.get("results").unwrap().as_array().unwrap().len(), 0);
        })
    });
    c.bench_function("search_chats/1000_chats_content_match", |b| {
        b.iter(|| {
            let reply = session
                .dispatch(Request::SearchChats(fields::SearchChats {
                    query: "COLLISIONS".into(),
                    global: false,
                }))
                .unwrap()
                .unwrap();
            assert_eq!(
                reply.get("results").unwrap().as_array().unwrap().len(),
                1000
            );
        })
    });
}

/// About 20 KB of source text, different for each `n`.
fn twenty_kb(n: usize) -> String {
    let mut text = String::with_capacity(20_100);
    let mut line = 0;
    while text.len() < 20_000 {
        text.push_str(&format!(
            "    let value_{line} = compute(input_{line}, {n}); // a generated line\n"
        ));
        line += 1;
    }
    text
}

fn small_actions(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut session = session(dir.path());
    for n in 0..300 {
        session
            .dispatch(Request::ChatNew(fields::ChatNew {
                name: format!("chat {n}"),
                model: None,
                global: false,
            }))
            .unwrap();
    }
    c.bench_function("chat_list/300_chats", |b| {
        b.iter(|| {
            let reply = session
                .dispatch(Request::ChatList(fields::ChatList { global: false }))
                .unwrap()
                .unwrap();
            assert!(reply.get("chats").unwrap().as_array().unwrap().len() >= 300);
        })
    });
    let mut n = 0;
    c.bench_function("context_add/20_kb", |b| {
        b.iter(|| {
            n += 1;
            session
                .dispatch(Request::ContextAdd(fields::ContextAdd {
                    path: format!("src/file_{n}.rs"),
                    content: twenty_kb(n),
                    readonly: false,
                }))
                .unwrap();
        })
    });
    c.bench_function("context_list", |b| {
        b.iter(|| {
            let reply = session
                .dispatch(Request::ContextList(fields::ContextList {}))
                .unwrap()
                .unwrap();
            assert!(!reply.get("files").unwrap().as_array().unwrap().is_empty());
        })
    });
    c.bench_function("chat_new/300_chats", |b| {
        b.iter(|| {
            session
                .dispatch(Request::ChatNew(fields::ChatNew {
                    name: "bench".into(),
                    model: None,
                    global: false,
                }))
                .unwrap();
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = file_statuses, search, small_actions
}
criterion_main!(benches);
