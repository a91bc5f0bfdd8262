//! Signing a Bedrock request with AWS Signature Version 4 (`aws-sigv4`): the headers that
//! carry the signature, or the bearer token of a Bedrock API key.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use ybs_core::{ErrorKind, LlmError};

use super::credentials::AwsCredentials;
use crate::http::secret_header;

/// The name requests to Bedrock's runtime and control plane are signed for.
const SIGNING_NAME: &str = "bedrock";

/// The headers that authorize `method url` with `body` (the exact bytes sent) at `time`:
/// SigV4's `Authorization`, `X-Amz-Date` and, for temporary credentials,
/// `X-Amz-Security-Token`; or `Authorization: Bearer` for an API key. The content type is
/// signed too, so the request must be sent with the one returned.
pub(crate) fn signed_headers(
    credentials: &AwsCredentials,
    region: &str,
    method: &str,
    url: &str,
    body: &[u8],
    time: SystemTime,
) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    let content_type = HeaderValue::from_static("application/json");
    headers.insert(reqwest::header::CONTENT_TYPE, content_type);
    let (access_key_id, secret, session_token) = match credentials {
        AwsCredentials::Bearer(token) => {
            if let Some(value) = secret_header(&format!("Bearer {}", token.expose())) {
                headers.insert(AUTHORIZATION, value);
            }
            return Ok(headers);
        }
        AwsCredentials::Keys {
            access_key_id,
            secret_access_key,
            session_token,
        } => (access_key_id, secret_access_key, session_token),
    };
    let identity = Credentials::new(
        access_key_id,
        secret.expose(),
        session_token
            .as_ref()
            .map(|token| token.expose().to_owned()),
        None,
        "ybs",
    )
    .into();
    let failed = |error: &dyn std::fmt::Display| {
        LlmError::new(
            ErrorKind::BadRequest,
            format!("cannot sign the request to Amazon Bedrock: {error}"),
        )
    };
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|error| failed(&error))?
        .into();
    let signable = SignableRequest::new(
        method,
        url,
        [("content-type", "application/json")].into_iter(),
        SignableBody::Bytes(body),
    )
    .map_err(|error| failed(&error))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|error| failed(&error))?
        .into_parts();
    for (name, value) in instructions.headers() {
        let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
            continue;
        };
        if let Some(value) = secret_header(value) {
            headers.insert(name, value);
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::ApiKey;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn keys_sign_and_an_api_key_is_a_bearer_token() {
        let keys = AwsCredentials::Keys {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: ApiKey::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: Some(ApiKey::new("session-token")),
        };
        let time = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse";
        let headers = signed_headers(&keys, "us-east-1", "POST", url, b"{}", time).unwrap();
        let authorization = headers[AUTHORIZATION].to_str().unwrap();
        assert!(
            authorization.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/us-east-1/bedrock/aws4_request"
            ),
            "{authorization}"
        );
        assert!(authorization.contains("SignedHeaders=content-type;host;x-amz-date"));
        assert_eq!(headers["x-amz-date"], "20231114T221320Z");
        assert_eq!(headers["x-amz-security-token"], "session-token");
        assert!(headers[AUTHORIZATION].is_sensitive());
        // Another body, another signature.
        let other = signed_headers(&keys, "us-east-1", "POST", url, b"{ }", time).unwrap();
        assert_ne!(other[AUTHORIZATION], headers[AUTHORIZATION]);

        let bearer = AwsCredentials::Bearer(ApiKey::new("ABSK-key"));
        let headers = signed_headers(&bearer, "us-east-1", "POST", url, b"{}", time).unwrap();
        assert_eq!(headers[AUTHORIZATION], "Bearer ABSK-key");
        assert!(headers.get("x-amz-date").is_none());
    }
}
