//! The terminal display. At its centre the streaming display, as a pure component: fed text
//! and reasoning deltas, tool calls, results and usage, it returns whole lines ready to print
//! (without newlines). It does no I/O and reads no environment, so the REPL, `exec` and tests
//! drive it alike. Beside it: code highlighting ([`highlight`]), and the preview of a change
//! before it is approved and the diffs of a turn ([`diff_view`]).
//!
//! Markdown is styled line by line: headings and `**bold**` in bold, `` `code` `` and fenced
//! code set apart in colour with the fences dimmed. Without colour the text is left exactly as
//! the model wrote it. Reasoning lines carry a `┊ ` gutter and are dimmed (or hidden).
//!
//! Lines ybs writes itself (banner, questions, errors) wrap at word boundaries to the
//! terminal's width ([`wrap`]).
//!
//! The one part that writes itself is [`spinner`], the animated mark shown on a terminal
//! while the model has not answered yet.

pub mod diff_view;
pub mod highlight;

mod inline;
mod line_ui;
mod markdown;
pub mod notify;
mod numbers;
pub mod spinner;
mod stream;
pub mod style;
mod tool;
pub mod tool_summary;
pub mod undo_view;
pub mod wrap;

pub use line_ui::{KeyReader, LineUi};
pub use numbers::thousands;
pub use stream::{RenderOptions, Renderer, context_fill};
pub use style::use_color;
pub use ybs_agent::inert::{inert, inert_lines};
