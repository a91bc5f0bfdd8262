//! When a failed request is sent again, and after how long: exponential backoff with jitter,
//! honouring the server's `Retry-After`.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use ybs_core::{ErrorKind, LlmError};

/// The [`LlmError::code`] of a request that never reached the server: the connection was
/// refused, the host has no address, or connecting timed out. Nothing was sent, so trying
/// again at once would only make the user wait for the same answer.
pub const UNREACHABLE: &str = "unreachable";

/// Whether `error` is of a request that never reached the server (see [`UNREACHABLE`]).
pub fn never_reached(error: &LlmError) -> bool {
    error.code.as_deref() == Some(UNREACHABLE)
}

/// How often and how patiently a failed request is retried.
///
/// Only failures that may pass ([`ErrorKind::is_retryable`]: rate limits, server errors,
/// network errors, timeouts) of requests that reached the server are retried (a refused
/// connection is reported at once), and only before the first event of a stream was
/// delivered. Attempt `n` (0-based) waits `base * 2^n`, capped at `max_delay`, scaled by a
/// random factor in `[0.5, 1.0)`; a server's `Retry-After` replaces that wait, and one longer
/// than `max_retry_after` is not waited for at all (the error is returned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first try (`retry_attempts` of the ybs config); 0 disables them.
    pub attempts: u32,
    /// The first backoff (`retry_backoff_base_ms` of the ybs config).
    pub base: Duration,
    /// The longest backoff.
    pub max_delay: Duration,
    /// The longest `Retry-After` worth waiting for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 3,
            base: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy with `attempts` retries starting at `base_ms` milliseconds, as the ybs config
    /// names them.
    pub fn new(attempts: u32, base_ms: u64) -> Self {
        RetryPolicy {
            attempts,
            base: Duration::from_millis(base_ms),
            ..RetryPolicy::default()
        }
    }

    /// No retries.
    pub fn none() -> Self {
        RetryPolicy::new(0, 0)
    }

    /// How long to wait before retry number `attempt` (0-based) after `error`, or `None` when
    /// the error must be returned instead. `jitter` is a number in `[0, 1)`.
    pub fn delay(&self, attempt: u32, error: &LlmError, jitter: f64) -> Option<Duration> {
        // A server that refused the connection answers the same way a second later; only
        // a request that reached it may fare better the next time.
        if attempt >= self.attempts || !error.kind.is_retryable() || never_reached(error) {
            return None;
        }
        if let ErrorKind::RateLimit {
            retry_after: Some(after),
        } = error.kind
        {
            return (after <= self.max_retry_after).then_some(after);
        }
        let factor = 2u32.saturating_pow(attempt.min(20));
        let backoff = self.base.saturating_mul(factor).min(self.max_delay);
        Some(backoff.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0)))
    }
}

/// A random number in `[0, 1)`, good enough to spread retries of many clients apart.
pub(crate) fn jitter() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|since| since.as_nanos())
            .unwrap_or_default(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or
/// as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|ms| ms.parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    parse_retry_after(text("retry-after")?, SystemTime::now())
}

/// `Retry-After` as delay-seconds or an HTTP date, relative to `now`.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let now = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs() as i64;
    Some(Duration::from_secs(
        at.timestamp().saturating_sub(now).max(0) as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(kind: ErrorKind) -> LlmError {
        LlmError::new(kind, "x")
    }

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let policy = RetryPolicy {
            attempts: 10,
            base: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(60),
        };
        let server = err(ErrorKind::Server);
        assert_eq!(
            policy.delay(0, &server, 0.0),
            Some(Duration::from_millis(50))
        );
        assert_eq!(
            policy.delay(2, &server, 0.0),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            policy.delay(2, &server, 1.0),
            Some(Duration::from_millis(400))
        );
        assert_eq!(
            policy.delay(9, &server, 0.0),
            Some(Duration::from_millis(500))
        );
    }

    #[test]
    fn retries_only_what_may_pass_and_only_so_often() {
        let policy = RetryPolicy::new(2, 10);
        for kind in [
            ErrorKind::Auth,
            ErrorKind::BadRequest,
            ErrorKind::ModelNotFound,
            ErrorKind::ContextOverflow,
            ErrorKind::Quota,
            ErrorKind::Cancelled,
        ] {
            assert_eq!(policy.delay(0, &err(kind.clone()), 0.5), None, "{kind}");
        }
        for kind in [
            ErrorKind::Server,
            ErrorKind::Network,
            ErrorKind::Timeout,
            ErrorKind::RateLimit { retry_after: None },
        ] {
            assert!(policy.delay(1, &err(kind.clone()), 0.5).is_some(), "{kind}");
            assert_eq!(policy.delay(2, &err(kind.clone()), 0.5), None, "{kind}");
        }
        assert_eq!(
            RetryPolicy::none().delay(0, &err(ErrorKind::Server), 0.5),
            None
        );
    }

    #[test]
    fn a_request_that_never_reached_the_server_is_not_retried() {
        let policy = RetryPolicy::new(3, 10);
        let mut refused = err(ErrorKind::Network);
        assert!(policy.delay(0, &refused, 0.5).is_some());
        refused.code = Some(UNREACHABLE.to_owned());
        assert_eq!(policy.delay(0, &refused, 0.5), None);
    }

    #[test]
    fn retry_after_replaces_the_backoff() {
        let policy = RetryPolicy::new(3, 10);
        let limited = |secs| {
            err(ErrorKind::RateLimit {
                retry_after: Some(Duration::from_secs(secs)),
            })
        };
        assert_eq!(
            policy.delay(0, &limited(7), 0.3),
            Some(Duration::from_secs(7))
        );
        assert_eq!(policy.delay(0, &limited(3600), 0.3), None);
    }

    #[test]
    fn parses_retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);

        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn jitter_is_a_fraction() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
