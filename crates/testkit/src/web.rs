//! A fake web site on `127.0.0.1` for tools that fetch pages (`web_fetch`): fixed pages by
//! path, a redirect, and a meeting point that tells whether requests arrived at once.
//!
//! - A page added with [`FakeWeb::page`] is served with its content type.
//! - `GET /redirect?to=URL` answers `302` to `URL`.
//! - `GET /together/NAME` waits until [`TOGETHER`] requests to `/together/` are in flight at
//!   the same time (or [`TOGETHER_WAIT`] passed) and answers `together` or `alone`: a client
//!   that sends two such requests one after the other gets `alone` twice, one that sends them
//!   at once gets `together` twice.
//!
//! Every request's path is recorded ([`FakeWeb::paths`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::{Notify, oneshot};

use crate::Error;

/// How many requests to `/together/` must be in flight at once.
pub const TOGETHER: usize = 2;
/// How long a request to `/together/` waits for the others.
pub const TOGETHER_WAIT: Duration = Duration::from_secs(20);

#[derive(Debug, Default)]
struct Site {
    pages: BTreeMap<String, (String, String)>,
    paths: Vec<String>,
    waiting: usize,
    met: bool,
}

#[derive(Debug, Default)]
struct Shared {
    site: Mutex<Site>,
    arrived: Notify,
}

/// A running fake web site. Dropping it stops the server.
#[derive(Debug)]
pub struct FakeWeb {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeWeb {
    /// Starts a site on an ephemeral port of 127.0.0.1, with no pages yet.
    pub fn start() -> Result<Self, Error> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
            .map_err(|source| Error::Bind { port: 0, source })?;
        let addr = (listener.local_addr()).map_err(|source| Error::Bind { port: 0, source })?;
        let shared = Arc::new(Shared::default());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let (shutdown, stop) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("fake-web-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stop => {}
                    }
                });
            })
            .map_err(Error::Runtime)?;
        Ok(FakeWeb {
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// Serves `body` at `path` with `content_type`.
    pub fn page(&self, path: &str, content_type: &str, body: &str) {
        if let Ok(mut site) = self.shared.site.lock() {
            (site.pages).insert(path.to_owned(), (content_type.to_owned(), body.to_owned()));
        }
    }

    /// `http://127.0.0.1:PORT` joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The paths requested so far, in order.
    pub fn paths(&self) -> Vec<String> {
        (self.shared.site.lock())
            .map(|site| site.paths.clone())
            .unwrap_or_default()
    }
}

impl Drop for FakeWeb {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    let page = {
        let Ok(mut site) = shared.site.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        site.paths.push(path.clone());
        site.pages.get(&path).cloned()
    };
    if let Some((content_type, body)) = page {
        return ([(header::CONTENT_TYPE, content_type)], body).into_response();
    }
    if path == "/redirect" {
        let to = query.strip_prefix("to=").unwrap_or("/");
        let to = percent_encoding::percent_decode_str(to)
            .decode_utf8_lossy()
            .into_owned();
        return (StatusCode::FOUND, [(header::LOCATION, to)]).into_response();
    }
    if path.starts_with("/together/") {
        return together(&shared).await.into_response();
    }
    (StatusCode::NOT_FOUND, "no such page").into_response()
}

/// Waits for [`TOGETHER`] requests in flight at once.
async fn together(shared: &Shared) -> &'static str {
    let arrive = |site: &mut Site| {
        site.waiting += 1;
        if site.waiting >= TOGETHER {
            site.met = true;
        }
    };
    match shared.site.lock() {
        Ok(mut site) => arrive(&mut site),
        Err(_) => return "alone",
    }
    shared.arrived.notify_waiters();
    let met = |shared: &Shared| shared.site.lock().map(|site| site.met).unwrap_or(false);
    let wait = async {
        loop {
            let notified = shared.arrived.notified();
            if met(shared) {
                break;
            }
            notified.await;
        }
    };
    let together = tokio::time::timeout(TOGETHER_WAIT, wait).await.is_ok();
    if let Ok(mut site) = shared.site.lock() {
        site.waiting -= 1;
        if site.waiting == 0 {
            site.met = false;
        }
    }
    if together { "together" } else { "alone" }
}
