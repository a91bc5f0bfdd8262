//! Compatibility with the reference implementation of the `.chat` format: scout-ai's
//! `Chat.parse` and `Chat.print` (github.com/mikisvaz/scout-ai, `lib/scout/llm/chat/parse.rb`,
//! the version that resets the role after `agent:` and unescapes `\role:` lines).
//!
//! Each `reference(...)` case gives an input and the messages the reference returns for it,
//! worked out by following its code line by line. The reference also returns empty messages in
//! places (a `{user, ""}` before the first header, nothing for an empty header block); its own
//! `clean` step drops them, so the cases compare the non-empty messages and the empty ones are
//! covered by `differences` below.
//!
//! `difference(...)` cases are inputs where we deliberately read differently, each with both
//! readings: where notes/chatfile-rules.md says "we fix", and the few places its serializer
//! law needs it.

use ybs_chatfile::{ChatMessage, parse_messages, print};

fn non_empty(text: &str) -> Vec<(String, String)> {
    parse_messages(text)
        .into_iter()
        .filter(|message| !message.content.is_empty())
        .map(|message| (message.role, message.content))
        .collect()
}

fn owned(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(role, content)| ((*role).to_owned(), (*content).to_owned()))
        .collect()
}

/// Our non-empty messages are the reference's non-empty messages.
fn reference(text: &str, expected: &[(&str, &str)]) {
    assert_eq!(non_empty(text), owned(expected), "parsing {text:?}");
}

/// We read `text` as `ours`; the reference reads it as `theirs` (non-empty messages).
fn difference(text: &str, ours: &[(&str, &str)], theirs: &[(&str, &str)]) {
    assert_ne!(ours, theirs, "a difference case must differ");
    assert_eq!(non_empty(text), owned(ours), "parsing {text:?}");
}

fn m(role: &str, content: &str) -> ChatMessage {
    ChatMessage::new(role, content)
}

// ---- Headers --------------------------------------------------------------------------------

#[test]
fn block_and_inline_headers() {
    // An inline header is a message of its own and does not change the block role.
    reference(
        "system:\nBe brief.\n\nuser: hi\nmore\nassistant:\n\nok\n",
        &[
            ("system", "Be brief."),
            ("user", "hi"),
            ("system", "more"),
            ("assistant", "ok"),
        ],
    );
}

#[test]
fn only_lowercase_names_at_column_zero_are_headers() {
    // `/^([a-z0-9_]+):(.*)$/` on the raw line.
    reference(
        "user:\nUser: a\n user: b\nuser : c\nhttp://x\nrole-x: y\n9a_b: z",
        &[
            ("user", "User: a\n user: b\nuser : c"),
            ("http", "//x"),
            ("user", "role-x: y"),
            ("9a_b", "z"),
        ],
    );
}

#[test]
fn inline_values_are_stripped_and_blank_ones_make_a_block_header() {
    reference(
        "option:   temperature 0.5  \r\nsystem: \t\r\nrules",
        &[("option", "temperature 0.5"), ("system", "rules")],
    );
}

#[test]
fn previous_response_id_and_agent_reset_the_role_other_inline_headers_do_not() {
    reference(
        "assistant:\na\nprevious_response_id: r1\nb\nassistant:\nc\nagent: Baking\nd\nsystem:\ne\nmodel: m\nf",
        &[
            ("assistant", "a"),
            ("previous_response_id", "r1"),
            ("user", "b"),
            ("assistant", "c"),
            ("agent", "Baking"),
            ("user", "d"),
            ("system", "e"),
            ("model", "m"),
            ("system", "f"),
        ],
    );
    // The reference's own test.
    reference(
        "previous_response_id:abc123\nSome block\nassistant: Got it\n",
        &[
            ("previous_response_id", "abc123"),
            ("user", "Some block"),
            ("assistant", "Got it"),
        ],
    );
}

#[test]
fn escaped_headers_lose_their_backslash() {
    // `/^\\([a-z0-9_]+):(.*)$/`: only a backslash directly before a header shape.
    reference(
        "user:\n\\assistant: literal\n\\http://x\n\\Nope: kept\n\\ user: kept\n",
        &[(
            "user",
            "assistant: literal\nhttp://x\n\\Nope: kept\n\\ user: kept",
        )],
    );
}

#[test]
fn text_before_the_first_header_is_user() {
    reference(
        "hello\n\nsystem:\nrules",
        &[("user", "hello"), ("system", "rules")],
    );
    reference("just text\nno header", &[("user", "just text\nno header")]);
}

// ---- Content and whitespace -----------------------------------------------------------------

#[test]
fn content_is_stripped_once_as_a_whole() {
    // Leading and trailing blank lines go, and the first line's indentation with them; inner
    // blank lines, inner indentation and inner trailing spaces stay.
    reference(
        "user:\n\n\n  indented first\n\ninner  \n\n  last  \n\n\n",
        &[("user", "indented first\n\ninner  \n\n  last")],
    );
    // Ruby's `strip` takes ASCII whitespace and NUL, not Unicode spaces.
    reference("user:\n\0\u{a0}x\u{a0}\t\0\n", &[("user", "\u{a0}x\u{a0}")]);
}

#[test]
fn crlf_files() {
    // Lines split on "\n" only: a "\r" stays in inner lines, headers still work.
    reference(
        "system:\r\nBe brief.\r\n\r\nuser: hi\r\nassistant:\r\na\r\nb\r\n",
        &[
            ("system", "Be brief."),
            ("user", "hi"),
            ("assistant", "a\r\nb"),
        ],
    );
    reference(
        "user:\r\n```\r\nx: y\r\n```\r\nshell:-- ls {{{\r\nout\r\nshell:-- ls }}}\r\n",
        &[(
            "user",
            // The substitutions eat the "\r" of the marker lines.
            "```\r\nx: y\r\n```\r\n<cmd_output cmd=\"ls\">\nout\r\n</cmd_output>",
        )],
    );
}

// ---- Fences ---------------------------------------------------------------------------------

#[test]
fn fences_protect_headers_and_blank_lines() {
    reference(
        "user:\n```ruby\nassistant: no\n\n```\nafter\nassistant: yes",
        &[
            ("user", "```ruby\nassistant: no\n\n```\nafter"),
            ("assistant", "yes"),
        ],
    );
    // Any stripped line starting with three backticks; tildes are text.
    reference(
        "user:\n  ````md\nx: y\n ```\n~~~\na: b",
        &[("user", "````md\nx: y\n ```\n~~~"), ("a", "b")],
    );
}

#[test]
fn an_unclosed_fence_runs_to_the_end() {
    reference(
        "user:\nq\n```\nassistant: swallowed\n\nsystem:\n",
        &[("user", "q\n```\nassistant: swallowed\n\nsystem:")],
    );
}

// ---- [[ ]] blocks ---------------------------------------------------------------------------

#[test]
fn square_blocks_drop_their_markers() {
    reference(
        "assistant:\nStart\n[[This: has colon\nand lines]]\nEnd",
        &[("assistant", "Start\nThis: has colon\nand lines\nEnd")],
    );
    // A marker alone leaves nothing; only the first `]]` goes; a `]]` outside is text.
    reference(
        "user:\n[[\nx: y\na]]b]]\n]]\nz: w",
        &[("user", "x: y\nab]]\n]]"), ("z", "w")],
    );
    // On the opening line rule 3 wins, so `[[x]]` opens a block that stays open.
    reference(
        "user:\n[[x]]\ny: z\n]]\nw: v",
        &[("user", "x]]\ny: z"), ("w", "v")],
    );
    // A `]]` that is not at the end of the stripped line does not close.
    reference(
        "user:\n[[a\nb]] c\nd: e\n]] \r\nf: g",
        &[("user", "a\nb]] c\nd: e"), ("f", "g")],
    );
    // Unclosed: to the end.
    reference("user:\n[[a\nb: c", &[("user", "a\nb: c")]);
}

// ---- Command output -------------------------------------------------------------------------

#[test]
fn command_output_shorthand() {
    // The reference's own test.
    reference(
        "assistant:\nBefore\nshell:-- ls {{{\nfile1\nshell:-- ls }}}\nAfter\n",
        &[(
            "assistant",
            "Before\n<cmd_output cmd=\"ls\">\nfile1\n</cmd_output>\nAfter",
        )],
    );
    // `^[^\s]*:-- (.*) {{{.*`: any first word, the command up to the LAST ` {{{`, anything
    // after it; `^.*:--.* }}}` closes.
    reference(
        "user:\n./run.sh:-- make {{{ all {{{ # note\nx: y\nrun:-- make }}} done\nz: w",
        &[
            (
                "user",
                "<cmd_output cmd=\"make {{{ all\">\nx: y\n</cmd_output>",
            ),
            ("z", "w"),
        ],
    );
    // Indented opener: the block opens but the substitution (anchored on the raw line) does
    // not apply, so the line stays as written.
    reference(
        "user:\nq\n  shell:-- ls {{{\na: b\nshell:-- ls }}}",
        &[("user", "q\n  shell:-- ls {{{\na: b\n</cmd_output>")],
    );
    // `:-- }}}` closes the block, but the substitution needs `:-- ` then ` }}}`.
    reference(
        "user:\nsh:-- ls {{{\nout\nsh:-- }}}\na: b",
        &[
            ("user", "<cmd_output cmd=\"ls\">\nout\nsh:-- }}}"),
            ("a", "b"),
        ],
    );
    // `]]` also closes it.
    reference(
        "user:\nsh:-- make {{{\nout]]\na: b",
        &[("user", "<cmd_output cmd=\"make\">\nout"), ("a", "b")],
    );
    // Not openers: a tab after `:--`, a space in the first word.
    reference(
        "user:\nq\nx:--\tls {{{\n$ sh:-- ls {{{\ny: z",
        &[
            ("user", "q"),
            ("x", "--\tls {{{"),
            ("user", "$ sh:-- ls {{{"),
            ("y", "z"),
        ],
    );
    // A closer outside a `[[` block is just a line (here a header).
    reference(
        "user:\nq\nshell:-- ls }}}",
        &[("user", "q"), ("shell", "-- ls }}}")],
    );
}

#[test]
fn command_output_openers_take_over_fences_and_xml_blocks() {
    // The notes fix `[[` taking over a block, not this: the opener turns the fence into a
    // square block, which `]]` closes.
    reference(
        "user:\n```\nsh:-- ls {{{\na: b\n]]\nc: d",
        &[("user", "```\n<cmd_output cmd=\"ls\">\na: b"), ("c", "d")],
    );
    // A fence line does not close it: the reference drops the line, we keep it.
    difference(
        "user:\n```\nsh:-- ls {{{\nout\n```\na: b\n]]\nc: d",
        &[
            ("user", "```\n<cmd_output cmd=\"ls\">\nout\n```\na: b"),
            ("c", "d"),
        ],
        &[
            ("user", "```\n<cmd_output cmd=\"ls\">\nout\na: b"),
            ("c", "d"),
        ],
    );
    reference(
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

#[test]
fn the_xml_tag_stack_outlives_a_block_taken_over() {
    // `<a>` stays on the stack after the command output took its block over, so the later
    // `<b>` block only ends at `</a>`.
    reference(
        "user:\n<a>\nsh:-- ls {{{\nx\nsh:-- ls }}}\n<b>\nq: r\n</b>\ns: t\n</a>\nu: v",
        &[
            (
                "user",
                "<a>\n<cmd_output cmd=\"ls\">\nx\n</cmd_output>\n<b>\nq: r\n</b>\ns: t\n</a>",
            ),
            ("u", "v"),
        ],
    );
}

// ---- XML blocks -----------------------------------------------------------------------------

#[test]
fn xml_blocks() {
    reference(
        "assistant:\nBefore xml\n<note>\nThis: is protected\n</note>\nAfter",
        &[(
            "assistant",
            "Before xml\n<note>\nThis: is protected\n</note>\nAfter",
        )],
    );
    reference(
        "user:\n  <file name=\"a.rs\">\nuser: no\n\n</file>\nsystem: yes",
        &[
            ("user", "<file name=\"a.rs\">\nuser: no\n\n</file>"),
            ("system", "yes"),
        ],
    );
    // Only the first closing tag of a line counts; a nested same-name tag is not pushed.
    reference(
        "user:\n<a>\n</b></a>\nx: y\n</a>\nz: w",
        &[("user", "<a>\n</b></a>\nx: y\n</a>"), ("z", "w")],
    );
    reference(
        "user:\n<a>\n<a>\n</a>\nx: y\n</a>",
        &[("user", "<a>\n<a>\n</a>"), ("x", "y"), ("user", "</a>")],
    );
    // Not openers: `<br/>`, `< a>`; `<a >` is one.
    reference(
        "user:\n<br/>\n< a>\nx: y\n<a >\nz: w\n</a>",
        &[
            ("user", "<br/>\n< a>"),
            ("x", "y"),
            ("user", "<a >\nz: w\n</a>"),
        ],
    );
    // An opener without a closing tag anywhere is text.
    reference("user:\n<t>\nx: y", &[("user", "<t>"), ("x", "y")]);
}

// ---- Deliberate differences -----------------------------------------------------------------

#[test]
fn differences_in_blocks_the_notes_fix() {
    // A fence line inside a `[[` block: we keep it, the reference drops it.
    difference(
        "user:\n[[a\n```\nb: c\nd]]\ne: f",
        &[("user", "a\n```\nb: c\nd"), ("e", "f")],
        &[("user", "a\nb: c\nd"), ("e", "f")],
    );
    // `[[` inside a fence: content for us; the reference turns the fence into a square block
    // (and then drops the closing fence line).
    difference(
        "user:\n```\n[[a\n```\nb: c",
        &[("user", "```\n[[a\n```"), ("b", "c")],
        &[("user", "```\na\nb: c")],
    );
    // `[[` inside an XML block likewise.
    difference(
        "user:\n<t>\n[[a\n</t>\nb: c",
        &[("user", "<t>\n[[a\n</t>"), ("b", "c")],
        &[("user", "<t>\na\n</t>\nb: c")],
    );
    // A closing tag on the opening line: the reference opens a block that never closes.
    difference(
        "user:\n<b>x</b>\nassistant: ok",
        &[("user", "<b>x</b>"), ("assistant", "ok")],
        &[("user", "<b>x</b>\nassistant: ok")],
    );
    // A closing tag only before the opener: the reference opens a block anyway.
    difference(
        "user:\n</b>\n<b>\nassistant: ok",
        &[("user", "</b>\n<b>"), ("assistant", "ok")],
        &[("user", "</b>\n<b>\nassistant: ok")],
    );
}

#[test]
fn difference_in_doubled_escapes() {
    // The notes' serializer escapes an already-escaped line again, which needs `\\role:` to
    // read as `\role:`; the reference unescapes a single backslash only.
    difference(
        "user:\n\\\\user: x",
        &[("user", "\\user: x")],
        &[("user", "\\\\user: x")],
    );
}

#[test]
fn differences_in_empty_messages() {
    // The reference returns `{user, ""}` when the first header starts the file.
    assert_eq!(
        parse_messages("system:\nx"),
        vec![m("system", "x")],
        "we return no leading empty message (the print law needs that)"
    );
    // An empty header block is a message for us (notes: "empty messages may be produced by
    // the parser"; clear comes before clean), so a bare `clear:` clears. The reference drops
    // empty header blocks in the parser, so there a bare `clear:` does nothing and only an
    // inline `clear: ...` clears.
    assert_eq!(
        parse_messages("user:\nq\nclear:\n\nuser:\nr"),
        vec![m("user", "q"), m("clear", ""), m("user", "r")]
    );
    reference(
        "user:\nq\nclear: true\nuser:\nr",
        &[("user", "q"), ("clear", "true"), ("user", "r")],
    );
}

// ---- The printer ----------------------------------------------------------------------------

/// Prints, checks the text, and checks that it reads back the same here. The comments at each
/// call say why the reference reads the same text the same way.
fn printed(messages: &[ChatMessage], text: &str) {
    let out = print(messages).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(out, text);
    assert_eq!(parse_messages(&out), messages);
}

#[test]
fn the_printer_chooses_the_inline_form_for_one_line_option_like_roles() {
    // The reference writes `role: value` for option, previous_response_id, function_call,
    // function_call_output and meta (even over several lines, which it cannot read back);
    // we write more roles inline, only for one-line values, and both read `role: value` as
    // that message.
    printed(
        &[
            m("model", "gpt-5-nano"),
            m("option", "temperature 0.5"),
            m("system", "Be brief."),
            m("previous_response_id", "r1"),
            m("user", "q"),
            m("meta", "two\nlines"),
            m("clear", ""),
        ],
        "model: gpt-5-nano\n\noption: temperature 0.5\n\nsystem:\n\nBe brief.\n\nprevious_response_id: r1\n\nuser:\n\nq\n\nmeta:\n\ntwo\nlines\n\nclear:\n",
    );
}

#[test]
fn the_printer_escapes_what_the_reference_would_misread() {
    // Header shapes get one backslash, which both unescape. The reference only escapes
    // `^[a-z]+:\s` lines, so it misreads `role_x: y`, `http://u` and a final `end:`.
    printed(
        &[m(
            "user",
            "user: x\nrole_x: y\nhttp://u\n\\assistant: y\nend:",
        )],
        "user:\n\n\\user: x\n\\role_x: y\n\\http://u\n[[\\assistant: y\n]]\n\\end:\n",
    );
    // Every opener the content does not close cleanly is wrapped in `[[` ... `]]`, which both
    // read as the line alone: fences and XML blocks holding a `[[` line or a command-output
    // opener (both take a block over in the reference), and openers themselves.
    printed(
        &[m("user", "```\n[[x\n```\n<t>\nsh:-- ls {{{\n</t>")],
        "user:\n\n[[```\n]]\n[[[[x\n]]\n[[```\n]]\n[[<t>\n]]\n[[sh:-- ls {{{\n]]\n</t>\n",
    );
    // A clean fence or XML block is written as it is.
    printed(
        &[m(
            "user",
            "```\nuser: in\n```\n<file name=\"a\">\nx: y\n</file>",
        )],
        "user:\n\n```\nuser: in\n```\n<file name=\"a\">\nx: y\n</file>\n",
    );
    // A fence line inside an XML block is dropped by the reference: the block is wrapped.
    printed(
        &[m("user", "<t>\n```\n</t>\n```")],
        "user:\n\n[[<t>\n]]\n```\n</t>\n```\n",
    );
}
