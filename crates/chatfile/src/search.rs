//! Finding a short ASCII pattern (a marker such as `:-- ` or ` {{{`) in one line: its first
//! byte (with `memchr` on long lines), then the rest compared in place. For patterns of a few bytes on lines
//! of a few dozen this is much cheaper than building a substring searcher for every call, and
//! it stays linear in the line's length.

/// The offset of the first `needle` in `haystack`.
#[inline]
pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(at) = position(first, haystack.get(from..)?) {
        let at = from + at;
        if haystack.get(at + 1..at + needle.len()) == Some(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The offset of the last `needle` in `haystack`.
#[inline]
pub(crate) fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    // Candidates start at most `needle.len()` bytes before the end.
    let mut until = (haystack.len() + 1).checked_sub(needle.len())?;
    while let Some(at) = rposition(first, &haystack[..until]) {
        if haystack.get(at + 1..at + needle.len()) == Some(rest) {
            return Some(at);
        }
        until = at;
    }
    None
}

/// Below this length a plain loop finds a byte sooner than `memchr`'s setup does.
const SHORT: usize = 32;

#[inline]
fn position(byte: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() < SHORT {
        haystack.iter().position(|&b| b == byte)
    } else {
        memchr::memchr(byte, haystack)
    }
}

#[inline]
fn rposition(byte: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() < SHORT {
        haystack.iter().rposition(|&b| b == byte)
    } else {
        memchr::memrchr(byte, haystack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn finds_the_first_and_the_last() {
        assert_eq!(find(b"a:-- b:-- ", b":-- "), Some(1));
        assert_eq!(rfind(b"a {{{ b {{{", b" {{{"), Some(7));
        assert_eq!(rfind(b" {{{", b" {{{"), Some(0));
        assert_eq!(find(b" {{", b" {{{"), None);
        assert_eq!(rfind(b"{{{", b" {{{"), None);
        assert_eq!(find(b"::--", b":--"), Some(1));
        assert_eq!(find(b"", b":--"), None);
    }

    proptest! {
        #[test]
        fn agrees_with_str_find(haystack in "[ :{}<>/-]{0,80}", needle in "[ :{}<>/-]{1,4}") {
            prop_assert_eq!(find(haystack.as_bytes(), needle.as_bytes()), haystack.find(&needle));
            prop_assert_eq!(rfind(haystack.as_bytes(), needle.as_bytes()), haystack.rfind(&needle));
        }
    }
}
