//! Configuration: the schema of spec section 2.3 with its defaults, layered from the files
//! of section 2.1, `YBS_*` environment variables and command-line flags, with the source of
//! every effective value.

mod env;
mod error;
mod file;
mod load;
mod merge;
mod paths;
mod schema;
mod show;
mod source;
mod validate;

pub use env::process_env;
pub use error::{ConfigError, ConfigWarning};
pub use load::{FileStatus, FlagOverrides, LoadedConfig, load};
pub use paths::{ConfigFile, ConfigLocations, FileRole, SYSTEM_CONFIG_FILE, expand_tilde};
pub use schema::{
    AgentConfig, BuiltinTool, BuiltinTools, Config, ContextConfig, DEFAULT_THEME,
    EXTERNAL_TOOL_KIND, ExternalTool, GitConfig, LlmConfig, McpConfig, McpServer, NamedEndpoint,
    PromptCache, SCHEMA_VERSION, SafetyConfig, ToolsConfig, UiConfig,
};
pub use show::{is_secret_key, mask_secret, show};
pub use source::{Source, Sources};

#[cfg(test)]
mod tests;
