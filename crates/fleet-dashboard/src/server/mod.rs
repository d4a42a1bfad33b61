//! The dashboard's HTTP server: every route of [`crate::api`], behind the token and origin
//! checks of [`guard`], the page from [`page`], the event streams from [`stream`].
//!
//! It binds loopback unless told otherwise; [`Serving::exposure`] says when it does not, for
//! the command to warn about. The token is 32 random bytes (hex), made per server unless the
//! caller gives one.

mod guard;
mod page;
mod reply;
mod routes;
mod stream;

use crate::actions::Actions;
use crate::api::{Snapshot, TranscriptPage};
use crate::error::DashboardError;
use crate::Hub;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use reply::ApiError;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// The largest request body taken (actions are small JSON objects).
pub const BODY_LIMIT: usize = 64 * 1024;

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// An address or host name; `127.0.0.1` unless the person asks for another.
    pub host: String,
    /// 0 lets the system choose a free port.
    pub port: u16,
    /// The token requests must carry; a fresh random one when `None`.
    pub token: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 0,
            token: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {host}:{port}: {source}")]
    Bind {
        host: String,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("the dashboard's token must be at least 16 characters of [0-9A-Za-z_-]")]
    WeakToken,
}

/// A running server; it stops when this is dropped.
#[derive(Debug)]
pub struct Serving {
    addr: SocketAddr,
    origin: String,
    token: String,
    task: JoinHandle<std::io::Result<()>>,
}

impl Serving {
    /// The address it listens on (the port the system chose, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT`: the origin POSTs must come from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The page's URL with the token: `http://HOST:PORT/?token=…`.
    pub fn url(&self) -> String {
        format!("{}/?token={}", self.origin, self.token)
    }

    /// A warning when the server listens beyond this machine (not on loopback).
    pub fn exposure(&self) -> Option<String> {
        (!self.addr.ip().is_loopback()).then(|| {
            format!(
                "the dashboard listens on {}, reachable from other machines; anyone who gets \
                 its URL (token included) can read every session under the fleet home and \
                 send messages as you. It is plain HTTP: the token crosses the network \
                 unencrypted",
                self.addr
            )
        })
    }

    /// Waits until the server stops (it only stops on an error of its listener).
    pub async fn wait(&mut self) -> std::io::Result<()> {
        match (&mut self.task).await {
            Ok(result) => result,
            Err(err) => Err(std::io::Error::other(err)),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What every handler reads.
#[derive(Clone)]
pub(crate) struct AppState {
    pub hub: Hub,
    pub actions: Arc<dyn Actions>,
}

impl AppState {
    /// The session's snapshot with the actions this server offers for it.
    fn snapshot(&self, id: &str) -> Result<Snapshot, ApiError> {
        let mut snapshot = self
            .hub
            .snapshot(id)
            .ok_or_else(|| ApiError::no_session(id))?;
        snapshot.actions = self.actions.available(id);
        Ok(snapshot)
    }

    /// A page of an agent's transcript, read off the async threads (it reads files).
    async fn transcript(
        &self,
        id: String,
        agent: String,
        after: u64,
    ) -> Result<TranscriptPage, ApiError> {
        let hub = self.hub.clone();
        let read = tokio::task::spawn_blocking(move || hub.transcript(&id, &agent, after)).await;
        match read {
            Ok(Ok(page)) => Ok(page),
            Ok(Err(err)) => {
                let status = match err {
                    DashboardError::UnknownSession { .. } | DashboardError::UnknownAgent { .. } => {
                        StatusCode::NOT_FOUND
                    }
                    _ => StatusCode::INTERNAL_SERVER_ERROR,
                };
                Err(ApiError::new(status, err.to_string()))
            }
            Err(err) => Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("reading the transcript failed: {err}"),
            )),
        }
    }
}

/// Starts serving `hub` with `actions` (needs a tokio runtime); the server runs until the
/// returned [`Serving`] is dropped.
pub async fn serve(
    hub: Hub,
    actions: Arc<dyn Actions>,
    options: ServeOptions,
) -> Result<Serving, ServeError> {
    let token = match options.token {
        Some(token) if strong(&token) => token,
        Some(_) => return Err(ServeError::WeakToken),
        None => random_hex(32),
    };
    let listener = tokio::net::TcpListener::bind((options.host.as_str(), options.port))
        .await
        .and_then(|l| Ok((l.local_addr()?, l)));
    let (addr, listener) = listener.map_err(|source| ServeError::Bind {
        host: options.host.clone(),
        port: options.port,
        source,
    })?;
    let host = match options.host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => options.host.clone(),
    };
    let origin = format!("http://{host}:{}", addr.port());
    let guard = Arc::new(guard::Guard::new(
        token.clone(),
        origin.clone(),
        addr.ip().is_unspecified(),
    ));
    let app = router(AppState { hub, actions }, guard);
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(Serving {
        addr,
        origin,
        token,
        task,
    })
}

fn router(state: AppState, guard: Arc<guard::Guard>) -> Router {
    let transcript = "/api/sessions/{id}/agents/{agent_id}/transcript";
    Router::new()
        .route("/", get(|| async { page::page() }))
        .route("/api/sessions", get(routes::sessions))
        .route("/api/sessions/events", get(stream::sessions_events))
        .route("/api/sessions/{id}", get(routes::snapshot))
        .route("/api/sessions/{id}/events", get(stream::session_events))
        .route(transcript, get(routes::transcript))
        .route(
            &format!("{transcript}/events"),
            get(stream::transcript_events),
        )
        .route(
            "/api/sessions/{id}/tasks/{task_id}/stop",
            post(routes::stop_task),
        )
        .route(
            "/api/teams/{team}/members/{member}/messages",
            post(routes::message_member),
        )
        .route(
            "/api/sessions/{id}/permissions/{request_id}",
            post(routes::answer_permission),
        )
        .fallback(routes::not_found)
        .with_state(state)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
}

/// A token someone chose: long enough, and safe in a URL as it is.
fn strong(token: &str) -> bool {
    token.len() >= 16
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `bytes` random bytes as lowercase hex.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    rand::fill(&mut raw[..]);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}
