//! The styles of the display, and whether to use them.

use anstyle::{AnsiColor, Style};

/// Whether to colour output: only when the configuration allows it (`ui.color`, which
/// `NO_COLOR` turns off while loading) and output is a terminal (the caller checks, for
/// instance with `std::io::IsTerminal`).
pub fn use_color(config_color: bool, output_is_terminal: bool) -> bool {
    config_color && output_is_terminal
}

/// One kind of styled text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A top-level heading.
    Heading1,
    /// Other headings.
    Heading,
    /// `**strong**` text.
    Bold,
    /// `` `inline code` ``.
    InlineCode,
    /// Lines inside a code fence.
    Code,
    /// The fence lines themselves.
    Fence,
    /// Model reasoning.
    Reasoning,
    /// A tool's name in a call.
    ToolName,
    /// Secondary detail: arrows, folded-argument notes, usage.
    Dim,
    /// A tool that succeeded.
    Success,
    /// A tool or request that failed.
    Failure,
    /// A warning to the user.
    Warning,
}

impl Role {
    fn style(self) -> Style {
        let fg = |color: AnsiColor| Style::new().fg_color(Some(color.into()));
        match self {
            Role::Heading1 => Style::new().bold().underline(),
            Role::Heading | Role::Bold => Style::new().bold(),
            Role::InlineCode => fg(AnsiColor::Cyan),
            Role::Code => fg(AnsiColor::Green),
            Role::Fence | Role::Dim => Style::new().dimmed(),
            Role::Reasoning => Style::new().dimmed().italic(),
            Role::ToolName => fg(AnsiColor::Magenta).bold(),
            Role::Success => fg(AnsiColor::Green),
            Role::Failure => fg(AnsiColor::Red),
            Role::Warning => fg(AnsiColor::Yellow),
        }
    }
}

/// Paints text in a role's style, or returns it unchanged without colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Painter {
    /// Whether to emit ANSI escapes.
    pub color: bool,
}

impl Painter {
    /// `text` in `role`'s style.
    pub fn paint(self, role: Role, text: &str) -> String {
        if !self.color || text.is_empty() {
            return text.to_owned();
        }
        let style = role.style();
        format!("{style}{text}{style:#}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_needs_both_the_setting_and_a_terminal() {
        assert!(use_color(true, true));
        assert!(!use_color(false, true));
        assert!(!use_color(true, false));
    }

    #[test]
    fn painting_wraps_in_escapes_only_with_colour() {
        assert_eq!(Painter { color: false }.paint(Role::Bold, "x"), "x");
        assert_eq!(
            Painter { color: true }.paint(Role::Bold, "x"),
            "\x1b[1mx\x1b[0m"
        );
        assert_eq!(Painter { color: true }.paint(Role::Bold, ""), "");
    }
}
