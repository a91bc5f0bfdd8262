//! The renderer: deltas in, whole styled lines out.

use ybs_core::{StreamEvent, ToolCall, ToolResult, Usage};

use super::markdown::MarkdownLines;
use super::numbers::{money, thousands};
use super::style::{Painter, Role};
use super::tool::call_lines;
use super::tool_summary::{self, Change, Known, Summary};
use ybs_agent::Notice;
use ybs_agent::config::UiConfig;

/// The gutter in front of reasoning lines.
const REASONING_GUTTER: &str = "┊ ";

/// The most calls remembered while their result has not come.
const MAX_PENDING_CALLS: usize = 64;

/// What to show and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Emit ANSI styles (see [`use_color`](super::use_color)).
    pub color: bool,
    /// Show reasoning (dimmed); hidden otherwise.
    pub show_reasoning: bool,
    /// Show tool calls and results.
    pub show_tool_calls: bool,
    /// Show token usage and cost.
    pub show_token_usage: bool,
}

impl RenderOptions {
    /// The options of a `ui` configuration, with colour decided by the caller.
    pub fn from_ui(ui: &UiConfig, color: bool) -> Self {
        RenderOptions {
            color,
            show_reasoning: ui.show_reasoning,
            show_tool_calls: ui.show_tool_calls,
            show_token_usage: ui.show_token_usage,
        }
    }
}

/// Which stream the partial line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Text,
    Reasoning,
}

/// Turns a reply's pieces into display lines. Text is held until its line is complete, so
/// styling always sees whole lines; [`finish`](Renderer::finish) releases the rest.
#[derive(Debug, Clone)]
pub struct Renderer {
    options: RenderOptions,
    painter: Painter,
    partial: String,
    channel: Channel,
    markdown: MarkdownLines,
    /// The calls shown whose result has not come yet, by id, with their previewed change.
    pending: Vec<(ToolCall, Option<Change>)>,
    /// The tools whose calls are shown: the agent's, once known; the built-ins before.
    tools: Tools,
    /// The terminal's columns, to which ybs's own lines (notices, usage) wrap; `None`: whole.
    width: Option<usize>,
}

/// The tools a renderer shows calls of; each result is summarized as its tool declares.
#[derive(Clone, Default)]
struct Tools(ybs_tools::ToolRegistry);

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.names()).finish()
    }
}

impl Renderer {
    /// A renderer with `options`.
    pub fn new(options: RenderOptions) -> Self {
        Renderer {
            options,
            painter: Painter {
                color: options.color,
            },
            partial: String::new(),
            channel: Channel::Text,
            markdown: MarkdownLines::default(),
            pending: Vec::new(),
            tools: Tools::default(),
            width: None,
        }
    }

    /// Wraps ybs's own lines (notices, the usage line, questions) to `width` columns.
    pub fn with_width(mut self, width: Option<usize>) -> Self {
        self.width = width;
        self
    }

    /// The width ybs's own lines wrap to.
    pub fn width(&self) -> Option<usize> {
        self.width
    }

    /// Shows the calls of `tools` (the agent's registry) as their tools declare.
    pub fn with_tools(mut self, tools: ybs_tools::ToolRegistry) -> Self {
        self.tools = Tools(tools);
        self
    }

    /// How it paints.
    pub fn painter(&self) -> Painter {
        self.painter
    }

    /// The options in use.
    pub fn options(&self) -> RenderOptions {
        self.options
    }

    /// More reply text; returns the lines it completed.
    pub fn text(&mut self, delta: &str) -> Vec<String> {
        self.push(Channel::Text, delta)
    }

    /// More reasoning text; returns the lines it completed (none when reasoning is hidden).
    pub fn reasoning(&mut self, delta: &str) -> Vec<String> {
        if !self.options.show_reasoning {
            return Vec::new();
        }
        self.push(Channel::Reasoning, delta)
    }

    /// A provider's stream event: text and reasoning are rendered, a starting tool call or the
    /// end of the reply releases the partial line, the rest is for the accumulator.
    pub fn event(&mut self, event: &StreamEvent) -> Vec<String> {
        match event {
            StreamEvent::TextDelta { text } => self.text(text),
            StreamEvent::ThinkingDelta { text, .. } => self.reasoning(text),
            StreamEvent::ToolCallStart { .. } => self.flush_partial(),
            StreamEvent::Done { .. } => self.finish(),
            StreamEvent::RedactedThinking { .. }
            | StreamEvent::ReasoningDetail { .. }
            | StreamEvent::ResponseId { .. }
            | StreamEvent::ToolCallDelta { .. }
            | StreamEvent::ToolCallEnd { .. }
            | StreamEvent::Usage(_) => Vec::new(),
        }
    }

    /// The end of a reply: the partial line, and a fresh markdown state for the next one.
    pub fn finish(&mut self) -> Vec<String> {
        let lines = self.flush_partial();
        self.markdown.reset();
        self.channel = Channel::Text;
        lines
    }

    /// A complete tool call, about to run (or be confirmed).
    pub fn tool_call(&mut self, call: &ToolCall) -> Vec<String> {
        let mut lines = self.flush_partial();
        if self.options.show_tool_calls {
            lines.extend(call_lines(call, self.painter));
        }
        // A call that gets no result (a dry run) is not kept for ever.
        if self.pending.len() >= MAX_PENDING_CALLS {
            self.pending.remove(0);
        }
        self.pending.push((call.clone(), None));
        lines
    }

    /// What the newest call will change, from its preview: the counts of its result line.
    pub fn preview(&mut self, preview: &super::diff_view::Preview) {
        if let (Some((_, change)), super::diff_view::Preview::File { before, after, .. }) =
            (self.pending.last_mut(), preview)
        {
            let (added, removed) = super::diff_view::counts(before.as_deref().unwrap_or(""), after);
            *change = Some(Change {
                added,
                removed,
                created: before.is_none(),
            });
        }
    }

    /// A tool's result as a person wants to see it ([`tool_summary`]), with what its call
    /// said; the call is forgotten.
    pub fn result_summary(&mut self, tool_name: &str, result: &ToolResult) -> Summary {
        let index = (self.pending.iter()).position(|(call, _)| call.id == result.call_id);
        let pending = index.map(|index| self.pending.remove(index));
        let known = Known {
            tool: self.tools.0.tool(tool_name),
            arguments: pending.as_ref().map(|(call, _)| &call.arguments),
            change: pending.as_ref().and_then(|(_, change)| *change),
        };
        tool_summary::summarize(tool_name, result, known)
    }

    /// A tool's result, summarized.
    pub fn tool_result(&mut self, tool_name: &str, result: &ToolResult) -> Vec<String> {
        let mut lines = self.flush_partial();
        let summary = self.result_summary(tool_name, result);
        if self.options.show_tool_calls {
            lines.extend(tool_summary::lines(&summary, self.painter));
        }
        lines
    }

    /// Tokens and cost of the turn and of the session so far, and how full the window was
    /// at the newest request (`ctx 41% of 200k`).
    pub fn usage(
        &mut self,
        turn: &Usage,
        session: &Usage,
        fill: Option<(u64, u64)>,
    ) -> Vec<String> {
        let mut lines = self.flush_partial();
        if self.options.show_token_usage {
            let mut text = format!(
                "tokens: {} | session: {}",
                usage_text(turn),
                usage_text(session)
            );
            if let Some((used, window)) = fill.filter(|(_, window)| *window > 0) {
                text.push_str(&format!(" | {}", context_fill(used, window)));
            }
            let text = super::wrap::wrap(&text, self.width);
            lines.push(self.painter.paint(Role::Dim, &text));
        }
        lines
    }

    /// A message from ybs.
    pub fn notice(&mut self, kind: Notice, message: &str) -> Vec<String> {
        let mut lines = self.flush_partial();
        let message = &*super::inert_lines(message);
        let (role, text) = match kind {
            Notice::Info => (Role::Dim, message.to_owned()),
            Notice::Warning => (Role::Warning, format!("warning: {message}")),
            Notice::Error => (Role::Failure, format!("error: {message}")),
        };
        let text = super::wrap::wrap(&text, self.width);
        lines.push(self.painter.paint(role, &text));
        lines
    }

    fn push(&mut self, channel: Channel, delta: &str) -> Vec<String> {
        let mut lines = Vec::new();
        if channel != self.channel {
            lines.extend(self.flush_partial());
            self.channel = channel;
        }
        self.partial.push_str(delta);
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            lines.push(self.style(&line[..end]));
        }
        lines
    }

    fn flush_partial(&mut self) -> Vec<String> {
        if self.partial.is_empty() {
            return Vec::new();
        }
        let line = std::mem::take(&mut self.partial);
        vec![self.style(&line)]
    }

    fn style(&mut self, line: &str) -> String {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // The model's bytes never reach the terminal as controls.
        let line = &*super::inert(line);
        match self.channel {
            Channel::Text => self.markdown.style(line, self.painter),
            Channel::Reasoning => self
                .painter
                .paint(Role::Reasoning, &format!("{REASONING_GUTTER}{line}")),
        }
    }
}

/// `ctx 41% of 200k`: how full the model's window was.
pub fn context_fill(used: u64, window: u64) -> String {
    let percent = (used as f64 * 100.0 / window as f64).round() as u64;
    format!(
        "ctx {percent}% of {}",
        ybs_agent::limits::tokens_short(window)
    )
}

/// `1,234 in (1,000 cached, 200 written) · 56 out (12 reasoning) · $0.0012, saved $0.0090 by
/// caching`.
fn usage_text(usage: &Usage) -> String {
    let mut text = format!("{} in", thousands(usage.prompt_tokens));
    match (usage.cached_tokens, usage.cache_write_tokens) {
        (0, 0) => {}
        (read, 0) => text.push_str(&format!(" ({} cached)", thousands(read))),
        (0, written) => text.push_str(&format!(" ({} written to cache)", thousands(written))),
        (read, written) => text.push_str(&format!(
            " ({} cached, {} written)",
            thousands(read),
            thousands(written)
        )),
    }
    text.push_str(&format!(" · {} out", thousands(usage.completion_tokens)));
    if usage.reasoning_tokens > 0 {
        text.push_str(&format!(
            " ({} reasoning)",
            thousands(usage.reasoning_tokens)
        ));
    }
    if let Some(cost) = usage.cost {
        text.push_str(&format!(" · {}", money(cost)));
        if let Some(saved) = usage.cache_savings.filter(|saved| *saved > 0.0) {
            text.push_str(&format!(", saved {} by caching", money(saved)));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Renderer {
        Renderer::new(RenderOptions {
            color: false,
            show_reasoning: true,
            show_tool_calls: true,
            show_token_usage: true,
        })
    }

    #[test]
    fn only_whole_lines_come_out_until_finish() {
        let mut renderer = plain();
        assert!(renderer.text("Hel").is_empty());
        assert_eq!(renderer.text("lo\nwor"), ["Hello"]);
        assert_eq!(renderer.text("ld\r\n\nx"), ["world", ""]);
        assert_eq!(renderer.finish(), ["x"]);
        assert!(renderer.finish().is_empty());
    }

    #[test]
    fn switching_from_reasoning_to_text_releases_the_reasoning_line() {
        let mut renderer = plain();
        assert_eq!(renderer.reasoning("think\nmore"), ["┊ think"]);
        assert_eq!(renderer.text("Answer"), ["┊ more"]);
        assert_eq!(renderer.finish(), ["Answer"]);
    }

    #[test]
    fn hidden_reasoning_and_tool_calls_and_usage_print_nothing() {
        let mut renderer = Renderer::new(RenderOptions {
            color: false,
            show_reasoning: false,
            show_tool_calls: false,
            show_token_usage: false,
        });
        assert!(renderer.reasoning("secret\n").is_empty());
        let call = ToolCall::new("c", "list_files", serde_json::json!({}));
        assert!(renderer.tool_call(&call).is_empty());
        assert!(
            renderer
                .usage(&Usage::default(), &Usage::default(), None)
                .is_empty()
        );
        assert_eq!(renderer.text("shown\n"), ["shown"]);
    }

    #[test]
    fn a_tool_call_releases_the_partial_text_first() {
        let mut renderer = plain();
        renderer.text("Let me look");
        let call = ToolCall::new("c", "list_files", serde_json::json!({"pattern": "*"}));
        assert_eq!(
            renderer.tool_call(&call),
            ["Let me look", r#"→ list_files {"pattern":"*"}"#]
        );
    }

    #[test]
    fn usage_shows_turn_and_session() {
        let turn = Usage {
            prompt_tokens: 1234,
            completion_tokens: 56,
            cached_tokens: 1000,
            reasoning_tokens: 12,
            total_tokens: 1290,
            cost: Some(0.0012),
            ..Usage::default()
        };
        let session = Usage {
            prompt_tokens: 5000,
            completion_tokens: 300,
            ..Usage::default()
        };
        assert_eq!(
            plain().usage(&turn, &session, Some((82_000, 200_000))),
            [
                "tokens: 1,234 in (1,000 cached) · 56 out (12 reasoning) · $0.0012 | session: 5,000 in · 300 out | ctx 41% of 200k"
            ]
        );
        let cached = Usage {
            prompt_tokens: 51_000,
            cached_tokens: 48_000,
            cache_write_tokens: 2_000,
            completion_tokens: 1_000,
            cost: Some(0.0399),
            cache_savings: Some(0.1281),
            ..Usage::default()
        };
        let written = Usage {
            prompt_tokens: 50_000,
            cache_write_tokens: 48_000,
            cost: Some(0.201),
            cache_savings: Some(-0.036),
            ..Usage::default()
        };
        assert_eq!(
            plain().usage(&cached, &written, None),
            [
                "tokens: 51,000 in (48,000 cached, 2,000 written) · 1,000 out · $0.0399, saved $0.1281 by caching | session: 50,000 in (48,000 written to cache) · 0 out · $0.2010"
            ]
        );
    }

    #[test]
    fn notices_are_labelled() {
        let mut renderer = plain();
        assert_eq!(
            renderer.notice(Notice::Warning, "stuck"),
            ["warning: stuck"]
        );
        assert_eq!(renderer.notice(Notice::Error, "down"), ["error: down"]);
        assert_eq!(renderer.notice(Notice::Info, "dry run"), ["dry run"]);
    }

    #[test]
    fn notices_wrap_between_words_and_stay_inert() {
        let mut renderer = plain().with_width(Some(30));
        let message = "the server at http://127.0.0.1:1 refused \u{1b}]0;owned\u{7} the request";
        let lines = renderer.notice(Notice::Error, message);
        let text = lines.join("\n");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(
            text.lines().all(|line| line.chars().count() <= 30),
            "{text}"
        );
        assert!(
            text.contains("\nrefused") || text.contains("refused\n"),
            "{text}"
        );
        assert!(text.starts_with("error: the server at\n"), "{text}");
    }
}
