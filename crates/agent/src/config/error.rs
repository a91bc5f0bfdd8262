//! Why configuration could not be loaded, and what it warns about.

use std::fmt;
use std::path::PathBuf;

use super::source::Source;

/// A configuration that cannot be used. Each message names the file (or variable, or flag)
/// and, for files, the line and column.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file named with `--config` is missing.
    #[error("config file {} (given with --config) does not exist", path.display())]
    MissingExplicit {
        /// The file.
        path: PathBuf,
    },
    /// A file exists but cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
    /// A file is not valid JSON.
    #[error("{}:{line}:{column}: malformed config file: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// A file's top level is not a JSON object.
    #[error("{}: a config file must hold a JSON object ({{ ... }}) at its top level", path.display())]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// A key of a file holds a value of the wrong type.
    #[error("{}:{line}:{column}: {key}: {message}", path.display())]
    WrongType {
        /// The file.
        path: PathBuf,
        /// The line of the value, from 1.
        line: usize,
        /// The column of the value, from 1.
        column: usize,
        /// The dotted key path.
        key: String,
        /// What was expected.
        message: String,
    },
    /// An environment variable's value cannot be read as its key's type.
    #[error("environment variable {var}={value:?} is not valid for {key}: expected {expected}")]
    EnvValue {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// The key it sets.
        key: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A value is of the right type but outside what it may be.
    #[error("{key} = {value} (from {origin}) is invalid: {rule}")]
    Invalid {
        /// The dotted key path.
        key: String,
        /// The value as JSON.
        value: String,
        /// Where it was set.
        origin: Source,
        /// What it must be.
        rule: String,
    },
}

/// Something in the configuration that is ignored, reported so typos do not go unnoticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWarning {
    /// A file sets a key the schema does not have.
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// The dotted key path.
        key: String,
    },
    /// A `YBS_` environment variable that sets nothing.
    UnknownEnvVar {
        /// The variable.
        var: String,
    },
    /// A project file redefines one of the user's own named endpoints; the user's is kept.
    UsersEndpointKept {
        /// The project file.
        path: PathBuf,
        /// The endpoint's name.
        name: String,
    },
    /// A file declares a schema version this build does not know.
    UnknownVersion {
        /// The file.
        path: PathBuf,
        /// The version it declares.
        version: String,
    },
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWarning::UnknownKey { path, key } => {
                write!(f, "{}: unknown key {key} (ignored)", path.display())
            }
            ConfigWarning::UnknownEnvVar { var } => write!(
                f,
                "environment variable {var} is not a ybs setting (ignored); `ybs config` lists the keys"
            ),
            ConfigWarning::UsersEndpointKept { path, name } => write!(
                f,
                "{}: redefines your named endpoint llm.endpoints.{name} (ignored: a project may not change where your endpoints send)",
                path.display()
            ),
            ConfigWarning::UnknownVersion { path, version } => write!(
                f,
                "{}: config version {version:?} is not {:?}; reading it as {:?}",
                path.display(),
                super::schema::SCHEMA_VERSION,
                super::schema::SCHEMA_VERSION
            ),
        }
    }
}
