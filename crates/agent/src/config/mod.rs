//! Configuration: the typed schema with its defaults, layered from the configuration files,
//! `YBS_*` environment variables and command-line flags, with the source of
//! every effective value. A project's own file is input, not the user's choice: its settings
//! that run programs, send data elsewhere or weaken safety wait for the user's trust
//! ([`Trust`]).

mod env;
mod error;
mod file;
mod hooks;
mod keys;
mod load;
mod lsp;
mod merge;
mod own_edits;
mod paths;
mod risk;
mod schema;
mod show;
mod source;
mod trust;
mod validate;

pub use env::process_env;
pub use error::{ConfigError, ConfigWarning};
pub use hooks::{EventHook, HooksConfig, ToolHook};
pub use keys::{EditingMode, Key, KeyAction, KeyBindings, KeyCode, KeyNameError, Keys};
pub use load::{FileStatus, FlagOverrides, LoadedConfig, fingerprint, load};
pub use lsp::{LspConfig, LspServer, default_servers};
pub use own_edits::{OwnEdits, TrustAfterEdit};
pub use paths::{ConfigFile, ConfigLocations, FileRole, SYSTEM_CONFIG_FILE, expand_tilde};
pub use risk::{Risk, Setting, UntrustedFile};
pub use schema::{
    AgentConfig, Approval, BuiltinTool, BuiltinTools, Config, ContextConfig, DEFAULT_THEME,
    EXTERNAL_TOOL_KIND, ExternalTool, GitConfig, LlmConfig, McpConfig, McpServer, NamedEndpoint,
    Network, PromptCache, SCHEMA_VERSION, SafetyConfig, ToolsConfig, UiConfig,
};
pub use show::{is_secret_key, mask_secret, show, with_session_changes};
pub use source::{Source, Sources};
pub use trust::{Trust, TrustStore, digest};

#[cfg(test)]
mod tests;
