//! Vertex AI's model list against `ybs-testkit`'s fake: the publisher's models of Model
//! Garden, and the configured model alone when listing is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ybs_providers::{ProviderConfig, ProviderKind, build_with_env};
use ybs_testkit::{FakeLlm, Model, Script};

#[tokio::test]
async fn vertex_lists_the_publishers_models_of_model_garden() {
    let script = Script::new([]).with_models([
        Model::new("gemini-2.5-pro", 1_048_576),
        Model::new("gemini-2.5-flash", 1_048_576),
        Model::new("claude-sonnet-4-5@20250929", 200_000),
    ]);
    let server = FakeLlm::start(script).unwrap();
    let endpoint = format!("{}/v1/projects/p/locations/us-east5", server.base_url());
    let list = |kind: ProviderKind, model: &str, token: &str| {
        let config = ProviderConfig::new(kind, model)
            .with_endpoint(endpoint.clone())
            .with_api_key(token);
        build_with_env(&config, |_| None).unwrap()
    };
    let gemini = list(ProviderKind::Vertex, "gemini-2.5-flash", "ya29.fake-1");
    let ids: Vec<String> = (gemini.list_models().await.unwrap().into_iter())
        .map(|model| model.id)
        .collect();
    assert_eq!(ids, ["gemini-2.5-pro", "gemini-2.5-flash"]);
    let claude = list(
        ProviderKind::VertexAnthropic,
        "claude-sonnet-4-5@20250929",
        "ya29.fake-1",
    );
    let ids: Vec<String> = (claude.list_models().await.unwrap().into_iter())
        .map(|model| model.id)
        .collect();
    assert_eq!(ids, ["claude-sonnet-4-5@20250929"]);
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|request| request.path == "/v1beta1/publishers/anthropic/models"),
        "{requests:?}"
    );
    // A token the service refuses: the configured model alone.
    let refused = list(ProviderKind::Vertex, "gemini-2.5-flash", "ya29.revoked");
    let ids: Vec<String> = (refused.list_models().await.unwrap().into_iter())
        .map(|model| model.id)
        .collect();
    assert_eq!(ids, ["gemini-2.5-flash"]);
}
