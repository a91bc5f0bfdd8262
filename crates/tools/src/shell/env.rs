//! The environment a command gets: an allow-list of harmless names (and the user's
//! `safety.shell_env` additions), minus anything that looks like a secret.
//!
//! The allow-list is the defence: a variable the agent had (an API key under any name) only
//! reaches the command when its name is listed. The secret filter is a second net for the
//! listed names: a name that looks like a credential (`*KEY*`, `*TOKEN*`, `*PASS*`, `*_PWD`,
//! `*_DSN`, `DATABASE_URL`, `*_PAT`, ...) or a value holding `user:password@` is dropped unless
//! the user named it exactly in `safety.shell_env`.

use std::ffi::{OsStr, OsString};

/// The variables passed by default (exact names; `*` at the end matches a prefix).
pub const DEFAULT_ALLOWED: [&str; 43] = [
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "CLICOLOR",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TZ",
    "PWD",
    "EDITOR",
    "PAGER",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_JOBS",
    "CARGO_TERM_COLOR",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOFLAGS",
    "JAVA_HOME",
    "NODE_PATH",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "NVM_DIR",
];

/// Parts of a variable name (upper-cased) that mark it as a secret.
const SECRET_PARTS: [&str; 11] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "DSN",
    "DATABASE_URL",
];

/// Endings of a variable name (upper-cased) that mark it as a secret.
const SECRET_SUFFIXES: [&str; 3] = ["_PWD", "_PAT", "_CERT"];

/// Names that contain a marker but are no secret.
const NOT_SECRET: [&str; 2] = ["PWD", "OLDPWD"];

/// Whether a variable looks like it holds a credential, by its name or its value.
pub fn looks_secret(name: &str, value: &OsStr) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&upper.as_str()) {
        return false;
    }
    if upper == "MYSQL_PWD" || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s)) {
        return true;
    }
    if SECRET_PARTS.iter().any(|p| upper.contains(p)) {
        return true;
    }
    has_url_password(&value.to_string_lossy())
}

/// Whether `value` contains a URL with a password (`scheme://user:pass@host`).
fn has_url_password(value: &str) -> bool {
    value.match_indices("://").any(|(i, _)| {
        let rest = &value[i + 3..];
        let authority = rest.split(['/', '?', '#', ' ']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The variables of `vars` a command gets, given the user's extra names (`safety.shell_env`).
pub fn filtered<I>(vars: I, extra: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    vars.into_iter()
        .filter(|(name, value)| {
            let Some(name) = name.to_str() else {
                return false;
            };
            if extra.iter().any(|e| e == name) {
                return true;
            }
            let allowed = DEFAULT_ALLOWED
                .iter()
                .copied()
                .chain(extra.iter().map(String::as_str))
                .any(|p| matches(p, name));
            allowed && !looks_secret(name, value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(n, v)| ((*n).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn names_and_values_of_secrets_are_recognised() {
        for name in [
            "MYSQL_PWD",
            "DATABASE_URL",
            "GH_PAT",
            "PGPASSWORD",
            "SMTP_PASS",
            "DB_PASSPHRASE",
            "SENTRY_DSN",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(looks_secret(name, OsStr::new("x")), "{name}");
        }
        assert!(looks_secret(
            "REDIS_URL",
            OsStr::new("redis://admin:hunter2@db:6379/0")
        ));
        for name in ["PATH", "PWD", "OLDPWD", "LANG", "CARGO_HOME"] {
            assert!(!looks_secret(name, OsStr::new("/usr/bin")), "{name}");
        }
        assert!(!looks_secret(
            "HOMEPAGE_URL",
            OsStr::new("https://x.org/a@b")
        ));
    }

    #[test]
    fn only_listed_names_pass_and_explicit_names_win() {
        let env = vars(&[
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C"),
            ("OPENROUTER_API_KEY", "sk-1"),
            ("SOME_RANDOM", "x"),
            ("MY_TOOL_HOME", "/opt/t"),
            ("GITHUB_TOKEN", "ghp"),
            ("RUSTFLAGS", "postgres://u:p@h/db"),
        ]);
        let got = filtered(env, &["MY_TOOL_*".to_string(), "GITHUB_TOKEN".to_string()]);
        let names: Vec<_> = got.iter().map(|(n, _)| n.to_str().unwrap_or("")).collect();
        assert_eq!(names, ["PATH", "LC_ALL", "MY_TOOL_HOME", "GITHUB_TOKEN"]);
    }
}
