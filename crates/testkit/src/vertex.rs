//! Vertex AI: Gemini models at
//! `POST /v1/projects/{project}/locations/{region}/publishers/google/models/{model}:streamGenerateContent`
//! (the Gemini wire of `gemini`), Claude at `.../publishers/anthropic/models/{model}:streamRawPredict`
//! (the Anthropic wire, the model named by the path), and Google's OAuth token endpoint
//! `POST /token` that trades a service account's signed JWT or a refresh token for an access
//! token. A model request without a bearer token this server gave out is refused with
//! Google's 401 `UNAUTHENTICATED`. `GET /v1beta1/publishers/{publisher}/models` lists Model
//! Garden's models of a publisher (the script's Gemini or Claude models).
//!
//! Checked against Google's Vertex AI REST reference (`projects.locations.publishers.models`
//! `streamGenerateContent` and `streamRawPredict`, `publishers.models.list` of v1beta1), its
//! page on Claude models (ids written `claude-sonnet-4-5@20250929`, `anthropic_version`
//! `vertex-2023-10-16` in the body, no `model`), and OAuth 2.0 for service accounts (the
//! JWT-bearer grant, `expires_in`); errors are Google's `{"error": {"code", "message",
//! "status"}}`. The model list was missing and is added; no other difference found.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// A Google service-account key file (its JSON text) with a freshly made RSA key, whose
/// `token_uri` is `token_uri` (this server's `/token`) and whose project is `project`.
pub fn service_account_file(token_uri: &str, project: &str) -> Result<String, crate::Error> {
    use aws_lc_rs::encoding::AsDer;
    use aws_lc_rs::rsa::KeySize;
    use aws_lc_rs::signature::RsaKeyPair;
    let failed = || crate::Error::Runtime(std::io::Error::other("cannot make an RSA key"));
    let key = RsaKeyPair::generate(KeySize::Rsa2048).map_err(|_| failed())?;
    let der = key.as_der().map_err(|_| failed())?;
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(der.as_ref())
    );
    Ok(json!({
        "type": "service_account",
        "project_id": project,
        "private_key_id": "fake",
        "private_key": pem,
        "client_email": format!("ybs-test@{project}.iam.gserviceaccount.com"),
        "client_id": "1",
        "token_uri": token_uri,
    })
    .to_string())
}

/// What a Vertex model path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelPath {
    /// `google` or `anthropic`.
    pub publisher: String,
    /// The model id.
    pub model: String,
    /// Whether the method streams.
    pub streams: bool,
}

/// The publisher, model and method of a Vertex model path.
pub(crate) fn model_path(path: &str) -> Option<ModelPath> {
    let rest = path.strip_prefix("/v1/projects/")?;
    let parts: Vec<&str> = rest.splitn(6, '/').collect();
    if parts.len() != 6 || parts[1] != "locations" || parts[3] != "publishers" {
        return None;
    }
    let (models, call) = (parts[4], parts[5]);
    let (model, method) = call.strip_prefix("models/")?.rsplit_once(':')?;
    let streams = match (models, method) {
        ("google", "streamGenerateContent") | ("anthropic", "streamRawPredict") => true,
        ("google", "generateContent") | ("anthropic", "rawPredict") => false,
        _ => return None,
    };
    Some(ModelPath {
        publisher: models.to_owned(),
        model: model.to_owned(),
        streams,
    })
}

/// The publisher of a Model Garden list path (`/v1beta1/publishers/{publisher}/models`).
pub(crate) fn list_path(path: &str) -> Option<&str> {
    let publisher = path
        .strip_prefix("/v1beta1/publishers/")?
        .strip_suffix("/models")?;
    (!publisher.contains('/')).then_some(publisher)
}

/// Model Garden's list of `publisher`: the script's models of its family (Gemini for
/// `google`, Claude for `anthropic`), named `publishers/P/models/ID`.
pub(crate) fn publisher_models(publisher: &str, ids: &[String]) -> Value {
    let family = if publisher == "anthropic" {
        "claude"
    } else {
        "gemini"
    };
    let models: Vec<Value> = (ids.iter())
        .filter(|id| id.starts_with(family))
        .map(|id| {
            json!({"name": format!("publishers/{publisher}/models/{id}"), "versionId": "001",
                "openSourceCategory": "PROPRIETARY", "launchStage": "GA"})
        })
        .collect();
    json!({"publisherModels": models})
}

/// The prefix of the access tokens `/token` gives out.
pub(crate) const TOKEN_PREFIX: &str = "ya29.fake-";

/// Whether an `Authorization` header carries a token of this server.
pub(crate) fn authorized(header: Option<&str>) -> bool {
    header
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|token| token.starts_with(TOKEN_PREFIX))
}

/// Google's 401 for a model request without a valid token.
pub(crate) fn unauthenticated() -> Value {
    json!({"error": {"code": 401, "status": "UNAUTHENTICATED", "message":
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login \
         cookie or other valid authentication credential."}})
}

/// `POST /token` with a form body: `(status, body)`. A JWT bearer grant needs an assertion
/// of three parts whose claims name an issuer, the cloud-platform scope, this audience and
/// an hour of validity; a refresh-token grant needs a refresh token.
pub(crate) fn token(form: &str, issued: u64) -> (u16, Value) {
    let field = |name: &str| {
        form_urlencoded::parse(form.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    let refused = |description: &str| {
        (
            400,
            json!({"error": "invalid_grant", "error_description": description}),
        )
    };
    match field("grant_type").as_deref() {
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
            let Some(assertion) = field("assertion") else {
                return refused("Missing required parameter: assertion");
            };
            let parts: Vec<&str> = assertion.split('.').collect();
            let claims: Option<Value> = match parts[..] {
                [_, claims, _] => (URL_SAFE_NO_PAD.decode(claims).ok())
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok()),
                _ => None,
            };
            let Some(claims) = claims else {
                return refused(
                    "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe",
                );
            };
            let scoped = claims["scope"] == "https://www.googleapis.com/auth/cloud-platform";
            let hour = claims["exp"]
                .as_u64()
                .zip(claims["iat"].as_u64())
                .is_some_and(|(exp, iat)| exp > iat && exp - iat <= 3600);
            if !claims["iss"].is_string() || !scoped || !hour || parts[2].is_empty() {
                return refused("Invalid JWT Signature.");
            }
        }
        Some("refresh_token") if field("refresh_token").is_some() => {}
        _ => return refused("Bad Request"),
    }
    (
        200,
        json!({"access_token": format!("{TOKEN_PREFIX}{issued}"), "expires_in": 3599,
            "token_type": "Bearer"}),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn model_paths_name_publisher_model_and_method() {
        let path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict";
        assert_eq!(
            model_path(path),
            Some(ModelPath {
                publisher: "anthropic".into(),
                model: "claude-sonnet-4-5@20250929".into(),
                streams: true
            })
        );
        let gemini = "/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:generateContent";
        assert!(!model_path(gemini).unwrap().streams);
        assert_eq!(model_path("/v1/projects/p/models/x:predict"), None);
    }

    #[test]
    fn tokens_are_given_for_a_well_formed_grant_only() {
        let claims = URL_SAFE_NO_PAD.encode(
            json!({"iss": "a@b", "scope": "https://www.googleapis.com/auth/cloud-platform",
                "aud": "x", "iat": 10, "exp": 3610})
            .to_string(),
        );
        let form = format!(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=e30.{claims}.c2ln"
        );
        let (status, body) = token(&form, 1);
        assert_eq!(status, 200, "{body}");
        assert!(authorized(Some(&format!(
            "Bearer {}",
            body["access_token"].as_str().unwrap()
        ))));
        let (status, body) = token(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=x",
            1,
        );
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        assert!(!authorized(Some("Bearer sk-other")));
    }
}
