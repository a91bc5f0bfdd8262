//! OAuth 2.1 for MCP servers reached over HTTP: `ybs mcp login NAME` runs the authorization
//! code flow with PKCE ([`flow`]) and stores the token by the server's URL ([`store`]);
//! connecting sends it, refreshed when it expired or was refused; `ybs mcp logout NAME`
//! removes it. A server that wants a token ybs does not have is said to need a login.

mod client;
mod error;
mod flow;
mod store;

pub(crate) use client::TokenClient;
pub use error::OAuthError;
pub use store::{StoredToken, TokenStore};

/// Logs in to the MCP server at `url` and stores its token in `store`; `show` prints the
/// URL the user opens. Blocks until the browser answers (or 5 minutes pass).
pub fn login(url: &str, store: &TokenStore, show: &mut dyn FnMut(&str)) -> Result<(), OAuthError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| OAuthError::Http(error.to_string()))?;
    let token = runtime.block_on(flow::login(url, show))?;
    save(store, &token)
}

fn save(store: &TokenStore, token: &StoredToken) -> Result<(), OAuthError> {
    store.save(token).map_err(|error| OAuthError::Store {
        path: store.path(&token.url).display().to_string(),
        message: error.to_string(),
    })
}

/// `token` refreshed and stored; `None` when the refresh was refused.
pub(super) async fn refreshed(store: &TokenStore, token: &StoredToken) -> Option<StoredToken> {
    let fresh = flow::refresh(token).await.ok()?;
    save(store, &fresh).ok()?;
    Some(fresh)
}
