//! What MCP costs: connecting to a server over streamable HTTP (handshake and tool list), and
//! one tool call through the registry (argument check, the MCP runtime, HTTP, the server and
//! back), against the testkit's in-process server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// criterion_group! generates an undocumented pub function.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use ybs_agent::mcp::{McpServerSpec, McpTransport, connect_all};
use ybs_tools::{ConfirmationPolicy, PathSandbox, ShellPolicy, ToolContext, ToolRegistry};

fn spec(url: String) -> McpServerSpec {
    McpServerSpec {
        name: "bench".into(),
        transport: McpTransport::Http {
            url,
            headers: BTreeMap::new(),
        },
        only: Vec::new(),
        trust: true,
        startup_timeout: Duration::from_secs(10),
        tool_timeout: Duration::from_secs(10),
    }
}

fn mcp(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ybs_testkit::mcp::serve_http(
            ybs_testkit::mcp::McpConfig::new("bench"),
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    let url = server.url();

    c.bench_function("mcp_connect_http", |b| {
        b.iter(|| {
            let load = connect_all(vec![spec(url.clone())]);
            assert!(load.failures.is_empty());
            black_box(load.tools.len())
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let sandbox =
        PathSandbox::new([dir.path().display().to_string()], Vec::<String>::new()).unwrap();
    let context = ToolContext::new(sandbox, ShellPolicy::default()).unwrap();
    let mut registry = ToolRegistry::new();
    let mut policy = ConfirmationPolicy::default();
    let failures =
        ybs_agent::setup::add_mcp_tools(vec![spec(url.clone())], &mut registry, &mut policy);
    assert!(failures.is_empty());
    let args = json!({"a": 2, "b": 3});
    c.bench_function("mcp_call_http", |b| {
        b.iter(|| black_box(registry.invoke("bench__add", &args, &context).unwrap()))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).sample_size(30);
    targets = mcp
}
criterion_main!(benches);
