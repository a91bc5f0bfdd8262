//! What a tool says about itself, so that the agent, its front ends and the confirmation
//! policy ask the tool instead of keeping lists of names: what a call changes, whether calls
//! may run at once, where the tool is offered (plan mode, sub-agents), which kind of action
//! an editor shows, its network use, what a permission rule names, when it asks the user,
//! and who runs it.
//!
//! [`Declaration::default`] is the conservative one a tool gets when it says nothing (an
//! external or MCP tool): it may change anything, runs alone, is offered neither in plan mode
//! nor to sub-agents, may use the network, and asks only when the configuration says so.

/// What a successful call changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing: it only looks.
    Nothing,
    /// The session's task list.
    TaskList,
    /// The one file named by the call's `path` argument (kept for undo, listed as changed).
    FileAtPath,
    /// Whatever the commands it runs do.
    Commands,
    /// Anything: the tool does not say.
    Unknown,
}

impl Effect {
    /// Whether a call may change anything outside the conversation.
    pub fn mutates(self) -> bool {
        self != Effect::Nothing
    }
}

/// The kind of action a call is, for an editor's icon and grouping (the kinds of the Agent
/// Client Protocol, without depending on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    /// Reads a file.
    Read,
    /// Changes a file.
    Edit,
    /// Removes a file.
    Delete,
    /// Lists or searches files.
    Search,
    /// Runs a command.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// Whether a call may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkUse {
    /// Never.
    Never,
    /// Only when the call asks for it with `"network": true` (and a `reason`).
    WhenAsked,
    /// Every call may.
    Always,
}

/// What a permission rule's pattern (`tool(pattern)`) matches in a call, and what "always"
/// offers to allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSubject {
    /// The `path` argument.
    Path,
    /// The commands of the `command` argument, word by word.
    Command,
    /// The host of the `url` argument.
    Host,
}

/// When a call asks the user besides what the configuration lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asks {
    /// Only when the configuration or the caller says so.
    WhenListed,
    /// Every call, naming the host of its `url`, before the configuration's list is looked at
    /// (the caller keeps which hosts the user allowed).
    EveryHost,
    /// When the file of its `path` was not read in this session (and nothing else asked).
    UnreadFile,
}

/// Who runs a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The registry, through the tool's [`invoke`](crate::Tool::invoke).
    Registry,
    /// The agent, with a sub-agent of its own (the tool only declares the call); the
    /// registry still decides whether the tool is enabled.
    SubAgent,
}

/// What a tool declares about itself; see the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declaration {
    /// What a successful call changes.
    pub effect: Effect,
    /// Whether calls of it in one reply may run at the same time (only for tools that
    /// change nothing).
    pub parallel_safe: bool,
    /// Whether it is offered while plan mode is on.
    pub in_plan_mode: bool,
    /// Whether a sub-agent has it.
    pub in_subagent: bool,
    /// The kind of action, for an editor.
    pub kind: ActionKind,
    /// Whether a call may reach the network.
    pub network: NetworkUse,
    /// What a permission rule's pattern matches.
    pub rule_subject: RuleSubject,
    /// When a call asks the user besides the configuration's list.
    pub asks: Asks,
    /// Who runs a call.
    pub runner: Runner,
    /// Whether it is offered only once the session has a background job (it acts on jobs),
    /// so that a session without one does not pay for its description.
    pub needs_jobs: bool,
}

impl Default for Declaration {
    fn default() -> Self {
        Declaration {
            effect: Effect::Unknown,
            parallel_safe: false,
            in_plan_mode: false,
            in_subagent: false,
            kind: ActionKind::Other,
            network: NetworkUse::Always,
            rule_subject: RuleSubject::Path,
            asks: Asks::WhenListed,
            runner: Runner::Registry,
            needs_jobs: false,
        }
    }
}

impl Declaration {
    /// A tool that only looks at the project: runs with others, in plan mode and in
    /// sub-agents, without the network.
    pub fn looking(kind: ActionKind) -> Self {
        Declaration {
            effect: Effect::Nothing,
            parallel_safe: true,
            in_plan_mode: true,
            in_subagent: true,
            kind,
            network: NetworkUse::Never,
            ..Declaration::default()
        }
    }

    /// A tool that changes the file named by its `path`.
    pub fn file_changing(kind: ActionKind) -> Self {
        Declaration {
            effect: Effect::FileAtPath,
            kind,
            network: NetworkUse::Never,
            ..Declaration::default()
        }
    }
}
