//! Where a fetch goes, as the user allows it: the host, normalised so that one machine has
//! one name whatever the spelling, and the port.
//!
//! Every loopback or unspecified address (`127.0.0.0/8`, `::1`, `::ffff:127.0.0.1`,
//! `0.0.0.0`, `::`) and `localhost` (with its subdomains) is `localhost`: a connection to
//! any of them reaches this machine, so a rule about one is a rule about all. An IPv4
//! address written as IPv6 (`::ffff:10.0.0.1`) is the IPv4 address; names are lowercased
//! without a trailing dot.

use std::fmt;
use std::net::IpAddr;

/// A fetch's destination: normalised host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The host, normalised by [`canonical_host`].
    pub host: String,
    /// The port, the scheme's default when the URL names none.
    pub port: u16,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// The origin of an `http(s)` URL (`None` for another scheme or no host).
pub fn url_origin(url: &str) -> Option<Origin> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    origin_of(&parsed)
}

/// The origin of a parsed `http(s)` URL.
pub fn origin_of(url: &url::Url) -> Option<Origin> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(Origin {
        host: canonical_host(url.host_str()?),
        port: url.port_or_known_default()?,
    })
}

/// The host and port of an `http(s)` URL as written (`127.0.0.1:8080`, `[::1]:80`): what the
/// user is shown and what a rule kept for the call names (rules match it normalised).
pub fn url_authority(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    Some(format!(
        "{}:{}",
        parsed.host_str()?,
        parsed.port_or_known_default()?
    ))
}

/// `host` normalised (see the module docs); brackets around an IPv6 address are dropped.
pub fn canonical_host(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return "localhost".to_owned();
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => {
            let ip = ip.to_canonical();
            if ip.is_loopback() || ip.is_unspecified() {
                "localhost".to_owned()
            } else {
                ip.to_string()
            }
        }
        Err(_) => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_this_machine_is_localhost() {
        for url in [
            "http://localhost:8080/",
            "http://LOCALHOST.:8080/",
            "http://127.0.0.1:8080/",
            "http://127.1.2.3:8080/",
            "http://0x7f.1:8080/",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]:8080/",
            "http://0.0.0.0:8080/",
            "http://[::]:8080/",
            "http://api.localhost:8080/",
        ] {
            let origin = url_origin(url);
            assert_eq!(
                origin,
                Some(Origin {
                    host: "localhost".into(),
                    port: 8080
                }),
                "{url}"
            );
        }
    }

    #[test]
    fn origins_carry_the_port_and_normalise_names() {
        let origin = |url: &str| url_origin(url).map(|o| o.to_string());
        assert_eq!(origin("https://Docs.RS/x").as_deref(), Some("docs.rs:443"));
        assert_eq!(origin("http://docs.rs/x").as_deref(), Some("docs.rs:80"));
        assert_eq!(
            origin("http://[::ffff:10.0.0.1]:9/").as_deref(),
            Some("10.0.0.1:9")
        );
        assert_eq!(
            origin("http://[2001:db8::1]:9/").as_deref(),
            Some("[2001:db8::1]:9")
        );
        assert_eq!(origin("ftp://docs.rs/"), None);
        assert_eq!(
            url_authority("http://127.0.0.1:9/x").as_deref(),
            Some("127.0.0.1:9")
        );
        assert_eq!(
            url_authority("https://[::1]/").as_deref(),
            Some("[::1]:443")
        );
        assert_eq!(origin("not a url"), None);
    }
}
