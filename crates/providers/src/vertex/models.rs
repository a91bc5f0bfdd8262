//! The models a Vertex provider can call: the publisher's models of Model Garden
//! (`GET /v1beta1/publishers/{google|anthropic}/models`), Gemini's or Claude's; the
//! configured model alone when the list cannot be had (the credentials may not list).

use serde_json::Value;
use ybs_core::LlmError;

use crate::provider::ModelInfo;

/// The most pages followed; Model Garden's lists are a few pages at most.
const MAX_PAGES: usize = 10;

/// The list URL of `publisher` (`google`, `anthropic`) at the host of `base`
/// (`https://HOST/v1/projects/...`).
pub(super) fn list_url(base: &str, publisher: &str, page_token: Option<&str>) -> String {
    let host = base.split("/v1/projects/").next().unwrap_or(base);
    let mut url = format!("{host}/v1beta1/publishers/{publisher}/models?pageSize=100");
    if let Some(token) = page_token {
        url.push_str("&pageToken=");
        url.push_str(&crate::wire::path_segment(token));
    }
    url
}

/// The chat models of one page (`publisherModels[].name`, `publishers/P/models/ID`), and
/// the token of the next page.
pub(super) fn page(publisher: &str, value: &Value) -> (Vec<ModelInfo>, Option<String>) {
    let family = if publisher == "anthropic" {
        "claude"
    } else {
        "gemini"
    };
    let models = (value["publisherModels"].as_array().into_iter().flatten())
        .filter_map(|model| model["name"].as_str())
        .filter_map(|name| name.rsplit('/').next())
        .filter(|id| id.starts_with(family))
        .map(ModelInfo::new)
        .collect();
    let next = (value["nextPageToken"].as_str())
        .filter(|token| !token.is_empty())
        .map(str::to_owned);
    (models, next)
}

/// Every page, fetched by `get`; the configured `model` first when the list lacks it.
pub(super) async fn list<F, Fut>(base: &str, publisher: &str, model: &str, get: F) -> Vec<ModelInfo>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<Value, LlmError>>,
{
    let mut models: Vec<ModelInfo> = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        match get(list_url(base, publisher, token.as_deref())).await {
            Ok(value) => {
                let (found, next) = page(publisher, &value);
                models.extend(found);
                token = next;
                if token.is_none() {
                    break;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot list Vertex AI's models; using the configured one");
                break;
            }
        }
    }
    if !models.iter().any(|listed| listed.id == model) {
        models.insert(0, ModelInfo::new(model));
    }
    models
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_keep_the_publishers_chat_models() {
        let base = "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5";
        assert_eq!(
            list_url(base, "anthropic", Some("a b")),
            "https://us-east5-aiplatform.googleapis.com/v1beta1/publishers/anthropic/models?pageSize=100&pageToken=a%20b"
        );
        let value = json!({"publisherModels": [
            {"name": "publishers/google/models/gemini-2.5-flash", "versionId": "001"},
            {"name": "publishers/google/models/imagen-4.0-generate-001"}
        ], "nextPageToken": "t2"});
        let (models, next) = page("google", &value);
        let ids: Vec<&str> = models.iter().map(|model| model.id.as_str()).collect();
        assert_eq!(ids, ["gemini-2.5-flash"]);
        assert_eq!(next.as_deref(), Some("t2"));
    }
}
