//! Google credentials for Vertex AI: a service-account key file (a JWT signed with its key,
//! exchanged for an access token) or application-default credentials of `gcloud auth
//! application-default login` (a refresh token exchanged for one), found as Google's tools
//! find them; the token kept and fetched again shortly before it expires.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use ybs_core::{ErrorKind, LlmError};

use crate::config::ApiKey;
use crate::error::ConfigError;
use crate::http::Transport;

/// The scope Vertex AI needs.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Google's token endpoint, where a credentials file names none.
const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// A token this close to its end is fetched again.
const EARLY: Duration = Duration::from_secs(60);

/// A credentials file as Google writes them.
#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: String,
    client_email: Option<String>,
    private_key: Option<String>,
    token_uri: Option<String>,
    project_id: Option<String>,
    quota_project_id: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
}

/// How access tokens are got.
enum Grant {
    /// A token given outright (`gcloud auth print-access-token`): used until it fails.
    Fixed(ApiKey),
    /// A service account: a signed JWT for each token.
    ServiceAccount {
        email: String,
        key: RsaKeyPair,
        token_uri: String,
    },
    /// A user's application-default credentials: a refresh token for each token.
    AuthorizedUser {
        client_id: String,
        client_secret: ApiKey,
        refresh_token: ApiKey,
    },
}

/// Where access tokens come from, and the one in hand.
pub(crate) struct TokenSource {
    grant: Grant,
    /// Where the grant came from, for messages.
    origin: String,
    /// The project the credentials name (a service account's `project_id`).
    pub project: Option<String>,
    current: Mutex<Option<(ApiKey, SystemTime)>>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("origin", &self.origin)
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

/// The token source of a credentials file's text: one per text in a process, so the
/// providers built from the same credentials (bb7 builds one per send and one to list
/// models) share the token in hand instead of each fetching its own.
fn shared(
    text: &str,
    make: impl FnOnce() -> Result<Arc<TokenSource>, ConfigError>,
) -> Result<Arc<TokenSource>, ConfigError> {
    static SOURCES: OnceLock<std::sync::Mutex<HashMap<String, Arc<TokenSource>>>> = OnceLock::new();
    let sources = SOURCES.get_or_init(Default::default);
    let mut sources = sources
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(source) = sources.get(text) {
        return Ok(Arc::clone(source));
    }
    let source = make()?;
    sources.insert(text.to_owned(), Arc::clone(&source));
    Ok(source)
}

fn config_error(origin: &str, reason: impl fmt::Display) -> ConfigError {
    ConfigError::Credentials(format!("{origin}: {reason}"))
}

impl TokenSource {
    /// The credentials of the environment, in the order Google's libraries look: a token
    /// given as the API key, the file `GOOGLE_APPLICATION_CREDENTIALS` names, then the
    /// application-default credentials of gcloud (`$CLOUDSDK_CONFIG` or
    /// `~/.config/gcloud/application_default_credentials.json`).
    pub(crate) fn find(
        key: Option<ApiKey>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<TokenSource>, ConfigError> {
        if let Some(key) = key {
            return Ok(Arc::new(TokenSource::new(
                Grant::Fixed(key),
                "the access token given as api_key".to_owned(),
                None,
            )));
        }
        let path = match env("GOOGLE_APPLICATION_CREDENTIALS").filter(|path| !path.is_empty()) {
            Some(path) => PathBuf::from(path),
            None => {
                let config = env("CLOUDSDK_CONFIG")
                    .map(PathBuf::from)
                    .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".config/gcloud")))
                    .ok_or_else(|| ConfigError::Credentials(NO_CREDENTIALS.to_owned()))?;
                config.join("application_default_credentials.json")
            }
        };
        let origin = path.display().to_string();
        let text = crate::user_files::read_text(&path)
            .map_err(|error| config_error(&origin, error))?
            .ok_or_else(|| match env("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(_) => config_error(&origin, "no such file"),
                None => ConfigError::Credentials(NO_CREDENTIALS.to_owned()),
            })?;
        shared(&text, || {
            TokenSource::from_json(&text, origin).map(Arc::new)
        })
    }

    /// The credentials of a file's text.
    pub(crate) fn from_json(text: &str, origin: String) -> Result<TokenSource, ConfigError> {
        let file: CredentialsFile =
            serde_json::from_str(text).map_err(|error| config_error(&origin, error))?;
        let missing = |field: &str| config_error(&origin, format!("no `{field}`"));
        let grant = match file.kind.as_str() {
            "service_account" => {
                let pem = file.private_key.ok_or_else(|| missing("private_key"))?;
                Grant::ServiceAccount {
                    email: file.client_email.ok_or_else(|| missing("client_email"))?,
                    key: private_key(&pem).map_err(|reason| config_error(&origin, reason))?,
                    token_uri: file.token_uri.unwrap_or_else(|| TOKEN_URI.to_owned()),
                }
            }
            "authorized_user" => Grant::AuthorizedUser {
                client_id: file.client_id.ok_or_else(|| missing("client_id"))?,
                client_secret: ApiKey::new(
                    file.client_secret.ok_or_else(|| missing("client_secret"))?,
                ),
                refresh_token: ApiKey::new(
                    file.refresh_token.ok_or_else(|| missing("refresh_token"))?,
                ),
            },
            other => {
                return Err(config_error(
                    &origin,
                    format!(
                        "credentials of type {other:?} are not supported (use a service account key or `gcloud auth application-default login`)"
                    ),
                ));
            }
        };
        let project = file.project_id.or(file.quota_project_id);
        Ok(TokenSource::new(grant, origin, project))
    }

    fn new(grant: Grant, origin: String, project: Option<String>) -> TokenSource {
        TokenSource {
            grant,
            origin,
            project,
            current: Mutex::new(None),
        }
    }

    /// A valid access token: the one in hand, or a new one when it is about to expire.
    pub(crate) async fn token(&self, http: &Transport) -> Result<ApiKey, LlmError> {
        if let Grant::Fixed(key) = &self.grant {
            return Ok(key.clone());
        }
        let mut current = self.current.lock().await;
        if let Some((token, until)) = current.as_ref()
            && SystemTime::now() + EARLY < *until
        {
            return Ok(token.clone());
        }
        let (url, body) = self.request()?;
        let answer = http
            .post_form(&url, &HeaderMap::new(), body)
            .await
            .map_err(|error| {
                LlmError::new(
                    ErrorKind::Auth,
                    format!(
                        "cannot get a Google access token with {} from {url}: {}",
                        self.origin, error.message
                    ),
                )
            })?;
        let token = answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                LlmError::new(
                    ErrorKind::Auth,
                    format!("the token endpoint {url} sent no access_token"),
                )
            })?;
        let lifetime = answer
            .get("expires_in")
            .and_then(Value::as_u64)
            .unwrap_or(3600);
        let token = ApiKey::new(token);
        *current = Some((
            token.clone(),
            SystemTime::now() + Duration::from_secs(lifetime),
        ));
        Ok(token)
    }

    /// Whether a refused token can be replaced by fetching another (not one given as it is).
    pub(crate) fn refreshable(&self) -> bool {
        !matches!(self.grant, Grant::Fixed(_))
    }

    /// Drops the token in hand, which the service refused although it had not expired
    /// (revoked, or the clock is off), so the next [`token`](TokenSource::token) fetches
    /// another.
    pub(crate) async fn forget(&self) {
        *self.current.lock().await = None;
    }

    /// The token request: its URL and form body.
    fn request(&self) -> Result<(String, String), LlmError> {
        match &self.grant {
            Grant::Fixed(_) => Err(LlmError::new(
                ErrorKind::Auth,
                "a fixed token is not fetched",
            )),
            Grant::ServiceAccount {
                email,
                key,
                token_uri,
            } => {
                let assertion = signed_jwt(email, key, token_uri, SystemTime::now())?;
                let body = format!(
                    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}"
                );
                Ok((token_uri.clone(), body))
            }
            Grant::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
            } => {
                let body = format!(
                    "grant_type=refresh_token&client_id={}&client_secret={}&refresh_token={}",
                    crate::wire::path_segment(client_id),
                    crate::wire::path_segment(client_secret.expose()),
                    crate::wire::path_segment(refresh_token.expose()),
                );
                Ok((TOKEN_URI.to_owned(), body))
            }
        }
    }
}

const NO_CREDENTIALS: &str = "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a \
    service account key file, run `gcloud auth application-default login`, or give an access \
    token as `api_key`";

/// The key of a PEM `PRIVATE KEY` block (PKCS#8, as Google's key files hold).
fn private_key(pem: &str) -> Result<RsaKeyPair, String> {
    let body: String = (pem.lines())
        .map(str::trim)
        .filter(|line| !line.starts_with("-----"))
        .collect();
    let der = STANDARD
        .decode(body)
        .map_err(|error| format!("the private_key is not PEM: {error}"))?;
    RsaKeyPair::from_pkcs8(&der)
        .map_err(|error| format!("the private_key is not an RSA key: {error}"))
}

/// A JWT asking `token_uri` for a cloud-platform token for `email`, valid an hour from `now`,
/// signed with RS256.
fn signed_jwt(
    email: &str,
    key: &RsaKeyPair,
    token_uri: &str,
    now: SystemTime,
) -> Result<String, LlmError> {
    let issued = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "RS256", "typ": "JWT"}).to_string());
    let claims = json!({
        "iss": email, "scope": SCOPE, "aud": token_uri,
        "iat": issued, "exp": issued + 3600,
    });
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
    let mut signature = vec![0; key.public_modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| LlmError::new(ErrorKind::Auth, "cannot sign the service account's JWT"))?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use aws_lc_rs::encoding::AsDer;
    use aws_lc_rs::rsa::KeySize;
    use aws_lc_rs::signature::{KeyPair, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};

    fn pem() -> (String, Vec<u8>) {
        let key = RsaKeyPair::generate(KeySize::Rsa2048).unwrap();
        let der = key.as_der().unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der.as_ref())
        );
        (pem, key.public_key().as_ref().to_vec())
    }

    #[test]
    fn a_service_accounts_jwt_is_signed_with_its_key() {
        let (pem, public) = pem();
        let key = private_key(&pem).unwrap();
        let jwt = signed_jwt(
            "sa@p.iam.gserviceaccount.com",
            &key,
            TOKEN_URI,
            UNIX_EPOCH + Duration::from_secs(1000),
        )
        .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            claims,
            json!({"iss": "sa@p.iam.gserviceaccount.com", "scope": SCOPE, "aud": TOKEN_URI,
                "iat": 1000, "exp": 4600})
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public)
            .verify(signed.as_bytes(), &signature)
            .unwrap();
    }

    #[test]
    fn credentials_files_are_read_or_refused_clearly() {
        let (pem, _) = pem();
        let file = json!({"type": "service_account", "client_email": "a@b", "private_key": pem,
            "project_id": "my-project", "token_uri": "http://127.0.0.1:9/token"});
        let source = TokenSource::from_json(&file.to_string(), "sa.json".into()).unwrap();
        assert_eq!(source.project.as_deref(), Some("my-project"));
        let shown = format!("{source:?}");
        assert!(!shown.contains("PRIVATE"), "{shown}");
        let user = json!({"type": "authorized_user", "client_id": "c", "client_secret": "s",
            "refresh_token": "1//secret"});
        assert!(TokenSource::from_json(&user.to_string(), "adc.json".into()).is_ok());
        let err = TokenSource::from_json(r#"{"type": "external_account"}"#, "x.json".into())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.json") && err.contains("external_account"),
            "{err}"
        );
        let err = TokenSource::find(None, &|_| None).unwrap_err().to_string();
        assert!(err.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{err}");
    }
}
