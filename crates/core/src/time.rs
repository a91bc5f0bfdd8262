//! Timestamps in the form Go's `time.RFC3339Nano` writes them (`2025-01-19T22:01:00Z`,
//! fractional seconds without trailing zeros), so chats written by the first bb7
//! implementation keep their exact text when we save them again.

use chrono::{DateTime, FixedOffset, Timelike};
use serde::{Deserialize, Deserializer, Serializer};

pub(crate) fn format(at: &DateTime<FixedOffset>) -> String {
    let mut text = at.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = at.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let digits = format!("{nanos:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    if at.offset().local_minus_utc() == 0 {
        text.push('Z');
    } else {
        text.push_str(&at.format("%:z").to_string());
    }
    text
}

pub(crate) fn serialize<S: Serializer>(
    at: &Option<DateTime<FixedOffset>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serializer.serialize_str(&format(at)),
        None => serializer.serialize_none(),
    }
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime<FixedOffset>>, D::Error> {
    let text = Option::<String>::deserialize(deserializer)?;
    match text.as_deref() {
        None | Some("") => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map(Some)
            .map_err(|err| serde::de::Error::custom(format!("bad timestamp {text:?}: {err}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        format(&DateTime::parse_from_rfc3339(text).unwrap())
    }

    #[test]
    fn keeps_go_rfc3339nano_text() {
        assert_eq!(round("2025-01-19T22:01:00Z"), "2025-01-19T22:01:00Z");
        assert_eq!(round("2025-01-19T22:01:00.5Z"), "2025-01-19T22:01:00.5Z");
        assert_eq!(
            round("2025-01-19T22:01:00.123456789+01:00"),
            "2025-01-19T22:01:00.123456789+01:00"
        );
        assert_eq!(
            round("2025-01-19T22:01:00.120-05:30"),
            "2025-01-19T22:01:00.12-05:30"
        );
    }
}
