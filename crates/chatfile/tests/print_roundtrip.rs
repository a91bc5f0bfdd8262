//! The serializer: its exact output, the escapes it uses, and the law
//! `parse(print(m)) == m` checked with proptest; the parser never panics on any input.

use proptest::prelude::*;
use ybs_chatfile::{ChatMessage, PrintError, parse_messages, print};

fn m(role: &str, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

fn round_trip(messages: &[ChatMessage]) -> String {
    let text = print(messages).unwrap_or_else(|err| panic!("print failed: {err}"));
    assert_eq!(parse_messages(&text), messages, "text was:\n{text}");
    text
}

#[test]
fn blocks_and_inline_values_are_written_as_the_notes_say() {
    let text = round_trip(&[
        m("system", "Be brief."),
        m("model", "gpt-5-nano"),
        m("user", "Hi\n\nthere"),
        m("function_call", r#"{"name":"f","arguments":{},"id":"c1"}"#),
        m("clear", ""),
        m("option", "two\nlines"),
    ]);
    assert_eq!(
        text,
        "system:\n\nBe brief.\n\nmodel: gpt-5-nano\n\nuser:\n\nHi\n\nthere\n\nfunction_call: {\"name\":\"f\",\"arguments\":{},\"id\":\"c1\"}\n\nclear:\n\noption:\n\ntwo\nlines\n"
    );
}

#[test]
fn header_shaped_lines_are_escaped_and_escaped_lines_wrapped() {
    // An already-escaped line is wrapped rather than escaped twice: the reference unescapes a
    // single backslash only, so `\\assistant:` would keep both there.
    let text = round_trip(&[m(
        "user",
        "user: not a header\nrole_x: y\nhttp://u\n\\assistant: already escaped\nend:",
    )]);
    assert_eq!(
        text,
        "user:\n\n\\user: not a header\n\\role_x: y\n\\http://u\n[[\\assistant: already escaped\n]]\n\\end:\n"
    );
}

#[test]
fn lines_inside_closed_fences_and_tags_are_written_as_they_are() {
    let content = "```\nuser: inside\n```\n<file name=\"a\">\nx: y\n</file>";
    let text = round_trip(&[m("user", content)]);
    assert_eq!(text, format!("user:\n\n{content}\n"));
}

#[test]
fn openers_the_content_does_not_close_are_wrapped_in_square_markers() {
    // A backslash would not stop a command-output opener (its first word may hold anything).
    let text = round_trip(&[
        m("user", "a\n[[b\n```py\n<t>\nshell:-- ls {{{\nSh:-- x {{{"),
        m("assistant", "</t>"),
    ]);
    assert_eq!(
        text,
        "user:\n\na\n[[[[b\n]]\n[[```py\n]]\n[[<t>\n]]\n[[shell:-- ls {{{\n]]\n[[Sh:-- x {{{\n]]\n\nassistant:\n\n</t>\n"
    );
}

#[test]
fn agent_and_previous_response_id_round_trip_in_both_forms() {
    round_trip(&[
        m("agent", "Baking"),
        m("assistant", "x"),
        m("previous_response_id", "r1"),
        m("previous_response_id", "multi\nline"),
        m("agent", "a\nb"),
        m("user", "q"),
    ]);
}

#[test]
fn a_role_that_is_not_a_header_name_is_refused() {
    assert_eq!(
        print(&[m("user", "x"), m("User", "y")]),
        Err(PrintError::InvalidRole {
            index: 1,
            role: "User".into()
        })
    );
    assert_eq!(
        PrintError::InvalidRole {
            index: 1,
            role: "User".into()
        }
        .to_string(),
        "cannot write message 1 with role `User`: a .chat role is one or more of a-z, 0-9 and _"
    );
}

/// Lines made of the pieces that matter to the parser.
fn line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("user:".to_string()),
        Just("role_x: y".to_string()),
        Just("http://u".to_string()),
        Just("end:".to_string()),
        Just("\\".to_string()),
        Just(":".to_string()),
        Just("```".to_string()),
        Just("~~~".to_string()),
        Just("[[".to_string()),
        Just("]]".to_string()),
        Just("<b>".to_string()),
        Just("</b>".to_string()),
        Just("<file name=\"x\">".to_string()),
        Just("</file>".to_string()),
        Just("shell:-- ls {{{".to_string()),
        Just("shell:-- ls }}}".to_string()),
        Just(":-- ".to_string()),
        Just(" {{{".to_string()),
        Just(" }}}".to_string()),
        Just("previous_response_id: r".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\r".to_string()),
        Just("\u{a0}".to_string()),
        Just("\u{0}".to_string()),
        Just("\u{0B}".to_string()),
        "[a-zA-Z0-9 _:<>/\\\\`\\[\\]{}-]{0,6}",
        ".{0,6}",
    ];
    prop::collection::vec(piece, 0..4).prop_map(|pieces| pieces.concat())
}

fn content() -> impl Strategy<Value = String> {
    prop::collection::vec(line(), 1..8).prop_map(|lines| {
        let text = lines.join("\n");
        text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\0'))
            .to_string()
    })
}

fn role() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("user".to_string()),
        Just("assistant".to_string()),
        Just("system".to_string()),
        Just("option".to_string()),
        Just("agent".to_string()),
        Just("previous_response_id".to_string()),
        Just("function_call".to_string()),
        Just("file".to_string()),
        "[a-z0-9_]{1,8}",
    ]
}

fn messages() -> impl Strategy<Value = Vec<ChatMessage>> {
    prop::collection::vec(
        (role(), content()).prop_filter_map("non-empty", |(role, content)| {
            (!content.is_empty()).then(|| ChatMessage::new(role, content))
        }),
        0..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_of_print_is_identity(messages in messages()) {
        let text = print(&messages).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(parse_messages(&text), messages, "text was:\n{}", text);
    }

    #[test]
    fn empty_messages_round_trip_too(
        messages in prop::collection::vec((role(), prop_oneof![Just(String::new()), content()]), 0..6)
    ) {
        let messages: Vec<ChatMessage> =
            messages.into_iter().map(|(role, content)| ChatMessage::new(role, content)).collect();
        let text = print(&messages).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(parse_messages(&text), messages, "text was:\n{}", text);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_messages(&text);
    }

    #[test]
    fn parse_never_panics_on_marker_soup(lines in prop::collection::vec(line(), 0..40)) {
        let text = lines.join("\n");
        let messages = ybs_chatfile::parse(&text);
        for message in messages {
            prop_assert!(message.span.start <= message.span.end);
            prop_assert!(message.span.end <= lines.len().max(1));
        }
    }
}

/// A line of backslashes before a header shape (or before something that is not one).
fn backslash_line() -> impl Strategy<Value = String> {
    let shape = prop_oneof![
        Just("user: x".to_string()),
        Just("user:".to_string()),
        Just("role_x: y".to_string()),
        Just("http://u".to_string()),
        Just("end:".to_string()),
        Just("User: no".to_string()),
        Just(" user: indented".to_string()),
        Just("[[".to_string()),
        Just("```".to_string()),
        Just("".to_string()),
    ];
    (0usize..5, shape).prop_map(|(n, shape)| format!("{}{shape}", "\\".repeat(n)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn one_backslash_is_removed_from_any_run_before_a_header(
        n in 1usize..6,
        role in "[a-z0-9_]{1,6}",
        rest in "[a-z]{0,4}",
    ) {
        let escaped = format!("{}{role}:{rest}", "\\".repeat(n));
        let text = format!("user:\n{escaped}");
        prop_assert_eq!(
            parse_messages(&text),
            vec![m("user", &escaped[1..])],
            "text was:\n{}", text
        );
    }

    #[test]
    fn backslash_and_header_lines_round_trip(
        lines in prop::collection::vec(backslash_line(), 1..8),
        role in role(),
    ) {
        let content = lines.join("\n");
        let content = content
            .trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\0'));
        let messages = vec![m(&role, content), m("assistant", "ok")];
        let text = print(&messages).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(parse_messages(&text), messages, "text was:\n{}", text);
    }
}
