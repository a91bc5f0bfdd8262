//! `web_fetch`: a web page as readable text. HTTP(S) only, bounded in time
//! ([`WebPolicy::timeout`]) and size ([`WebPolicy::max_bytes`]); HTML becomes Markdown
//! (`htmd`), other text comes as it is, and anything else is refused. A redirect is followed
//! only to the same origin (scheme, host and port, normalised): one elsewhere is reported to
//! the model, whose next call for it is settled (asked) like any other, since the user
//! allows fetches by host and port.
//!
//! The request runs on a thread of its own with a small runtime, so the tool blocks like
//! the other tools whatever the caller's runtime, and stops early when the call is
//! cancelled.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::{Value, json};
use ybs_core::ToolSpec;

pub use super::origin::{Origin, canonical_host, origin_of, url_authority, url_origin};
use super::shared::spec;
use crate::declaration::{ActionKind, Asks, Declaration, NetworkUse, RuleSubject};
use crate::summary::{Change, Summary, counted, truncate_chars};
pub use crate::web_policy::WebPolicy;
use crate::{Args, CancelFlag, Tool, ToolContext, ToolError};

/// The most same-host redirects followed.
const MAX_REDIRECTS: usize = 5;

/// The host of an `http(s)` URL, lowercased (`None` for another scheme or no host): what
/// the user allows a fetch by.
pub fn url_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    Some(host.to_ascii_lowercase())
}

/// What kind of address `host` names when it is written as one (or is `localhost`): the
/// confirmation says so, since such a fetch reaches this machine or its network.
pub fn host_kind(host: &str) -> Option<&'static str> {
    if host == "localhost" || host.ends_with(".localhost") {
        return Some("this machine (loopback)");
    }
    // `::ffff:127.0.0.1` is the IPv4 address it carries.
    match host.parse::<IpAddr>().ok()?.to_canonical() {
        ip if ip.is_loopback() => Some("this machine (loopback)"),
        IpAddr::V4(v4) if v4.is_private() || v4.is_link_local() => {
            Some("a private network address")
        }
        IpAddr::V6(v6) if (v6.segments()[0] & 0xfe00) == 0xfc00 => {
            Some("a private network address")
        }
        IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80 => {
            Some("a private network address")
        }
        ip if ip.is_unspecified() => Some("this machine (unspecified address)"),
        _ => None,
    }
}

/// The `web_fetch` tool.
pub struct WebFetch {
    spec: ToolSpec,
}

impl WebFetch {
    /// The tool with its schema.
    pub fn new() -> Self {
        WebFetch {
            spec: spec(
                "web_fetch",
                "Fetch a web page (http or https) and return it as readable text (HTML turned \
                 into Markdown). The user is asked before the first fetch of each host and port. Use it \
                 for documentation or an issue the user points to; the result is cut at a \
                 size limit.",
                json!({
                    "url": {"type": "string", "description": "The URL to fetch (http:// or https://)", "required": true}
                }),
            ),
        }
    }
}

impl Default for WebFetch {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for WebFetch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            network: NetworkUse::Always,
            rule_subject: RuleSubject::Host,
            asks: Asks::EveryHost,
            // A fetched page can carry instructions: kept from plans and sub-agents.
            in_plan_mode: false,
            in_subagent: false,
            ..Declaration::looking(ActionKind::Other)
        }
    }

    /// `Fetched https://example.org/ (HTTP 200, 120 lines)`.
    fn summarize(&self, _: &Value, result: &Value, _: Option<Change>) -> Option<Summary> {
        let url = result.get("url")?.as_str()?;
        let lines = result.get("content")?.as_str()?.lines().count();
        let cut = if result.get("truncated") == Some(&true.into()) {
            ", cut at the size limit"
        } else {
            ""
        };
        Some(Summary::ok(format!(
            "Fetched {} (HTTP {}, {}{cut})",
            truncate_chars(url, 100),
            result.get("status").unwrap_or(&Value::Null),
            counted(lines as u64, "line", "lines")
        )))
    }

    fn invoke(&self, args: &Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let url = args.str("url")?.trim().to_owned();
        let parsed = url::Url::parse(&url)
            .map_err(|error| args.invalid(format!("`{url}` is not a URL: {error}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(args.invalid(format!(
                "`{url}` is not an http:// or https:// URL with a host"
            )));
        }
        let policy = ctx.web.clone();
        let cancel = ctx.cancel.clone();
        let worker = std::thread::Builder::new()
            .name("ybs-web-fetch".into())
            .spawn(move || fetch_blocking(parsed, &policy, &cancel))
            .map_err(|error| ToolError::failed(format!("cannot start the fetch: {error}")))?;
        let page = worker
            .join()
            .map_err(|_| ToolError::failed("the fetch stopped unexpectedly"))??;
        Ok(page)
    }
}

/// Runs [`fetch`] on a runtime of this thread, stopping when `cancel` is set.
fn fetch_blocking(
    url: url::Url,
    policy: &WebPolicy,
    cancel: &CancelFlag,
) -> Result<Value, ToolError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| ToolError::failed(format!("cannot start the fetch: {error}")))?;
    runtime.block_on(async {
        let watch = async {
            while !cancel.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::select! {
            result = tokio::time::timeout(policy.timeout, fetch(url, policy)) => match result {
                Ok(result) => result,
                Err(_) => Err(ToolError::failed(format!(
                    "the fetch took longer than {} s and was stopped",
                    policy.timeout.as_secs()
                ))),
            },
            () = watch => Err(ToolError::failed("the fetch was cancelled by the user")),
        }
    })
}

/// Fetches `url`: the page as text, or why not.
async fn fetch(url: url::Url, policy: &WebPolicy) -> Result<Value, ToolError> {
    let place = |url: &url::Url| {
        let host = url.host_str().map(str::to_owned);
        (url.scheme().to_owned(), host, url.port_or_known_default())
    };
    let start = place(&url);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            // The user allowed this host and port: a redirect to another port of the same
            // host, or to another spelling of it, is another place.
            let same = start.1.is_some() && place(attempt.url()) == start;
            if !same || attempt.previous().len() > MAX_REDIRECTS {
                attempt.stop()
            } else {
                attempt.follow()
            }
        }))
        .user_agent(concat!("ybs/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| ToolError::failed(format!("cannot fetch: {error}")))?;
    let mut response = client
        .get(url.clone())
        .header("accept", "text/html, text/markdown, text/plain, */*;q=0.5")
        .send()
        .await
        .map_err(|error| ToolError::failed(format!("cannot fetch `{url}`: {error}")))?;
    let status = response.status();
    let final_url = response.url().to_string();
    if status.is_redirection() {
        let location = (response.headers().get("location"))
            .and_then(|value| value.to_str().ok())
            .and_then(|location| response.url().join(location).ok())
            .map_or_else(|| "(no location)".to_owned(), |to| to.to_string());
        return Err(ToolError::failed(format!(
            "`{final_url}` redirects to another host or port: {location}; fetch that URL if \
             it is the page you want (the user is asked for each new host and port)"
        )));
    }
    let content_type = (response.headers().get("content-type"))
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| ToolError::failed(format!("cannot read `{final_url}`: {error}")))?
    {
        let room = policy.max_bytes.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room {
            truncated = true;
            break;
        }
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    let is_html = content_type.contains("html")
        || (content_type.is_empty() && text.trim_start().starts_with('<'));
    let readable = content_type.is_empty()
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript");
    if !readable {
        return Err(ToolError::failed(format!(
            "`{final_url}` is {content_type} ({}), not text; only web pages and text \
             can be fetched",
            counted(body.len() as u64, "byte", "bytes")
        )));
    }
    let content = if is_html { markdown(&text) } else { text };
    if !status.is_success() {
        let start: String = content.chars().take(500).collect();
        return Err(ToolError::failed(format!(
            "`{final_url}` answered HTTP {status}: {start}"
        )));
    }
    Ok(json!({
        "url": final_url,
        "status": status.as_u16(),
        "content_type": content_type,
        "content": content,
        "truncated": truncated,
    }))
}

/// HTML as Markdown, without scripts, styles and the page's head.
pub fn markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "head", "svg", "iframe", "template",
        ])
        .build();
    match converter.convert(html) {
        Ok(text) => text.trim().to_owned(),
        // htmd fails only on I/O of its own writer; the page's text is still better than
        // nothing.
        Err(_) => html.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_address_kinds() {
        assert_eq!(
            url_host("https://Docs.RS/x?y=1").as_deref(),
            Some("docs.rs")
        );
        assert_eq!(url_host("file:///etc/passwd"), None);
        assert_eq!(url_host("http://[::1]:8080/").as_deref(), Some("::1"));
        assert_eq!(host_kind("127.0.0.1"), Some("this machine (loopback)"));
        assert_eq!(host_kind("localhost"), Some("this machine (loopback)"));
        assert_eq!(host_kind("::1"), Some("this machine (loopback)"));
        assert_eq!(
            host_kind("::ffff:127.0.0.1"),
            Some("this machine (loopback)")
        );
        assert_eq!(
            host_kind("::ffff:10.0.0.1"),
            Some("a private network address")
        );
        assert_eq!(host_kind("192.168.1.4"), Some("a private network address"));
        assert_eq!(host_kind("10.0.0.1"), Some("a private network address"));
        assert_eq!(host_kind("fd00::1"), Some("a private network address"));
        assert_eq!(host_kind("docs.rs"), None);
        assert_eq!(host_kind("8.8.8.8"), None);
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let text = markdown(
            "<html><head><title>T</title><style>p{}</style></head><body><h1>Hello</h1>\
             <script>alert(1)</script><p>A <a href=\"/x\">link</a>.</p></body></html>",
        );
        assert!(
            text.contains("# Hello") || text.contains("Hello\n==="),
            "{text}"
        );
        assert!(text.contains("[link](/x)"), "{text}");
        assert!(!text.contains("alert") && !text.contains("p{}"), "{text}");
    }
}
