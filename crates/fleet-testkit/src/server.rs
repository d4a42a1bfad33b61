//! The fake model server: a real axum HTTP server on loopback that answers the Messages API
//! and the Chat Completions API from a [`Scenario`], and records every request (or, with
//! [`RequestLog::CountOnly`], counts them).

use crate::answer::Answer;
use crate::cache::{self, PromptCache};
use crate::conn::{ConnInfo, ConnListener};
use crate::encode::{self, Encoding};
use crate::error::TestkitError;
use crate::event_log::{Ended, EventLog, Received};
use crate::http_error::ApiError;
use crate::record::{redacted_headers, RecordedRequest};
use crate::scenario::{Fault, RequestLog, Scenario};
use crate::sse::{Pacing, Stall};
use crate::view::Protocol;
use crate::window::Fit;
use crate::{anthropic, listing, openai};
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use bytes::Bytes;
use check::{check, Body, Checked};
use fleet_protocol::StopReason;
use serde_json::Value;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::TcpSocket;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Pending connections the kernel may queue: enough for thousands of clients connecting at
/// once (the kernel caps it at `net.core.somaxconn`).
const LISTEN_BACKLOG: u32 = 8192;

/// The API's request size limit; larger bodies get its 413 `request_too_large`.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How long a `stall_after_events` fault without `stall_ms` pauses: for ever, to a client.
const STALL_FOREVER: Duration = Duration::from_secs(24 * 3600);

/// The connection a request came in on, when the server put it there (always, except for
/// a router driven without a listener).
type Conn = Option<Extension<ConnectInfo<ConnInfo>>>;

/// A running fake model server. Dropping it stops accepting connections; [`shutdown`]
/// additionally waits for in-flight responses to finish.
///
/// [`shutdown`]: FakeModelServer::shutdown
pub struct FakeModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeModelServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

struct Shared {
    scenario: Scenario,
    started: Instant,
    log: Mutex<Log>,
    cache: Mutex<PromptCache>,
    /// The request event log (`request_log_file`), when on.
    events: Option<Arc<EventLog>>,
    /// How often each endpoint describing the server was asked (for `loading_probes`).
    probes: Mutex<std::collections::HashMap<&'static str, u32>>,
}

impl Shared {
    /// Counts a question to `endpoint`; whether it is still answered "Loading model".
    fn still_loading(&self, endpoint: &'static str) -> bool {
        let mut probes = lock(&self.probes);
        let asked = probes.entry(endpoint).or_insert(0);
        *asked += 1;
        *asked <= self.scenario.openai.loading_probes
    }
}

/// Everything decided under one lock, so that call numbers, rule budgets and the log agree.
struct Log {
    /// One more than the number of requests received: the count, in both log modes.
    next_seq: u64,
    used: Vec<u32>,
    /// Empty with [`RequestLog::CountOnly`].
    records: Vec<RecordedRequest>,
}

/// A poisoned lock only means another request panicked; the data is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FakeModelServer {
    /// Starts a server on `127.0.0.1` with an ephemeral port.
    pub async fn start(scenario: Scenario) -> Result<Self, TestkitError> {
        Self::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), scenario).await
    }

    /// Starts a server on `addr` (port 0 picks a free port).
    pub async fn start_on(addr: SocketAddr, scenario: Scenario) -> Result<Self, TestkitError> {
        scenario.validate()?;
        let bind_err = |source| TestkitError::Bind { addr, source };
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()
        } else {
            TcpSocket::new_v6()
        }
        .map_err(bind_err)?;
        socket.set_reuseaddr(true).map_err(bind_err)?;
        socket.bind(addr).map_err(bind_err)?;
        let listener = socket.listen(LISTEN_BACKLOG).map_err(bind_err)?;
        let local = listener.local_addr().map_err(bind_err)?;
        let started = Instant::now();
        let events = match &scenario.request_log_file {
            Some(path) => Some(Arc::new(EventLog::open(path, started).map_err(
                |source| TestkitError::RequestLogFile {
                    path: path.clone(),
                    source,
                },
            )?)),
            None => None,
        };
        let shared = Arc::new(Shared {
            log: Mutex::new(Log {
                next_seq: 1,
                used: vec![0; scenario.rules.len()],
                records: Vec::new(),
            }),
            scenario,
            started,
            cache: Mutex::new(PromptCache::default()),
            events,
            probes: Mutex::default(),
        });
        let app = router(shared.clone()).into_make_service_with_connect_info::<ConnInfo>();
        let listener = ConnListener::new(listener);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::error!("fake model server stopped: {e}");
            }
        });
        tracing::debug!("fake model server listening on {local}");
        Ok(Self {
            addr: local,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://HOST:PORT`, without a trailing slash: what clients take as their base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order. Empty when the scenario keeps only
    /// the count ([`RequestLog::CountOnly`]).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.log).records.clone()
    }

    /// How many requests arrived, whatever the scenario's [`RequestLog`].
    pub fn request_count(&self) -> usize {
        let received = lock(&self.shared.log).next_seq - 1;
        usize::try_from(received).unwrap_or(usize::MAX)
    }

    /// The latest request; `None` when the scenario keeps only the count.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        lock(&self.shared.log).records.last().cloned()
    }

    /// How many times the rule at `index` has answered.
    pub fn rule_uses(&self, index: usize) -> u32 {
        lock(&self.shared.log).used.get(index).copied().unwrap_or(0)
    }

    /// Stops accepting connections and waits for in-flight responses to finish.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        tracing::debug!("fake model server on {} stopped", self.addr);
    }
}

impl Drop for FakeModelServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/_fake/requests", get(request_log))
        .route("/v1/models", get(models))
        .route("/props", get(props))
        .route("/apply-template", post(apply_template))
        .route("/tokenize", post(tokenize))
        .fallback(unknown_endpoint)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
}

async fn messages(
    State(s): State<Arc<Shared>>,
    conn: Conn,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(
        &s,
        conn,
        Some(Protocol::Anthropic),
        "/v1/messages",
        &Method::POST,
        headers,
        body,
    )
    .await
}

async fn chat_completions(
    State(s): State<Arc<Shared>>,
    conn: Conn,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(
        &s,
        conn,
        Some(Protocol::OpenAi),
        "/v1/chat/completions",
        &Method::POST,
        headers,
        body,
    )
    .await
}

async fn unknown_endpoint(
    State(s): State<Arc<Shared>>,
    conn: Conn,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(&s, conn, None, uri.path(), &method, headers, body).await
}

/// `GET /_fake/requests`: the log as JSON, for tests that run the server as a separate
/// process. Not itself recorded.
async fn request_log(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(lock(&s.log).records.clone()).into_response()
}

/// `GET /v1/models` (see `listing`). Not recorded: the log counts model requests.
async fn models(State(s): State<Arc<Shared>>) -> Response {
    if s.still_loading("models") {
        return listing::loading();
    }
    listing::models(&s.scenario)
}

/// `GET /props`, llama-server's (see `listing`). Not recorded either.
async fn props(State(s): State<Arc<Shared>>) -> Response {
    if s.still_loading("props") {
        return listing::loading();
    }
    listing::props(&s.scenario)
}

/// `POST /apply-template`, llama-server's chat request rendered to its prompt. Not recorded.
async fn apply_template(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    if s.still_loading("apply-template") {
        return listing::loading();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let with_tools = s.scenario.openai.supports_tools != Some(false);
    listing::apply_template(&s.scenario, check::rendered_prompt(&body, with_tools))
}

/// `POST /tokenize`, llama-server's tokenizer. Not recorded.
async fn tokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    if s.still_loading("tokenize") {
        return listing::loading();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    listing::tokenize(&s.scenario, &body)
}

async fn handle(
    s: &Shared,
    conn: Conn,
    protocol: Option<Protocol>,
    path: &str,
    method: &Method,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let body = Body::new(&raw);
    let checked = match protocol {
        Some(p) => check(&s.scenario, p, &headers, &body),
        None => Err(ApiError::new(
            404,
            format!("fake model: no endpoint {method} {path} (it serves POST /v1/messages and POST /v1/chat/completions)"),
        )),
    };

    // Number the request, pick its rule and log it, all at once.
    let full_log = s.scenario.request_log == RequestLog::Full;
    let logged_headers = if full_log {
        redacted_headers(&headers)
    } else {
        Vec::new()
    };
    let conn = conn.map(|Extension(ConnectInfo(c))| c);
    let (seq, rule_index, status) = {
        let mut log = lock(&s.log);
        let seq = log.next_seq;
        log.next_seq += 1;
        let rule_index = checked
            .as_ref()
            .ok()
            .filter(|c| !c.sends_nothing())
            .and_then(|c| {
                let view = c.view();
                let found = s.scenario.rules.iter().enumerate().position(|(i, rule)| {
                    rule.times.is_none_or(|t| log.used[i] < t) && rule.when.matches(view, seq)
                });
                if let Some(i) = found {
                    log.used[i] += 1;
                }
                found
            });
        let status = match (&checked, rule_index) {
            (Err(e), _) => e.status,
            (Ok(c), None) if c.sends_nothing() => 200,
            (Ok(_), None) => 400,
            (Ok(_), Some(i)) => match &s.scenario.rules[i].fault {
                Some(Fault::Status(f)) => f.status,
                _ => 200,
            },
        };
        if full_log {
            log.records.push(RecordedRequest {
                seq,
                elapsed: s.started.elapsed(),
                method: method.to_string(),
                path: path.to_owned(),
                protocol,
                headers: logged_headers,
                body: body.into_value(),
                rule: rule_index.map(|i| s.scenario.rules[i].label(i)),
                rule_index,
                status,
            });
        }
        (seq, rule_index, status)
    };
    // Logged outside the lock above: the file write must not serialise rule matching.
    let events = s.events.clone();
    if let Some(events) = &events {
        events.received(
            seq,
            Received {
                conn: conn.as_ref().map_or(0, |c| c.id),
                peer_port: conn.as_ref().map_or(0, |c| c.peer.port()),
                path,
                rule: rule_index.map(|i| s.scenario.rules[i].label(i)),
                stream: checked
                    .as_ref()
                    .is_ok_and(|c| c.view().stream && !s.scenario.ignore_stream),
                status,
            },
        );
    }
    let done_at_once = |ended: Ended| {
        if let Some(events) = &events {
            events.finished_at_once(seq, ended);
        }
    };

    let protocol = protocol.unwrap_or(Protocol::Anthropic);
    let request_id = format!("req_fake_{seq:06}");
    let checked = match checked {
        Ok(c) => c,
        Err(e) => {
            done_at_once(Ended::ErrorStatus);
            return e.into_response(protocol, &request_id);
        }
    };
    if checked.sends_nothing() {
        done_at_once(Ended::Complete);
        return encode::empty_stream(protocol, &request_id);
    }
    let Some(index) = rule_index else {
        let view = checked.view();
        let message = format!(
            "fake model: no scenario rule matched request #{seq} ({} rules; last user text: {:?}; has tool result: {})",
            s.scenario.rules.len(),
            excerpt(&view.last_user),
            view.has_tool_result
        );
        done_at_once(Ended::ErrorStatus);
        return ApiError::invalid_request(message).into_response(protocol, &request_id);
    };
    let rule = &s.scenario.rules[index];
    if rule.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(rule.delay_ms)).await;
    }
    match &rule.fault {
        Some(Fault::Status(f)) => {
            done_at_once(Ended::ErrorStatus);
            return ApiError::from_fault(f).into_response(protocol, &request_id);
        }
        Some(Fault::EmptyStream) => {
            done_at_once(Ended::Complete);
            return encode::empty_stream(protocol, &request_id);
        }
        _ => {}
    }

    let view = checked.view();
    let served = match (&checked, &s.scenario.openai.served_model) {
        (Checked::OpenAi { .. }, Some(served)) => Some(served.clone()),
        _ => None,
    };
    let model = served.unwrap_or_else(|| {
        if view.model.is_empty() {
            s.scenario.model.clone()
        } else {
            view.model.clone()
        }
    });
    let (input, include_usage, max_tokens, output_room) = match &checked {
        Checked::Anthropic(req, _) => {
            let input = if s.scenario.cache.enabled {
                let prefixes = cache::prefixes(req);
                lock(&s.cache).account(&prefixes, &s.scenario.cache)
            } else {
                cache::InputUsage {
                    input_tokens: cache::total_tokens(req),
                    ..cache::InputUsage::default()
                }
            };
            (input, false, None, None)
        }
        Checked::OpenAi {
            input,
            include_usage,
            max_tokens,
            fit,
            ..
        } => {
            let room = match fit {
                Fit::Answer { room } => *room,
                Fit::EmptyStream => None,
            };
            (*input, *include_usage, *max_tokens, room)
        }
    };
    let mut answer = Answer::new(rule, protocol, seq, model, input);
    // A server that stopped at the output limit produced exactly that many tokens.
    if answer.stop_reason == StopReason::MaxTokens && rule.usage.output_tokens.is_none() {
        if let Some(limit) = max_tokens {
            answer.usage.output_tokens = limit;
        }
    }
    let enc = Encoding {
        pacing: Pacing {
            chunk_size: rule.chunk_size.unwrap_or(s.scenario.chunk_size),
            delay: Duration::from_millis(rule.chunk_delay_ms.unwrap_or(s.scenario.chunk_delay_ms)),
            first_delay: Duration::from_millis(rule.first_event_delay_ms),
            stall: match &rule.fault {
                Some(Fault::Stall { after_events, ms }) => Some(Stall {
                    after_frames: *after_events,
                    pause: ms.map_or(STALL_FOREVER, Duration::from_millis),
                }),
                _ => None,
            },
        },
        delta_chars: s.scenario.delta_chars,
        request_id,
        openai: s.scenario.openai.clone(),
        include_usage: include_usage && !s.scenario.openai.omit_usage,
        output_room,
        log: events.map(|e| (e, seq)),
        reset: conn.map(|c| c.reset_flag()),
    };
    let stream = view.stream && !s.scenario.ignore_stream;
    match protocol {
        Protocol::Anthropic => anthropic::respond(&answer, rule.fault.as_ref(), stream, &enc),
        Protocol::OpenAi => openai::respond(&answer, rule.fault.as_ref(), stream, &enc),
    }
}

/// The start of a long text, for error messages that must stay readable.
fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 200;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

mod check;
#[cfg(test)]
mod tests;
