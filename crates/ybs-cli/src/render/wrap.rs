//! Wrapping ybs's own lines (the banner, questions, notices, errors, the usage line) at word
//! boundaries to the terminal's width, so that nothing breaks in the middle of a word. A pipe
//! gets every line whole: scripts read lines, not screens.
//!
//! Wrapping changes only where lines break: text from outside (file names, model output,
//! errors of servers) must be made inert before it is wrapped, as everywhere else.

/// The width ybs's lines wrap to on the terminal it writes to (stdout's when it is one, else
/// stderr's): one column less than the terminal's, so that no line fills the last column,
/// where terminals differ on where the cursor goes next. `None` when neither is a terminal.
pub fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size()
        .or_else(|| terminal_size::terminal_size_of(std::io::stderr()))
        .map(|(terminal_size::Width(columns), _)| usize::from(columns).saturating_sub(1))
        .filter(|columns| *columns > 0)
}

/// `text` with each line longer than `width` columns broken at spaces; a continued line
/// keeps the indentation of the line it continues (or goes under the second column of a
/// table row), and a line's trailing spaces (the space after a question) stay at its end. A word longer than the whole width is the one thing
/// broken inside. `None`: `text` as it is.
pub fn wrap(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| wrap_line(line, width))
        .collect();
    lines.join("\n")
}

/// [`wrap`] to [`terminal_width`].
pub fn to_terminal(text: &str) -> String {
    wrap(text, terminal_width())
}

/// `ybs: KIND: MESSAGE` (kind `error` or `warning`) with the message made inert and the
/// line wrapped to the terminal, as ybs reports a problem on stderr.
pub fn problem(kind: &str, message: &str) -> String {
    to_terminal(&format!("ybs: {kind}: {}", super::inert_lines(message)))
}

/// `text` wrapped to `width` with every line after the first indented by `indent` columns:
/// for the second column of a table, whose continued lines stay under their column.
pub fn hanging(text: &str, width: Option<usize>, indent: usize) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let pad = " ".repeat(indent);
    let options = textwrap::Options::new(width.max(indent + 1))
        .subsequent_indent(&pad)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options).join("\n")
}

fn wrap_line(line: &str, width: usize) -> String {
    if textwrap::core::display_width(line) <= width {
        return line.to_owned();
    }
    let body = line.trim_end();
    let trailing = &line[body.len()..];
    // A continued line goes under the second cell of a table row (text after a gap of two
    // spaces or more), else under the start of the line.
    let leading = body.len() - body.trim_start().len();
    let second_cell = body[leading..]
        .find("  ")
        .map(|gap| leading + gap)
        .map(|gap| gap + body[gap..].len() - body[gap..].trim_start().len())
        .filter(|cell| *cell < body.len());
    let hang = second_cell.map_or(leading, |cell| textwrap::core::display_width(&body[..cell]));
    // An indent as wide as the terminal would leave no room for words.
    let hang = if hang * 2 > width { 0 } else { hang };
    let indent = " ".repeat(hang);
    let options = textwrap::Options::new(width)
        .subsequent_indent(&indent)
        // `full-auto`, `--no-sandbox`, `src/my-file.rs`: a hyphen does not end a word here.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut wrapped = textwrap::wrap(body, options).join("\n");
    wrapped.push_str(trailing);
    wrapped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(text: &str) -> usize {
        text.split('\n')
            .map(textwrap::core::display_width)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn long_lines_break_between_words_only() {
        let text = "ybs 0.1.0 (ollama qwen3:14b, context 32k, output 8,000, sandbox on, \
                    network ask). /help for commands, Ctrl-D to exit.";
        let wrapped = wrap(text, Some(80));
        assert!(widest(&wrapped) <= 80, "{wrapped}");
        assert_eq!(wrapped.replace('\n', " "), text);
        for line in wrapped.lines() {
            assert!(!line.ends_with(' ') && !line.starts_with(' '), "{line:?}");
        }
    }

    #[test]
    fn short_lines_newlines_and_no_width_are_kept() {
        assert_eq!(wrap("a b\n\nc", Some(80)), "a b\n\nc");
        let long = "word ".repeat(40);
        assert_eq!(wrap(&long, None), long);
    }

    #[test]
    fn a_question_keeps_its_trailing_space_and_hyphenated_words() {
        let question = format!(
            "{} full-auto? [y]es / [n]o: ",
            "run this command ".repeat(5)
        );
        let wrapped = wrap(&question, Some(40));
        assert!(wrapped.ends_with("[n]o: "), "{wrapped:?}");
        assert!(wrapped.contains("full-auto"), "{wrapped:?}");
        assert!(widest(wrapped.trim_end()) <= 40, "{wrapped}");
    }

    #[test]
    fn continued_lines_keep_the_indent_and_tables_hang() {
        let wrapped = wrap(&format!("  {}", "item ".repeat(20)), Some(30));
        assert!(
            wrapped.lines().all(|line| line.starts_with("  item")),
            "{wrapped}"
        );
        let row = wrap(
            &format!("  read_file   {}", "reads it ".repeat(8)),
            Some(40),
        );
        assert!(
            row.lines()
                .skip(1)
                .all(|line| line.starts_with("              reads")),
            "{row}"
        );
        let table = hanging(&format!("/x   {}", "does things ".repeat(10)), Some(40), 5);
        assert!(
            table
                .lines()
                .skip(1)
                .all(|line| line.starts_with("     does")),
            "{table}"
        );
        assert!(widest(&table) <= 40, "{table}");
    }
}
