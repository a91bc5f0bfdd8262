//! Token counts for file statuses, with the `cl100k_base` vocabulary the spec names.

/// The number of `cl100k_base` tokens in `text`.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::cl100k_base_singleton()
        .encode_with_special_tokens(text)
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cl100k_tokens() {
        assert_eq!(count(""), 0);
        // "hello world" is two cl100k tokens.
        assert_eq!(count("hello world"), 2);
    }
}
