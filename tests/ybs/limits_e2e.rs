//! End to end against the fake LLM announcing its limits: a 200k model through OpenRouter
//! (its window on the banner, in `ybs config` and the usage line, its output limit in each
//! request, no compaction far below its window) and a llama.cpp-like server with a 4k window
//! (the prompt shrunk to fit, a short task completed; a window too small refused before
//! anything is sent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, call, text};
use serde_json::json;
use ybs_testkit::{Fault, Model, Script, Turn, Usage, Window};

/// A project talking to the fake LLM as OpenRouter, whose list says `big/model` has a
/// 200,000-token window and 64,000 output tokens.
fn openrouter_project(turns: Vec<Turn>) -> Project {
    let mut model = Model::new("big/model", 200_000);
    model.max_completion_tokens = Some(64_000);
    let project = Project::with_script(Script::new(turns).with_models([model]));
    let endpoint = format!("{}/api/v1", project.llm.base_url());
    project.configure(|config| {
        config["llm"] = json!({"provider": "openrouter", "model": "big/model",
                               "endpoint": endpoint, "api_key": "sk-or-test"});
    });
    project
}

#[test]
fn a_200k_model_gets_its_window_and_output_limit() {
    let project = openrouter_project(vec![
        Turn::text(["Hello."]).with_usage(Usage::new(82_000, 5)),
        Turn::text(["Again."]),
    ]);
    let output = project.ybs_with_input(&[], "hi\n/usage\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("(openrouter big/model, context 200k, output 32k, sandbox"),
        "{stdout}"
    );
    assert!(stdout.contains("| ctx 41% of 200k"), "{stdout}");
    // `/usage` repeats the last turn's line, not zeros.
    assert_eq!(stdout.matches("tokens: 82,000 in").count(), 2, "{stdout}");
    assert!(
        stdout.contains(
            "model limits: context 200k, output 32k (big/model from the provider's GET /models"
        ),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies[0]["max_tokens"], json!(32_000), "{}", bodies[0]);

    let config = project.ybs(&["config"]);
    let shown = text(&config.stdout);
    assert!(
        shown.contains("#   context window 200,000 tokens (the provider's GET /models)"),
        "{shown}"
    );
    assert!(
        shown.contains("#   output 32,000 tokens (the provider's GET /models, the model allows 64,000; capped at 32,000"),
        "{shown}"
    );
    assert!(
        shown.contains("# Effective provider and model: openrouter big/model"),
        "{shown}"
    );
}

#[test]
fn switching_the_model_resolves_its_own_limits() {
    let mut big = Model::new("big/model", 200_000);
    big.max_completion_tokens = Some(64_000);
    let mut small = Model::new("small/model", 16_000);
    small.max_completion_tokens = Some(2_000);
    let project = Project::with_script(
        Script::new([Turn::text(["Big."]), Turn::text(["Small."])]).with_models([big, small]),
    );
    let endpoint = format!("{}/api/v1", project.llm.base_url());
    project.configure(|config| {
        config["llm"] = json!({"provider": "openrouter", "model": "big/model",
                               "endpoint": endpoint, "api_key": "sk-or-test"});
    });
    let output = project.ybs_with_input(&[], "hi\n/model small/model\nagain\n/usage\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains(
            "now using openrouter small/model (context 16k, output 2,000; context from the \
             provider's GET /models)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("model limits: context 16k, output 2,000 (small/model from"),
        "{stdout}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies[0]["max_tokens"], json!(32_000), "{}", bodies[0]);
    assert_eq!(bodies[1]["model"], "small/model");
    let asked = bodies[1]["max_tokens"].as_u64().unwrap();
    assert!(asked <= 2_000, "{}", bodies[1]);
}

#[test]
fn a_configured_window_and_output_win_over_the_providers() {
    let project = openrouter_project(vec![Turn::text(["Hello."])]);
    project.configure(|config| {
        config["context"] = json!({"max_tokens": 50_000});
        config["llm"]["max_tokens"] = json!(1_000);
    });
    let output = project.ybs(&["exec", "hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(project.bodies()[0]["max_tokens"], json!(1_000));
    let shown = text(&project.ybs(&["config"]).stdout);
    assert!(
        shown.contains("#   context window 50,000 tokens (configured, "),
        "{shown}"
    );
}

#[test]
fn a_conversation_far_below_a_200k_window_is_not_compacted() {
    // About 100,000 tokens: over 95% of the old fixed 32,000, under 95% of 200,000.
    let big = "word ".repeat(80_000);
    let project = openrouter_project(vec![Turn::text(["Noted."]), Turn::text(["Fine."])]);
    let output = project.ybs_with_input(&[], &format!("{big}\nnext\n"));
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        !stdout.contains("compact"),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 2);
    let second = bodies[1].to_string();
    assert!(
        second.contains("word word word"),
        "the big message was kept"
    );
}

/// A project whose server is a small llama.cpp: `n_ctx` tokens of four bytes each, counted on
/// the whole request body.
fn small_window_project(turns: Vec<Turn>, n_ctx: u64) -> Project {
    let window = Window {
        n_ctx,
        bytes_per_token: 4.0,
    };
    let project = Project::with_script(Script::new(turns).with_window(window));
    project.configure(|config| {
        config["llm"]["provider"] = json!("llamacpp");
    });
    project
}

#[test]
fn a_4k_window_shrinks_the_prompt_and_a_short_task_completes() {
    let project = small_window_project(
        vec![
            call("c1", "read_file", json!({"path": "notes.txt"})),
            Turn::text(["The note says hello."]),
        ],
        4_096,
    );
    project.git(&["init", "-q", "-b", "main"]);
    for index in 0..40 {
        project.write(
            &format!("module_{index}.py"),
            &format!("def function_number_{index}(argument):\n    return argument\n"),
        );
    }
    project.write("AGENTS.md", &"Always be careful with the code. ".repeat(60));
    project.write("notes.txt", "hello\n");
    let output = project.ybs(&["exec", "what does notes.txt say?"]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(text(&output.stdout).contains("The note says hello."));
    assert!(
        stderr.contains(
            "warning: the repository map was left out and the project's instructions \
             (AGENTS.md) were left out: the model's context window is 4,096 tokens (the \
             provider's GET /props)"
        ),
        "{stderr}"
    );
    let bodies = project.bodies();
    assert_eq!(bodies.len(), 2, "no request was refused");
    for body in &bodies {
        let tokens = body.to_string().len() / 4;
        assert!(tokens < 4_096, "{tokens} tokens sent");
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(!system.contains("# Repository map"), "{system}");
        assert!(body["max_tokens"].as_u64().unwrap() <= 1_024, "{body}");
    }
}

#[test]
fn a_window_too_small_for_the_smallest_prompt_sends_nothing() {
    let project = small_window_project(vec![Turn::text(["never"])], 512);
    let output = project.ybs(&["exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "the model's context window of 512 tokens (the provider's GET /props) is too small"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("llama-server -c 8192"), "{stderr}");
    // The error says it all: no warnings about what was left out on the way.
    assert!(!stderr.contains("warning:"), "{stderr}");
    assert!(project.bodies().is_empty(), "nothing was sent");
}

#[test]
fn a_llama_cpp_window_is_read_through_the_responses_and_anthropic_apis_too() {
    // llama.cpp serves both; its `/props` window holds whichever API ybs speaks to it.
    for provider in ["responses", "anthropic"] {
        let project = small_window_project(vec![Turn::text(["never"])], 512);
        project.configure(|config| {
            config["llm"]["provider"] = json!(provider);
        });
        let output = project.ybs(&["exec", "hi"]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{provider}: {stderr}");
        assert!(
            stderr.contains(
                "the model's context window of 512 tokens (the provider's GET /props) is too \
                 small"
            ),
            "{provider}: {stderr}"
        );
        assert!(project.bodies().is_empty(), "{provider}: nothing was sent");
        let paths: Vec<String> = (project.llm.requests().into_iter())
            .map(|request| request.path)
            .collect();
        assert!(
            paths.contains(&"/props".to_owned()),
            "{provider}: {paths:?}"
        );
        assert!(
            paths.contains(&"/tokenize".to_owned()),
            "{provider}: {paths:?}"
        );
    }
}

#[test]
fn a_message_larger_than_the_window_is_refused_before_anything_is_sent() {
    let project = small_window_project(vec![Turn::text(["never"])], 4_096);
    let message = "line of a large pasted file with some words\n".repeat(600);
    let output = project.ybs(&["exec", &message]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "this turn does not fit the model's context window of 4,096 tokens (the \
             provider's GET /props)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("nothing more was sent"), "{stderr}");
    assert!(!stderr.contains("pairs"), "{stderr}");
    assert!(project.bodies().is_empty(), "nothing was sent");
}

#[test]
fn a_server_refusing_a_request_ybs_counted_as_fitting_is_said_so() {
    // An unnamed server: ybs takes its default window, the server's is far smaller.
    let overflow = || Turn::fault(Fault::context_overflow(9_000, 2_048));
    let project = Project::with_script(Script::new((0..6).map(|_| overflow())));
    let output = project.ybs(&["exec", "hi"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "the model said the request is larger than its context window, even with the older \
             exchanges left out, though ybs counted about"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("the server's window is smaller or it counts tokens differently"),
        "{stderr}"
    );
    assert!(stderr.contains("Set context.max_tokens"), "{stderr}");
    assert!(
        !stderr.contains("   "),
        "no run of spaces inside the message: {stderr}"
    );
}

/// A project talking to the fake LLM as LM Studio (or an unnamed server on 127.0.0.1), whose
/// `/v1/models` says nothing of windows but whose own `/api/v0/models` does.
fn lm_studio_project(provider: &str, model: Model) -> Project {
    let id = model.id.clone();
    let project = Project::with_script(
        Script::new([Turn::text(["Hello."])])
            .with_models([model])
            .with_lm_studio(),
    );
    let endpoint = format!("{}/v1", project.llm.base_url());
    project.configure(|config| {
        config["llm"] = json!({"provider": provider, "model": id, "endpoint": endpoint});
    });
    project
}

#[test]
fn lm_studio_says_the_window_its_model_is_loaded_with() {
    let mut loaded = Model::new("qwen/qwen3-8b", 32_768);
    loaded.loaded_context_length = Some(16_384);
    let project = lm_studio_project("lmstudio", loaded);
    let output = project.ybs(&["exec", "hi"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let paths: Vec<String> = (project.llm.requests().into_iter())
        .map(|request| request.path)
        .collect();
    assert!(
        paths.contains(&"/api/v0/models/qwen%2Fqwen3-8b".to_owned()),
        "{paths:?}"
    );
    let shown = text(&project.ybs(&["config"]).stdout);
    assert!(
        shown.contains(
            "#   context window 16,384 tokens (the provider's GET /api/v0/models \
             (loaded_context_length))"
        ),
        "{shown}"
    );

    // Not loaded: the most it can be loaded with; the same from an unnamed local server.
    let project = lm_studio_project("openai-compatible", Model::new("small", 8_192));
    let output = project.ybs_with_input(&[], "hi\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("(openai-compatible small, context 8,192, output 2,048,"),
        "{stdout}"
    );
    let shown = text(&project.ybs(&["config"]).stdout);
    assert!(
        shown.contains("(the provider's GET /api/v0/models (max_context_length))"),
        "{shown}"
    );
}
