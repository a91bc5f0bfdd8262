//! The control endpoints under `/_fake/`, for tests in other processes: the recorded requests
//! and the turn queue.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::respond::json_response;
use super::state::Shared;
use crate::script::{Script, Turn};

/// The `/_fake/` endpoints: the recorded requests and the turn queue.
pub(super) fn control_endpoint(
    shared: &Shared,
    method: &Method,
    control: &str,
    body: Value,
) -> Response {
    match (method.as_str(), control) {
        ("GET", "requests") => {
            let requests = shared.lock().requests.clone();
            json_response(StatusCode::OK, &json!(requests))
        }
        ("DELETE", "requests") => {
            shared.lock().requests.clear();
            json_response(StatusCode::OK, &json!({"cleared": true}))
        }
        ("GET", "turns") => {
            let turns: Vec<Turn> = shared.lock().turns.iter().cloned().collect();
            json_response(
                StatusCode::OK,
                &json!({"remaining": turns.len(), "turns": turns}),
            )
        }
        ("POST", "turns") => match parse_turns(body) {
            Ok(turns) => {
                let mut inner = shared.lock();
                let added = turns.len();
                inner.turns.extend(turns);
                json_response(
                    StatusCode::OK,
                    &json!({"added": added, "remaining": inner.turns.len()}),
                )
            }
            Err(err) => json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": format!(
                    "fake-llm: POST /_fake/turns wants a turn, an array of turns or \
                     {{\"turns\": [...]}}: {err}"
                )}),
            ),
        },
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!(
                "fake-llm: no control endpoint {method} /_fake/{control} (try GET /_fake/requests, \
                 DELETE /_fake/requests, GET /_fake/turns, POST /_fake/turns)"
            )}),
        ),
    }
}

fn parse_turns(body: Value) -> Result<Vec<Turn>, serde_json::Error> {
    match body {
        Value::Array(_) => serde_json::from_value(body),
        Value::Object(ref map) if map.contains_key("turns") && map.len() == 1 => {
            let script: Script = serde_json::from_value(body)?;
            Ok(script.turns)
        }
        other => Ok(vec![serde_json::from_value(other)?]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_turns_accept_three_shapes() {
        assert_eq!(parse_turns(json!({"text": ["a"]})).unwrap().len(), 1);
        assert_eq!(parse_turns(json!([{"text": ["a"]}, {}])).unwrap().len(), 2);
        assert_eq!(parse_turns(json!({"turns": [{}]})).unwrap().len(), 1);
        assert!(parse_turns(json!({"nope": 1})).is_err());
    }
}
