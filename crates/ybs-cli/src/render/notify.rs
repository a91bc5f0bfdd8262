//! The notification when a long turn finishes or a confirmation waits: the terminal bell, or
//! OSC 9 (a desktop notification with a message) on the terminals known to show it. Off with
//! `ui.notify: false`; a turn counts as long from `ui.notify_after_seconds`.

use std::time::Duration;

/// How the terminal is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// BEL: every terminal (and tmux, which passes it on and marks the window).
    Bell,
    /// `ESC ] 9 ; message BEL`: iTerm2, WezTerm, Ghostty, Windows Terminal.
    Osc9,
}

/// When and how to notify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notifier {
    /// How.
    pub signal: Signal,
    /// A turn at least this long notifies when it ends.
    pub after: Duration,
}

impl Notifier {
    /// The notifier of the settings, for the terminal described by `TERM_PROGRAM`, whether
    /// ybs runs inside tmux or screen (`TMUX`, `STY`: they would swallow OSC 9) and whether it
    /// runs in Windows Terminal (`WT_SESSION`); `None` when off.
    pub fn new(
        on: bool,
        after_seconds: u64,
        term_program: Option<&str>,
        multiplexed: bool,
        windows_terminal: bool,
    ) -> Option<Notifier> {
        if !on {
            return None;
        }
        let osc9 = !multiplexed
            && (windows_terminal
                || matches!(term_program, Some("iTerm.app" | "WezTerm" | "ghostty")));
        Some(Notifier {
            signal: if osc9 { Signal::Osc9 } else { Signal::Bell },
            after: Duration::from_secs(after_seconds),
        })
    }

    /// The notifier for this process's terminal.
    pub fn for_this_terminal(on: bool, after_seconds: u64) -> Option<Notifier> {
        let var = |name: &str| std::env::var(name).ok();
        Notifier::new(
            on,
            after_seconds,
            var("TERM_PROGRAM").as_deref(),
            var("TMUX").is_some() || var("STY").is_some(),
            var("WT_SESSION").is_some(),
        )
    }

    /// What to write to the terminal to say `message` (ybs's own words, printable only).
    pub fn sequence(&self, message: &str) -> String {
        match self.signal {
            Signal::Bell => "\u{7}".to_owned(),
            Signal::Osc9 => {
                let printable: String = message.chars().filter(|c| !c.is_control()).collect();
                format!("\u{1b}]9;{printable}\u{7}")
            }
        }
    }

    /// Whether a turn that took `elapsed` notifies.
    pub fn long_enough(&self, elapsed: Duration) -> bool {
        elapsed >= self.after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc9_only_where_the_terminal_shows_it() {
        let signal = |program: Option<&str>, multiplexed: bool, wt: bool| {
            Notifier::new(true, 5, program, multiplexed, wt).map(|n| n.signal)
        };
        assert_eq!(signal(Some("iTerm.app"), false, false), Some(Signal::Osc9));
        assert_eq!(signal(Some("WezTerm"), false, false), Some(Signal::Osc9));
        assert_eq!(signal(None, false, true), Some(Signal::Osc9));
        assert_eq!(signal(Some("iTerm.app"), true, false), Some(Signal::Bell));
        assert_eq!(
            signal(Some("Apple_Terminal"), false, false),
            Some(Signal::Bell)
        );
        assert_eq!(signal(None, false, false), Some(Signal::Bell));
        assert_eq!(Notifier::new(false, 5, None, false, false), None);
    }

    #[test]
    fn the_sequences_carry_only_printable_text() {
        let bell = Notifier::new(true, 0, None, false, false).unwrap_or_else(|| unreachable!());
        assert_eq!(bell.sequence("done"), "\u{7}");
        assert!(bell.long_enough(Duration::ZERO));
        let osc =
            Notifier::new(true, 5, Some("WezTerm"), false, false).unwrap_or_else(|| unreachable!());
        assert_eq!(osc.sequence("ybs: done\u{1b}x"), "\u{1b}]9;ybs: donex\u{7}");
        assert!(!osc.long_enough(Duration::from_secs(4)));
        assert!(osc.long_enough(Duration::from_secs(5)));
    }
}
