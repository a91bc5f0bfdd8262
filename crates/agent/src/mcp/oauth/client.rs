//! The HTTP client of a server ybs logged in to: every request carries the current token,
//! refreshed first when it expired; a request the server refuses with `401` gets a refreshed
//! token and is sent once more, so a session outlives its tokens.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

use super::store::{StoredToken, TokenStore};

type Failure = StreamableHttpError<reqwest::Error>;

/// reqwest's client with the token of one server URL.
#[derive(Clone)]
pub(crate) struct TokenClient {
    http: reqwest::Client,
    store: TokenStore,
    token: Arc<tokio::sync::Mutex<StoredToken>>,
}

impl TokenClient {
    pub(crate) fn new(store: TokenStore, token: StoredToken) -> Self {
        TokenClient {
            http: reqwest::Client::new(),
            store,
            token: Arc::new(tokio::sync::Mutex::new(token)),
        }
    }

    /// The token to send now.
    async fn bearer(&self) -> String {
        let mut token = self.token.lock().await;
        if token.expired()
            && let Some(fresh) = super::refreshed(&self.store, &token).await
        {
            *token = fresh;
        }
        token.access_token.clone()
    }

    /// A new token after `refused` was refused (the one another request already got, if
    /// it refreshed first); `None` when the refresh is refused too.
    async fn after_refusal(&self, refused: &str) -> Option<String> {
        let mut token = self.token.lock().await;
        if token.access_token != refused {
            return Some(token.access_token.clone());
        }
        let fresh = super::refreshed(&self.store, &token).await?;
        *token = fresh;
        Some(token.access_token.clone())
    }

    /// `send` with the current token, and once more with a fresh one when the server
    /// refuses it.
    async fn with_token<T, Sent>(&self, send: impl Fn(String) -> Sent) -> Result<T, Failure>
    where
        Sent: std::future::Future<Output = Result<T, Failure>>,
    {
        let bearer = self.bearer().await;
        match send(bearer.clone()).await {
            Err(error) if is_refusal(&error) => match self.after_refusal(&bearer).await {
                Some(fresh) => send(fresh).await,
                None => Err(error),
            },
            other => other,
        }
    }
}

fn is_refusal(error: &Failure) -> bool {
    super::super::http_failure::describe(error).starts_with("401")
}

impl StreamableHttpClient for TokenClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.with_token(|bearer| {
            self.http.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                Some(bearer),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.with_token(|bearer| {
            self.http.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                Some(bearer),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let bearer = self.bearer().await;
        (self
            .http
            .delete_session(uri, session_id, Some(bearer), custom_headers))
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.with_token(|bearer| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                Some(bearer),
                custom_headers.clone(),
            )
        })
        .await
    }
}
