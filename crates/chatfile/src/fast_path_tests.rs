//! The fast path (bytes first, shapes only for the lines whose first bytes do not settle
//! them, content as slices) reads every input exactly as the grammar run on every line does.

use proptest::prelude::*;

use crate::grammar::{self, Shape};
use crate::lines::{self, Lines};
use crate::parse::{parse_document, parse_document_grammar_only};

/// Pieces of lines that matter to some rule, and arbitrary text between them.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("user:".to_string()),
        Just("user: x".to_string()),
        Just("http://u".to_string()),
        Just("role_9:".to_string()),
        Just("User:".to_string()),
        Just("\\".to_string()),
        Just("\\\\".to_string()),
        Just(":".to_string()),
        Just(":--".to_string()),
        Just(":-- ".to_string()),
        Just(" {{{".to_string()),
        Just(" }}}".to_string()),
        Just("{{{".to_string()),
        Just("x:--\t".to_string()),
        Just("shell:-- ls {{{".to_string()),
        Just("shell:-- ls }}}".to_string()),
        Just("```".to_string()),
        Just("``".to_string()),
        Just("[[".to_string()),
        Just("]]".to_string()),
        Just("<b>".to_string()),
        Just("</b>".to_string()),
        Just("<a x=\"1\">".to_string()),
        Just("</a>".to_string()),
        Just("<".to_string()),
        Just("agent: a".to_string()),
        Just("previous_response_id: r".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\u{0}".to_string()),
        Just("\u{0B}".to_string()),
        Just("\u{a0}".to_string()),
        "[a-z_:<>/\\\\`\\[\\]{} -]{0,5}",
        ".{0,4}",
    ]
}

pub(crate) fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn fast_shapes_are_the_grammar_shapes(text in text()) {
        let fast: Vec<_> = Lines::new(&text).map(|(shape, line, _)| (shape, line)).collect();
        prop_assert_eq!(fast, grammar::shapes(&text));
    }

    #[test]
    fn fast_plain_shapes_are_the_grammar_plain_shapes(text in text()) {
        for line in text.split('\n') {
            prop_assert_eq!(lines::plain_shape(line), grammar::classify_plain(line));
        }
    }

    #[test]
    fn fast_close_tags_are_the_grammar_close_tags(text in text()) {
        for line in text.split('\n') {
            let fast: Vec<&str> = lines::close_tags(line).collect();
            prop_assert_eq!(fast, grammar::close_tags(line));
        }
    }

    #[test]
    fn plain_lines_are_plain_for_the_grammar(text in text()) {
        // The parser asks these only of lines without `:--`.
        for (shape, line) in grammar::shapes(&text) {
            if line.contains(":--") {
                continue;
            }
            let bytes = line.as_bytes();
            if lines::is_plain_outside(bytes) {
                prop_assert_eq!(shape, Shape::Text, "outside blocks: {:?}", line);
            }
            if lines::is_plain_in_fence(bytes) {
                prop_assert_ne!(shape, Shape::Fence, "in a fence: {:?}", line);
            }
            if lines::is_plain_in_square(bytes) {
                prop_assert_ne!(shape, Shape::SquareOpen, "in a square block: {:?}", line);
                prop_assert!(!grammar::ends_with_square_close(line), "in a square block: {:?}", line);
            }
        }
    }

    #[test]
    fn close_tags_of_the_whole_text_are_those_of_its_lines(text in text()) {
        let whole: Vec<&str> = lines::close_tags(&text).collect();
        let by_line: Vec<&str> = text.split('\n').flat_map(grammar::close_tags).collect();
        prop_assert_eq!(whole, by_line);
    }

    #[test]
    fn fast_parse_is_the_grammar_parse(text in text()) {
        prop_assert_eq!(parse_document(&text), parse_document_grammar_only(&text));
    }

    #[test]
    fn fast_parse_is_the_grammar_parse_on_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..400)
    ) {
        let text = String::from_utf8_lossy(&bytes);
        prop_assert_eq!(parse_document(&text), parse_document_grammar_only(&text));
    }
}
