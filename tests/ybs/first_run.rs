//! The first run end to end: no provider configured, no API key and no Ollama is a short
//! guide and exit 2 without waiting on a retry; an API key picks its provider and says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::TcpListener;

use common::{Project, text};
use serde_json::Value;
use ybs_testkit::Turn;

/// A port on 127.0.0.1 where nothing listens.
fn closed_endpoint() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A project whose configuration names no provider or model.
fn unconfigured(turns: Vec<Turn>) -> Project {
    let project = Project::new(turns);
    project.configure(|config| {
        let llm = config["llm"].as_object_mut().unwrap();
        llm.remove("provider");
        llm.remove("model");
        llm.remove("endpoint");
    });
    project
}

#[test]
fn no_key_and_no_ollama_prints_the_guide_and_exits_2_at_once() {
    let project = unconfigured(Vec::new());
    let endpoint = closed_endpoint();
    for args in [
        vec!["--endpoint", endpoint.as_str(), "exec", "hi"],
        vec!["--endpoint", endpoint.as_str()],
    ] {
        let output = project.ybs_with_input(&args, "");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("ybs needs a model provider"), "{stderr}");
        for name in [
            "OPENROUTER_API_KEY",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "DEEPSEEK_API_KEY",
            ".ybs.json",
            "ybs config",
        ] {
            assert!(stderr.contains(name), "{name} missing: {stderr}");
        }
        assert!(
            !stderr.contains("error:") && !stderr.contains("caused by"),
            "{stderr}"
        );
        assert!(text(&output.stdout).is_empty());
    }
}

#[test]
fn an_api_key_picks_its_provider_and_says_so() {
    let project = unconfigured(vec![Turn::text(["hello"])]);
    let endpoint = format!("{}/v1", project.llm.base_url());
    let output = project
        .command(&["--endpoint", &endpoint, "exec", "--json", "hi"])
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ybs: using openai from OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-test"));
    let first: Value = serde_json::from_str(text(&output.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["provider"], "openai");
    assert_eq!(first["model"], "gpt-4.1");
    assert_eq!(project.bodies()[0]["model"], "gpt-4.1");
}

#[test]
fn the_repl_banner_names_the_pick_window_and_sandbox() {
    let project = unconfigured(Vec::new());
    let endpoint = format!("{}/v1", project.llm.base_url());
    let mut command = project.command(&["--endpoint", &endpoint]);
    command
        .env("ANTHROPIC_API_KEY", "a")
        .env("DEEPSEEK_API_KEY", "d")
        .stdin(std::process::Stdio::null());
    let output = command.output().unwrap();
    let stdout = text(&output.stdout);
    let banner = stdout.lines().next().unwrap_or_default();
    // The catalog's limits of the model picked from the key.
    assert!(
        banner.contains("(anthropic claude-sonnet-4-20250514, context 200k, output 32k, "),
        "{banner}"
    );
    assert!(banner.contains("sandbox on, network ask; using anthropic from ANTHROPIC_API_KEY (DEEPSEEK_API_KEY also set; choose with --provider"), "{banner}");
}
