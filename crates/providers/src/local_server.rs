//! What a server of one's own (on this machine or the local network) says about the model it
//! runs, beyond `/models`: llama.cpp's `/props` gives the window of a request slot, which is
//! what one request may fill, and its `/tokenize` how its tokenizer counts. Asked by every
//! adapter that can talk to such a server (Chat Completions, Responses, Anthropic Messages).

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use ybs_core::LlmError;

use crate::http::Transport;
use crate::provider::{ModelInfo, ModelLimits};

/// The limits of `model` from a listing (`listed`, read with `source`), and from llama.cpp's
/// `/props` and `/tokenize` when `base` is a server of one's own: what the Responses and
/// Anthropic adapters know of a model. The listing's error when neither says anything.
pub(crate) async fn listed_or_local(
    listed: Result<Vec<ModelInfo>, LlmError>,
    (model, source): (&str, &str),
    (http, base, headers): (&Transport, &str, &HeaderMap),
) -> Result<ModelLimits, LlmError> {
    let mut limits = match &listed {
        Ok(models) => ModelLimits::from_list(models, model, source),
        Err(_) => ModelLimits::default(),
    };
    // A server that did not answer its model list will not answer `/props` either.
    let refused = listed.as_ref().is_err_and(crate::retry::never_reached);
    if is_local(base) && !refused {
        read_llama_cpp_props(http, server_root(base), headers, &mut limits).await;
    }
    if limits.is_empty() {
        listed?;
    }
    Ok(limits)
}

/// Reads llama.cpp's `/props` and `/tokenize` at `root` (the server without `/v1`) into
/// `limits`: the window and its source, and the characters per token of the server's
/// tokenizer. A server without them (not llama.cpp) leaves `limits` as they were.
pub(crate) async fn read_llama_cpp_props(
    http: &Transport,
    root: &str,
    headers: &HeaderMap,
    limits: &mut ModelLimits,
) {
    let Ok(props) = http.get_json(&format!("{root}/props"), headers).await else {
        return;
    };
    let n_ctx = (props.pointer("/default_generation_settings/n_ctx"))
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0);
    let Some(n_ctx) = n_ctx else {
        return;
    };
    limits.context_window = Some(n_ctx);
    limits.source = "GET /props".to_owned();
    let body = json!({ "content": CALIBRATION });
    if let Ok(answer) = http
        .post_json(&format!("{root}/tokenize"), headers, &body)
        .await
    {
        limits.chars_per_token = chars_per_token(&answer);
    }
}

/// A text like those a coding agent sends (prose, code, JSON), to learn how a server's
/// tokenizer counts.
pub(crate) const CALIBRATION: &str = "You are a coding agent working in a repository. Read the files \
    before you change them, run the tests, and explain what you did.\n\n```rust\nfn main() {\n    \
    let total: u64 = (1..=10).sum();\n    println!(\"{total}\");\n}\n```\n\
    {\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\", \"offset\": 1}}\n";

/// Characters per token from a `/tokenize` answer for [`CALIBRATION`].
pub(crate) fn chars_per_token(answer: &Value) -> Option<f64> {
    let tokens = answer.get("tokens").and_then(Value::as_array)?.len();
    (tokens > 0).then(|| CALIBRATION.chars().count() as f64 / tokens as f64)
}

/// Whether `base` names this machine or a private network address (where a server of
/// one's own, such as LM Studio, runs).
pub(crate) fn is_local(base: &str) -> bool {
    use std::net::IpAddr;
    let Ok(url) = reqwest::Url::parse(base) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.ends_with(".local"),
    }
}

/// The server's root for its own endpoints (`/props`, `/tokenize`): the base URL without
/// its `/v1`.
pub(crate) fn server_root(base: &str) -> &str {
    base.strip_suffix("/v1").unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_servers_are_this_machine_and_private_networks() {
        for base in [
            "http://localhost:1234/v1",
            "http://127.0.0.1:1234/v1",
            "http://192.168.1.20:1234/v1",
            "http://[::1]:1234/v1",
            "http://studio.local:1234/v1",
        ] {
            assert!(is_local(base), "{base}");
        }
        for base in [
            "https://api.groq.com/openai/v1",
            "http://8.8.8.8/v1",
            "nonsense",
        ] {
            assert!(!is_local(base), "{base}");
        }
    }
}
