//! AWS credentials and region, found as AWS's own tools find them, without the SDK: a
//! Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, or the config's `api_key`); else the keys
//! of the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
//! else the profile (`AWS_PROFILE`, else `default`) of the shared credentials file
//! (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) or of the config file
//! (`AWS_CONFIG_FILE`, else `~/.aws/config`). The region is `AWS_REGION`, else
//! `AWS_DEFAULT_REGION`, else the profile's `region` in the config file.
//!
//! Only the environment and the user's own files are read: a project's config cannot name
//! a profile, a region or credentials (its endpoint, the one thing it could aim elsewhere,
//! is refused by ybs's rule on untrusted endpoints).

use std::fmt;
use std::path::PathBuf;

use crate::config::ApiKey;
use crate::error::ConfigError;

/// What signs requests to Bedrock.
#[derive(Clone)]
pub(crate) enum AwsCredentials {
    /// A Bedrock API key, sent as a bearer token.
    Bearer(ApiKey),
    /// An access key pair, with a session token when temporary.
    Keys {
        access_key_id: String,
        secret_access_key: ApiKey,
        session_token: Option<ApiKey>,
    },
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AwsCredentials::Bearer(_) => f.write_str("AwsCredentials::Bearer(..)"),
            AwsCredentials::Keys { access_key_id, .. } => f
                .debug_struct("AwsCredentials::Keys")
                .field("access_key_id", access_key_id)
                .finish_non_exhaustive(),
        }
    }
}

/// The credentials and region found.
#[derive(Debug, Clone)]
pub(crate) struct AwsSetup {
    pub credentials: AwsCredentials,
    pub region: String,
}

const NO_CREDENTIALS: &str = "none found: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API \
    key), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials \
    (AWS_PROFILE chooses it)";

fn credentials_error(reason: impl fmt::Display) -> ConfigError {
    ConfigError::AwsCredentials(reason.to_string())
}

/// Finds the credentials and region; `key` is an API key already resolved (the config's or
/// `AWS_BEARER_TOKEN_BEDROCK`).
pub(crate) fn find(
    key: Option<ApiKey>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<AwsSetup, ConfigError> {
    let var = |name: &str| {
        env(name)
            .map(|value| value.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let profile = var("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
    let home = var("HOME").map(PathBuf::from);
    let file = |variable: &str, default: &str| {
        var(variable)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(default)))
    };
    let read = |path: Option<PathBuf>| -> Result<Option<(String, String)>, ConfigError> {
        let Some(path) = path else { return Ok(None) };
        let origin = path.display().to_string();
        crate::user_files::read_text(&path)
            .map(|text| text.map(|text| (text, origin.clone())))
            .map_err(|error| credentials_error(format!("{origin}: {error}")))
    };
    let config = read(file("AWS_CONFIG_FILE", ".aws/config"))?;
    // The config file names profiles `[profile NAME]`, except `[default]`.
    let config_section = if profile == "default" {
        profile.clone()
    } else {
        format!("profile {profile}")
    };
    let from_config =
        |name: &str| (config.as_ref()).and_then(|(text, _)| ini_value(text, &config_section, name));

    let credentials = match key {
        Some(key) => AwsCredentials::Bearer(key),
        None => match (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
            (Some(access_key_id), Some(secret)) => AwsCredentials::Keys {
                access_key_id,
                secret_access_key: ApiKey::new(secret),
                session_token: var("AWS_SESSION_TOKEN").map(ApiKey::new),
            },
            _ => {
                let shared = read(file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"))?;
                let from_shared = |name: &str| {
                    (shared.as_ref()).and_then(|(text, _)| ini_value(text, &profile, name))
                };
                let value = |name: &str| from_shared(name).or_else(|| from_config(name));
                match (value("aws_access_key_id"), value("aws_secret_access_key")) {
                    (Some(access_key_id), Some(secret)) => AwsCredentials::Keys {
                        access_key_id,
                        secret_access_key: ApiKey::new(secret),
                        session_token: value("aws_session_token").map(ApiKey::new),
                    },
                    _ if shared.is_some() || config.is_some() => {
                        return Err(credentials_error(format!(
                            "the profile {profile:?} has no aws_access_key_id and \
                             aws_secret_access_key (a profile that signs in through SSO or \
                             a role needs `aws configure export-credentials` first); {}",
                            NO_CREDENTIALS.trim_start_matches("none found: ")
                        )));
                    }
                    _ => return Err(credentials_error(NO_CREDENTIALS)),
                }
            }
        },
    };
    let region = (var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")))
        .or_else(|| from_config("region"))
        .ok_or_else(|| {
            credentials_error(
                "no AWS region: set AWS_REGION (for example us-east-1) or `region` in \
                 ~/.aws/config",
            )
        })?;
    let plain = (region.bytes())
        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
    if !plain || region.is_empty() {
        return Err(credentials_error(format!(
            "the AWS region {region:?} is not a region name (lowercase letters, digits, -)"
        )));
    }
    Ok(AwsSetup {
        credentials,
        region,
    })
}

/// The value of `key` in the `[section]` of an INI file as AWS writes them (`key = value`,
/// `#` and `;` comments).
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            inside = name.split_whitespace().collect::<Vec<_>>().join(" ") == section;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some((name, value)) = line.split_once('=')
            && name.trim() == key
        {
            return Some(value.trim().to_owned()).filter(|value| !value.is_empty());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn keys(setup: &AwsSetup) -> (&str, &str, Option<&str>) {
        match &setup.credentials {
            AwsCredentials::Keys {
                access_key_id,
                secret_access_key,
                session_token,
            } => (
                access_key_id,
                secret_access_key.expose(),
                session_token.as_ref().map(ApiKey::expose),
            ),
            AwsCredentials::Bearer(_) => panic!("a bearer token"),
        }
    }

    #[test]
    fn the_environment_comes_first_then_the_profile_of_the_shared_files() {
        let env = |name: &str| match name {
            "AWS_ACCESS_KEY_ID" => Some("AKIAENV".to_owned()),
            "AWS_SECRET_ACCESS_KEY" => Some("env-secret".to_owned()),
            "AWS_SESSION_TOKEN" => Some("env-token".to_owned()),
            "AWS_DEFAULT_REGION" => Some("eu-west-3".to_owned()),
            _ => None,
        };
        let setup = find(None, &env).unwrap();
        assert_eq!(keys(&setup), ("AKIAENV", "env-secret", Some("env-token")));
        assert_eq!(setup.region, "eu-west-3");

        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().display().to_string();
        std::fs::create_dir(dir.path().join(".aws")).unwrap();
        std::fs::write(
            dir.path().join(".aws/credentials"),
            "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n\n\
             # work\n[work]\naws_access_key_id=AKIAWORK\naws_secret_access_key=w-secret\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".aws/config"),
            "[default]\nregion = us-east-1\n[profile work]\nregion = ap-northeast-1\n",
        )
        .unwrap();
        let env = |name: &str| match name {
            "HOME" => Some(home.clone()),
            "AWS_PROFILE" => Some("work".to_owned()),
            _ => None,
        };
        let setup = find(None, &env).unwrap();
        assert_eq!(keys(&setup), ("AKIAWORK", "w-secret", None));
        assert_eq!(setup.region, "ap-northeast-1");
        let shown = format!("{setup:?}");
        assert!(!shown.contains("w-secret"), "{shown}");

        let env = |name: &str| (name == "HOME").then(|| home.clone());
        let setup = find(None, &env).unwrap();
        assert_eq!(keys(&setup).0, "AKIADEFAULT");
        assert_eq!(setup.region, "us-east-1");

        // An API key wins; the region is still needed to sign and to find the host.
        let setup = find(Some(ApiKey::new("ABSK")), &env).unwrap();
        assert!(matches!(setup.credentials, AwsCredentials::Bearer(_)));
    }

    #[test]
    fn missing_credentials_or_region_and_odd_regions_are_said() {
        let err = find(None, &|_| None).unwrap_err().to_string();
        assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
        let env = |name: &str| match name {
            "AWS_ACCESS_KEY_ID" => Some("A".to_owned()),
            "AWS_SECRET_ACCESS_KEY" => Some("S".to_owned()),
            _ => None,
        };
        let err = find(None, &env).unwrap_err().to_string();
        assert!(err.contains("no AWS region"), "{err}");
        let env = |name: &str| match name {
            "AWS_REGION" => Some("evil.example/x#".to_owned()),
            other => env(other),
        };
        let err = find(None, &env).unwrap_err().to_string();
        assert!(err.contains("is not a region name"), "{err}");
    }
}
