//! The user's consent to an `@include` git does not vouch for, bound to what it agreed to
//! send: the path the include resolves to and the content it had. A name alone is not
//! enough, since a later pull can turn the allowed `NOTES.md` into a link to `.env`; when
//! what the include resolves to or holds changes, the consent no longer applies and the
//! include is refused until the user allows it again.

use sha2::{Digest, Sha256};

/// One include the user allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeConsent {
    /// The path as the directive writes it.
    pub path: String,
    /// The [`digest`] of what was allowed.
    pub digest: String,
}

/// What an include sends, as one string: `sha256:` and the hex SHA-256 of the path it
/// resolves to (relative to the project root), a NUL byte and its content.
pub fn digest(resolved: &str, content: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(resolved.as_bytes());
    hasher.update([0u8]);
    hasher.update(content);
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Whether `consents` allow the include written `path` that now sends what `digest` names.
pub fn allows(consents: &[IncludeConsent], path: &str, digest: &str) -> bool {
    consents
        .iter()
        .any(|consent| consent.path == path && consent.digest == digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consent_follows_the_resolved_path_and_the_content() {
        let allowed = [IncludeConsent {
            path: "NOTES.md".into(),
            digest: digest("NOTES.md", b"notes"),
        }];
        assert!(allows(&allowed, "NOTES.md", &digest("NOTES.md", b"notes")));
        // The same name now a link to `.env`, or the same file with new content.
        assert!(!allows(&allowed, "NOTES.md", &digest(".env", b"notes")));
        assert!(!allows(
            &allowed,
            "NOTES.md",
            &digest("NOTES.md", b"TOKEN=1")
        ));
        assert!(!allows(&allowed, "other.md", &digest("NOTES.md", b"notes")));
    }
}
