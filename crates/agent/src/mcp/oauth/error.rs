//! Why a login or a refresh of an MCP server's token failed, in words.

/// Why a login or a refresh did not give a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// The server or its authorization server could not be found out.
    #[error("cannot find how to log in: {0}")]
    Discovery(String),
    /// A request did not get through.
    #[error("{0}")]
    Http(String),
    /// The authorization server, or ybs, refused.
    #[error("{0}")]
    Refused(String),
    /// The token could not be stored.
    #[error("cannot store the token in {path}: {message}")]
    Store {
        /// The token file.
        path: String,
        /// What went wrong.
        message: String,
    },
}
