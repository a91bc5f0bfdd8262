//! The daemon's cost per streamed chunk: one `send` whose reply is 10,000 text chunks from
//! the fake OpenRouter server, timed from writing the request to reading `done`, through the
//! real `bb7` binary (HTTP, SSE decoding, accumulation, one JSON line per chunk on stdout).
//! Divide the time by 10,000 for the added latency per chunk (an upper bound: it includes
//! the fake server's own work).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use ybs_testkit::{FakeLlm, Model, Script, Turn};

const CHUNKS: usize = 10_000;

fn stream(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/bb7")).unwrap();
    std::fs::create_dir_all(project.join(".bb7/chats")).unwrap();
    let server = FakeLlm::start(Script::new([]).with_models([Model::new("m", 200_000)])).unwrap();
    let config = json!({"api_key": "k", "base_url": format!("{}/api/v1", server.base_url()), "default_model": "m"});
    std::fs::write(home.join(".config/bb7/config.json"), config.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb7"))
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let call = |stdin: &mut std::process::ChildStdin, request: Value| {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    };
    call(
        &mut stdin,
        json!({"request_id":"1","action":"init","project_root":project}),
    );
    stdout.read_line(&mut line).unwrap();
    call(&mut stdin, json!({"request_id":"2","action":"chat_new"}));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let chunks: Vec<String> = (0..CHUNKS).map(|i| format!("w{i} ")).collect();

    let mut group = c.benchmark_group("stream");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("send_10000_chunks", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                server.push_turn(Turn::text(chunks.clone()));
                let start = Instant::now();
                call(
                    &mut stdin,
                    json!({"request_id":"s","action":"send","content":"go"}),
                );
                let mut seen = 0;
                loop {
                    line.clear();
                    stdout.read_line(&mut line).unwrap();
                    if line.contains("\"type\":\"chunk\"") {
                        seen += 1;
                    } else if line.contains("\"type\":\"done\"") {
                        break;
                    }
                }
                total += start.elapsed();
                assert_eq!(seen, CHUNKS);
            }
            total
        })
    });
    group.finish();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

criterion_group!(benches, stream);
criterion_main!(benches);
