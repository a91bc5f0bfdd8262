//! One test (or more) per rule of notes/chatfile-rules.md, with the exact messages expected.

use ybs_chatfile::{
    BlockKind, ChatMessage, LineSpan, OpenBlock, parse, parse_document, parse_messages,
};

fn m(role: &str, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

fn check(text: &str, expected: &[(&str, &str)]) {
    let expected: Vec<ChatMessage> = expected.iter().map(|(r, c)| m(r, c)).collect();
    assert_eq!(parse_messages(text), expected, "parsing {text:?}");
}

// ---- Lines and whitespace -------------------------------------------------------------------

#[test]
fn crlf_lines_keep_their_carriage_return_but_headers_still_work() {
    check(
        "user:\r\n\r\na\r\nb\r\nassistant: hi\r\nendpoint:\r\n",
        &[("user", "a\r\nb"), ("assistant", "hi"), ("endpoint", "")],
    );
}

#[test]
fn strip_removes_ascii_whitespace_and_nul_but_not_unicode_spaces() {
    check("user:\n\0 \t\u{0B}\u{0C}x\0\n", &[("user", "x")]);
    check("user:\n\u{a0}x\u{2003}\n", &[("user", "\u{a0}x\u{2003}")]);
}

#[test]
fn content_is_stripped_once_as_a_whole() {
    check(
        "user:\n\n  first  \n\n\nsecond   \n\n",
        &[("user", "first  \n\n\nsecond")],
    );
}

#[test]
fn headers_make_empty_messages_and_implied_blocks_do_not() {
    check(
        "user:\nassistant:\nhi",
        &[("user", ""), ("assistant", "hi")],
    );
    check("clear:\n\nuser: x\n", &[("clear", ""), ("user", "x")]);
    // No empty user message before the first header, nor after an inline one.
    check("model: m\nuser:\nq", &[("model", "m"), ("user", "q")]);
    check("", &[]);
    check("\n \n", &[]);
}

// ---- Rule 1: fences -------------------------------------------------------------------------

#[test]
fn a_fence_protects_headers_and_keeps_its_lines() {
    check(
        "user:\n\n```ruby\nassistant: no\n\n  ```\nassistant:\nyes",
        &[
            ("user", "```ruby\nassistant: no\n\n  ```"),
            ("assistant", "yes"),
        ],
    );
}

#[test]
fn tildes_are_not_a_fence() {
    check(
        "user:\n~~~\nassistant: split\n~~~",
        &[("user", "~~~"), ("assistant", "split"), ("user", "~~~")],
    );
}

#[test]
fn a_fence_inside_a_square_block_is_ordinary_content() {
    // It neither closes the square block nor opens a fence, and it is kept (we fix: the
    // reference drops it).
    check(
        "user:\n[[a\n```\nb: c\nd]]\ne: f",
        &[("user", "a\n```\nb: c\nd"), ("e", "f")],
    );
}

#[test]
fn a_fence_line_in_a_block_is_only_content() {
    // First match wins: rule 1 makes it content, so it neither closes a `[[` block by ending
    // with `]]` nor pops an XML tag.
    check(
        "user:\n[[a\n```]]\nb: c\n]]\nd: e",
        &[("user", "a\n```]]\nb: c"), ("d", "e")],
    );
    check(
        "user:\n<t>\n```</t>\nb: c\n</t>\nd: e",
        &[("user", "<t>\n```</t>\nb: c\n</t>"), ("d", "e")],
    );
}

#[test]
fn a_fence_inside_an_xml_block_is_ordinary_content() {
    check(
        "user:\n<t>\n```\nx: y\n</t>\nz: w",
        &[("user", "<t>\n```\nx: y\n</t>"), ("z", "w")],
    );
}

// ---- Rules 2 and 3: square blocks -----------------------------------------------------------

#[test]
fn square_markers_are_removed_and_the_rest_kept() {
    check(
        "assistant:\nStart\n[[This: has colon\nand lines]]\nEnd",
        &[("assistant", "Start\nThis: has colon\nand lines\nEnd")],
    );
    // Only the first `]]` goes; a marker alone on its line leaves nothing.
    check("user:\n[[\nx: y\na]]b]]\n]]", &[("user", "x: y\nab]]\n]]")]);
    check("user:\n  [[  \nx: y\n  ]]  \nz", &[("user", "x: y\nz")]);
}

#[test]
fn square_close_needs_the_stripped_line_to_end_with_brackets() {
    check(
        "user:\n[[a\nb]] c\nd: e\n]]\nf: g",
        &[("user", "a\nb]] c\nd: e"), ("f", "g")],
    );
}

#[test]
fn square_open_does_not_hijack_a_fence_or_an_xml_block() {
    check(
        "user:\n```\n[[a\n```\nb: c",
        &[("user", "```\n[[a\n```"), ("b", "c")],
    );
    check(
        "user:\n<t>\n[[a\n</t>\nb: c",
        &[("user", "<t>\n[[a\n</t>"), ("b", "c")],
    );
}

#[test]
fn square_open_inside_a_square_block_only_loses_its_marker() {
    check(
        "user:\n[[a\n[[b\nc]]\nd: e",
        &[("user", "a\nb\nc"), ("d", "e")],
    );
}

#[test]
fn a_square_line_opening_and_ending_on_one_line_stays_open() {
    // Rule 3 wins over rule 2 on the opening line: the block is still open after it.
    check(
        "user:\n[[x]]\ny: z\n]]\nw: v",
        &[("user", "x]]\ny: z"), ("w", "v")],
    );
}

#[test]
fn command_output_openers_take_over_a_fence_or_xml_block() {
    // As in the reference (the notes fix only `[[`): the opener turns the block into a square
    // block, which the fence line does not close; `]]` does.
    check(
        "user:\n```\nsh:-- ls {{{\n```\na: b\n]]\nc: d",
        &[
            ("user", "```\n<cmd_output cmd=\"ls\">\n```\na: b"),
            ("c", "d"),
        ],
    );
    check(
        "user:\n<t>\nsh:-- ls {{{\n</t>\na: b\nsh:-- ls }}}\nc: d",
        &[
            (
                "user",
                "<t>\n<cmd_output cmd=\"ls\">\n</t>\na: b\n</cmd_output>",
            ),
            ("c", "d"),
        ],
    );
}

// ---- Rules 4 and 5: command output ----------------------------------------------------------

#[test]
fn command_output_markers_become_cmd_output_tags() {
    check(
        "assistant:\nBefore\nshell:-- ls -la {{{\nfile1\nx: y\nshell:-- ls -la }}}\nAfter",
        &[(
            "assistant",
            "Before\n<cmd_output cmd=\"ls -la\">\nfile1\nx: y\n</cmd_output>\nAfter",
        )],
    );
}

#[test]
fn a_command_close_outside_a_square_block_is_a_header() {
    check(
        "user:\nq\nshell:-- ls }}}",
        &[("user", "q"), ("shell", "-- ls }}}")],
    );
}

#[test]
fn a_command_output_block_also_closes_with_brackets() {
    check(
        "user:\nsh:-- make {{{\nout]]\na: b",
        &[("user", "<cmd_output cmd=\"make\">\nout"), ("a", "b")],
    );
}

// ---- Rules 6 and 7: XML blocks --------------------------------------------------------------

#[test]
fn an_xml_block_protects_until_its_tag_closes() {
    check(
        "assistant:\nBefore xml\n<note>\nThis: is protected\n</note>\nAfter",
        &[(
            "assistant",
            "Before xml\n<note>\nThis: is protected\n</note>\nAfter",
        )],
    );
    check(
        "user:\n<file name=\"a.rs\">\nuser: no\n\n</file>\nsystem: yes",
        &[
            ("user", "<file name=\"a.rs\">\nuser: no\n\n</file>"),
            ("system", "yes"),
        ],
    );
}

#[test]
fn only_the_first_closing_tag_of_a_line_counts() {
    check(
        "user:\n<a>\n</b></a>\nx: y\n</a>\nz: w",
        &[("user", "<a>\n</b></a>\nx: y\n</a>"), ("z", "w")],
    );
}

#[test]
fn a_closing_tag_on_the_same_line_does_not_open_a_block() {
    // We fix: the reference lets `<b>x</b>` swallow what follows.
    check(
        "user:\n<b>x</b>\nassistant: ok",
        &[("user", "<b>x</b>"), ("assistant", "ok")],
    );
}

#[test]
fn a_closing_tag_before_the_opening_one_does_not_open_a_block() {
    // We fix: the reference looks for the closing tag anywhere in the file.
    check(
        "user:\n</b>\n<b>\nassistant: ok",
        &[("user", "</b>\n<b>"), ("assistant", "ok")],
    );
}

#[test]
fn an_unmatched_inner_closing_tag_does_not_close_the_block() {
    check(
        "user:\n<outer>\n</inner>\na: b\n</outer>\nc: d",
        &[("user", "<outer>\n</inner>\na: b\n</outer>"), ("c", "d")],
    );
}

// ---- Rule 8: headers ------------------------------------------------------------------------

#[test]
fn only_lowercase_names_at_column_zero_are_headers() {
    check(
        "user:\nUser: a\n user: b\nuser : c\nhttp://x\n",
        &[("user", "User: a\n user: b\nuser : c"), ("http", "//x")],
    );
}

#[test]
fn an_inline_header_keeps_the_block_role() {
    check(
        "assistant:\none\nmodel: m\ntwo",
        &[("assistant", "one"), ("model", "m"), ("assistant", "two")],
    );
}

#[test]
fn previous_response_id_and_agent_reset_the_role_to_user() {
    check(
        "assistant:\na\nprevious_response_id: r1\nb\nassistant:\nc\nagent: Baking\nd",
        &[
            ("assistant", "a"),
            ("previous_response_id", "r1"),
            ("user", "b"),
            ("assistant", "c"),
            ("agent", "Baking"),
            ("user", "d"),
        ],
    );
    check(
        "previous_response_id:abc123\nSome block\nassistant: Got it",
        &[
            ("previous_response_id", "abc123"),
            ("user", "Some block"),
            ("assistant", "Got it"),
        ],
    );
}

#[test]
fn inline_values_are_stripped() {
    check(
        "option:   temperature 0.5  \r",
        &[("option", "temperature 0.5")],
    );
}

// ---- Rule 9: escaped headers ----------------------------------------------------------------

#[test]
fn an_escaped_header_loses_one_backslash() {
    check(
        "user:\n\\assistant: literal\n\\\\user: twice\n\\Nope: kept\n",
        &[("user", "assistant: literal\n\\user: twice\n\\Nope: kept")],
    );
}

#[test]
fn escapes_inside_protected_blocks_are_kept() {
    check(
        "user:\n```\n\\user: x\n```",
        &[("user", "```\n\\user: x\n```")],
    );
}

// ---- Text before the first header, unclosed blocks ------------------------------------------

#[test]
fn text_before_the_first_header_is_user() {
    check(
        "hello\n\nsystem:\nrules",
        &[("user", "hello"), ("system", "rules")],
    );
}

#[test]
fn an_unclosed_block_runs_to_the_end_of_the_file() {
    let text = "user:\nq\n```\nassistant: swallowed\n";
    check(text, &[("user", "q\n```\nassistant: swallowed")]);
    assert_eq!(
        parse_document(text).unclosed,
        Some(OpenBlock {
            kind: BlockKind::Fence,
            line: 3
        })
    );
    assert_eq!(
        parse_document("[[a\nb: c").unclosed,
        Some(OpenBlock {
            kind: BlockKind::Square,
            line: 1
        })
    );
    assert_eq!(parse_document("user:\n```\n```\n").unclosed, None);
}

// ---- Spans ----------------------------------------------------------------------------------

#[test]
fn messages_carry_their_line_spans() {
    let text = "intro\n\nsystem:\n\nrules\nmore\n\nmodel: m\nafter\nassistant:\n";
    let spans: Vec<(String, LineSpan)> = parse(text)
        .into_iter()
        .map(|message| (message.role, message.span))
        .collect();
    let span = |start, end| LineSpan { start, end };
    assert_eq!(
        spans,
        vec![
            ("user".to_owned(), span(1, 1)),
            ("system".to_owned(), span(3, 6)),
            ("model".to_owned(), span(8, 8)),
            ("system".to_owned(), span(9, 9)),
            ("assistant".to_owned(), span(10, 10)),
        ]
    );
}

// ---- Example of the spec --------------------------------------------------------------------

#[test]
fn the_spec_example_parses_as_documented() {
    let text = "user:\n\nendpoint: nano\nagent: Baking\n\nbake some muffins using bake_muffin_tray, use blueberries\n\nfunction_call: {\"name\":\"bake_muffin_tray\",\"arguments\":{\"blueberries\":true},\"id\":\"call_123\"}\nfunction_call_output: {\"name\":\"bake_muffin_tray\",\"content\":\"...\",\"id\":\"call_123\"}\n\nassistant:\n\nBlueberry muffins are in the oven.\n\nprevious_response_id: resp_034e...\n\nCan you also bake one without blueberries?\n";
    check(
        text,
        &[
            ("user", ""),
            ("endpoint", "nano"),
            ("agent", "Baking"),
            (
                "user",
                "bake some muffins using bake_muffin_tray, use blueberries",
            ),
            (
                "function_call",
                "{\"name\":\"bake_muffin_tray\",\"arguments\":{\"blueberries\":true},\"id\":\"call_123\"}",
            ),
            (
                "function_call_output",
                "{\"name\":\"bake_muffin_tray\",\"content\":\"...\",\"id\":\"call_123\"}",
            ),
            ("assistant", "Blueberry muffins are in the oven."),
            ("previous_response_id", "resp_034e..."),
            ("user", "Can you also bake one without blueberries?"),
        ],
    );
}

// ---- Pathological input ---------------------------------------------------------------------

#[test]
fn a_hundred_thousand_unclosed_openers_parse_into_one_message() {
    let squares = "[[\nuser:\n".repeat(50_000);
    let document = parse_document(&squares);
    assert_eq!(document.messages.len(), 1);
    assert_eq!(
        document.messages[0].content,
        "user:\n".repeat(50_000).trim_end()
    );

    // A fence, a `[[` inside it, the closing fence, then a `[[` that stays open: every later
    // fence is ordinary content of that square block.
    let fences = "```\n[[\n".repeat(100_000);
    let document = parse_document(&fences);
    assert_eq!(document.messages.len(), 1);
    assert_eq!(
        document.unclosed,
        Some(OpenBlock {
            kind: BlockKind::Square,
            line: 4
        })
    );

    let tags = "<a>\n".repeat(100_000) + "</a>\nuser: x\n";
    let messages = parse_messages(&tags);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1], m("user", "x"));
}
