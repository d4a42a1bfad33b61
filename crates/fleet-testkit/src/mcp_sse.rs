//! The legacy HTTP+SSE MCP transport (spec 2024-11-05), server side, for `fleet-mcp-fault
//! --sse`: the counterpart fleet's SSE client is tested against.
//!
//! rmcp 3 has no SSE server, so this bridges: each `GET /sse` starts its own rmcp session on an
//! in-memory pipe (`tokio::io::duplex`, one JSON message per line). The stream first sends
//! `event: endpoint` with `/message?sessionId=…`, then one `event: message` per line the
//! session writes. Each `POST /message?sessionId=…` is written into that session's pipe and
//! answered `202 Accepted` at once; the reply travels on the stream. When the GET goes away
//! the pipe is dropped, which ends the session.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::stream::{self, StreamExt as _};
use rmcp::{ServerHandler, ServiceExt as _};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, WriteHalf};
use tokio::net::TcpListener;

/// Bytes the pipe between a stream and its session holds before the writer waits.
const PIPE_BUFFER: usize = 64 * 1024;

/// How the SSE server misbehaves, if at all.
#[derive(Debug, Clone, Default)]
pub struct McpSseOptions {
    /// Answer `GET /sse` with an event stream that never names its endpoint (only a comment,
    /// then silence), so a client's connect timeout can be tested.
    pub no_endpoint: bool,
}

type Log = Arc<dyn Fn(&str) + Send + Sync>;
type Writer = Arc<tokio::sync::Mutex<WriteHalf<DuplexStream>>>;

struct SseState {
    /// Starts an rmcp session on the server's end of a pipe.
    start_session: Box<dyn Fn(DuplexStream) + Send + Sync>,
    /// The write end of each live session's pipe, by session id.
    sessions: Mutex<HashMap<String, Writer>>,
    next_id: AtomicU64,
    log: Log,
    options: McpSseOptions,
}

impl SseState {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Writer>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One line per request header, `GET /sse header NAME: VALUE` (names in lower case, as
    /// `http` keeps them), so tests can see what arrived.
    fn log_headers(&self, request: &str, headers: &HeaderMap) {
        for (name, value) in headers {
            let value = String::from_utf8_lossy(value.as_bytes());
            (self.log)(&format!("{request} header {name}: {value}"));
        }
    }
}

/// Serves MCP over HTTP+SSE on `listener` until the process ends: `GET /sse` and
/// `POST /message?sessionId=…`. `make_handler` gives each stream its own handler (clone a
/// shared one to share state); `log` receives one line per notable event.
pub async fn serve_mcp_sse<H, F, L>(
    listener: TcpListener,
    make_handler: F,
    log: L,
    options: McpSseOptions,
) -> std::io::Result<()>
where
    H: ServerHandler,
    F: Fn() -> H + Send + Sync + 'static,
    L: Fn(&str) + Send + Sync + 'static,
{
    let log: Log = Arc::new(log);
    let session_log = log.clone();
    let start_session = move |pipe: DuplexStream| {
        let handler = make_handler();
        let log = session_log.clone();
        tokio::spawn(async move {
            match handler.serve(pipe).await {
                Ok(service) => {
                    let _ = service.waiting().await;
                }
                Err(e) => log(&format!("sse session failed to start: {e}")),
            }
        });
    };
    let state = Arc::new(SseState {
        start_session: Box::new(start_session),
        sessions: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        log,
        options,
    });
    let app = Router::new()
        .route("/sse", get(open_stream))
        .route("/message", post(post_message))
        .layer(DefaultBodyLimit::disable())
        .with_state(state);
    axum::serve(listener, app).await
}

/// Removes its session when the stream it belongs to is dropped (the client went away or
/// the session ended): the pipe's last writer goes, and the rmcp session sees end of input.
struct SessionGuard {
    state: Arc<SseState>,
    id: String,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.state.sessions().remove(&self.id);
        (self.state.log)(&format!("sse session closed {}", self.id));
    }
}

async fn open_stream(State(state): State<Arc<SseState>>, headers: HeaderMap) -> Response {
    state.log_headers("GET /sse", &headers);
    if state.options.no_endpoint {
        let silence = stream::once(async { Ok::<_, Infallible>(Bytes::from(": hello\n\n")) })
            .chain(stream::pending());
        return event_stream(Body::from_stream(silence));
    }
    let id = format!(
        "{}-{}",
        std::process::id(),
        state.next_id.fetch_add(1, Ordering::SeqCst)
    );
    let (ours, theirs) = tokio::io::duplex(PIPE_BUFFER);
    (state.start_session)(theirs);
    let (read, write) = tokio::io::split(ours);
    state
        .sessions()
        .insert(id.clone(), Arc::new(tokio::sync::Mutex::new(write)));
    (state.log)(&format!("sse session opened {id}"));
    let endpoint = format!("event: endpoint\ndata: /message?sessionId={id}\n\n");
    let guard = SessionGuard { state, id };
    let messages = stream::unfold(
        (BufReader::new(read).lines(), guard),
        |(mut lines, guard)| async move {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    let event = Bytes::from(format!("event: message\ndata: {line}\n\n"));
                    Some((Ok::<_, Infallible>(event), (lines, guard)))
                }
                // The session ended: so does the stream, which the client reads as closed.
                Ok(None) | Err(_) => None,
            }
        },
    );
    let body = stream::once(async move { Ok(Bytes::from(endpoint)) }).chain(messages);
    event_stream(Body::from_stream(body))
}

fn event_stream(body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn post_message(
    State(state): State<Arc<SseState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.log_headers("POST /message", &headers);
    let Some(id) = uri.query().and_then(session_id) else {
        return (StatusCode::BAD_REQUEST, "no sessionId in the query").into_response();
    };
    let Some(writer) = state.sessions().get(id).cloned() else {
        return (StatusCode::NOT_FOUND, format!("no session {id}")).into_response();
    };
    // Re-encoded so the pipe always gets exactly one line, whatever the client's layout.
    let message: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    let mut line = message.to_string();
    line.push('\n');
    let mut writer = writer.lock().await;
    if let Err(e) = writer.write_all(line.as_bytes()).await {
        return (StatusCode::GONE, format!("session {id} ended: {e}")).into_response();
    }
    StatusCode::ACCEPTED.into_response()
}

fn session_id(query: &str) -> Option<&str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .filter(|id| !id.is_empty())
}
