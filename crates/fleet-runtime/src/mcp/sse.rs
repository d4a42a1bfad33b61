//! The legacy HTTP+SSE transport of MCP (spec 2024-11-05), client side.
//!
//! rmcp 3 dropped its SSE client, but servers that only speak this transport are still common
//! (`"type": "sse"` in `.mcp.json`), so fleet carries its own. The protocol is two half-duplex
//! channels: one long GET whose event stream carries every server→client message, and one POST
//! per client→server message to the URL the stream names in its first `endpoint` event.
//!
//! [`SseClientTransport::connect`] opens the stream and waits for that event; a reader task
//! then turns `message` events into JSON-RPC messages for rmcp. The stream ending (the server
//! died, a proxy cut it) ends [`Transport::receive`], which rmcp reports as a closed transport:
//! pending calls fail and the connection's restart-once policy takes over, as for a stdio
//! server that exits.

use std::collections::BTreeMap;
use std::time::Duration;

use fleet_model::sse::{SseDecoder, SseEvent};
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use thiserror::Error;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Server messages buffered between the reader task and rmcp; a full buffer stops reading
/// the stream, so a flooding server is slowed down rather than held in memory.
const INCOMING_BUFFER: usize = 64;

/// How much of an error response's body goes into the error message, and how long to wait
/// for it: enough to show a proxy's or framework's one-line reason, never a whole page.
const BODY_SNIPPET_BYTES: usize = 300;
const BODY_SNIPPET_WAIT: Duration = Duration::from_secs(2);

/// Why the SSE transport could not connect or deliver a message. Every variant names the URL;
/// the caller ([`super::client`]) adds the server's name.
#[derive(Debug, Error)]
pub enum SseError {
    #[error("{url:?} is not a URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("header {name:?}: {reason}")]
    BadHeader { name: String, reason: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] rustls::Error),
    #[error("GET {url}: {source}")]
    Get {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("GET {url}: HTTP {status}{body}")]
    GetStatus {
        url: String,
        status: StatusCode,
        body: String,
    },
    #[error("GET {url}: the answer is {content_type:?}, not an event stream (text/event-stream)")]
    NotEventStream { url: String, content_type: String },
    #[error("GET {url}: no `endpoint` event within {timeout:?}")]
    EndpointTimeout { url: String, timeout: Duration },
    #[error("GET {url}: the event stream ended before its `endpoint` event{detail}")]
    EndedBeforeEndpoint { url: String, detail: String },
    #[error("GET {url}: the `endpoint` event {data:?} is not a URL: {reason}")]
    BadEndpoint {
        url: String,
        data: String,
        reason: String,
    },
    #[error(
        "GET {url}: the `endpoint` {endpoint} is on another origin; fleet posts messages (and \
         the configured headers) only to the server's own origin"
    )]
    ForeignEndpoint { url: String, endpoint: String },
    #[error("POST {url}: {source}")]
    Post {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("POST {url}: HTTP {status}{body}")]
    PostStatus {
        url: String,
        status: StatusCode,
        body: String,
    },
    #[error("encoding a message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A connected SSE session: the stream is open and its `endpoint` is known.
pub struct SseClientTransport {
    http: reqwest::Client,
    headers: HeaderMap,
    endpoint: Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    /// Reads the event stream; aborted when the transport is closed or dropped, which drops
    /// the GET and so tells the server the session is over.
    reader: AbortOnDrop,
}

impl std::fmt::Debug for SseClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseClientTransport")
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl SseClientTransport {
    /// GETs `url` as an event stream with `headers` (plus `Accept: text/event-stream`) and
    /// waits up to `timeout` for the `endpoint` event. The same headers go with every POST.
    pub async fn connect(
        url: &str,
        headers: &BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<Self, SseError> {
        let stream_url = Url::parse(url).map_err(|e| SseError::BadUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        let headers = header_map(headers)?;
        let http = fleet_model::tls::client_builder()
            .map_err(SseError::Tls)?
            .user_agent(concat!("fleet/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(SseError::Client)?;
        let opening = open_stream(&http, &stream_url, &headers);
        match tokio::time::timeout(timeout, opening).await {
            Ok(Ok((endpoint, incoming, reader))) => Ok(Self {
                http,
                headers,
                endpoint,
                incoming,
                reader,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SseError::EndpointTimeout {
                url: stream_url.to_string(),
                timeout,
            }),
        }
    }

    /// Where client messages are posted, as the server announced it.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), SseError>> + Send + 'static {
        // Built now so the future owns everything it needs: rmcp runs sends concurrently.
        let url = self.endpoint.clone();
        let request = serde_json::to_vec(&item).map(|body| {
            self.http
                .post(url.clone())
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body)
        });
        async move {
            let response = request?.send().await.map_err(|source| SseError::Post {
                url: url.to_string(),
                source,
            })?;
            let status = response.status();
            if !status.is_success() {
                let body = body_snippet(response).await;
                return Err(SseError::PostStatus {
                    url: url.to_string(),
                    status,
                    body,
                });
            }
            // The answer itself comes on the event stream; the POST's body means nothing.
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.0.abort();
        self.incoming.close();
        Ok(())
    }
}

/// Aborts the reader task when dropped: a transport abandoned mid-connect (the connect
/// timeout fired) or dropped by rmcp must not leave the GET open.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

type Opened = (
    Url,
    mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    AbortOnDrop,
);

/// Sends the GET, checks the answer is an event stream, starts the reader and waits for the
/// endpoint it finds.
async fn open_stream(
    http: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
) -> Result<Opened, SseError> {
    let response = http
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|source| SseError::Get {
            url: url.to_string(),
            source,
        })?;
    let status = response.status();
    if !status.is_success() {
        let body = body_snippet(response).await;
        return Err(SseError::GetStatus {
            url: url.to_string(),
            status,
            body,
        });
    }
    // A missing Content-Type is tolerated; a wrong one (an HTML page at a mistyped path)
    // would otherwise only show up as a missing `endpoint` after the whole timeout.
    if let Some(content_type) = response.headers().get(CONTENT_TYPE) {
        let content_type = String::from_utf8_lossy(content_type.as_bytes()).into_owned();
        let mime = content_type.split(';').next().unwrap_or_default().trim();
        if !mime.eq_ignore_ascii_case("text/event-stream") {
            return Err(SseError::NotEventStream {
                url: url.to_string(),
                content_type,
            });
        }
    }
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (incoming_tx, incoming) = mpsc::channel(INCOMING_BUFFER);
    let reader = AbortOnDrop(tokio::spawn(read_stream(
        url.clone(),
        response,
        endpoint_tx,
        incoming_tx,
    )));
    let endpoint = match endpoint_rx.await {
        Ok(found) => found?,
        // The reader always answers before it ends; this is only a panic in it.
        Err(_) => {
            return Err(SseError::EndedBeforeEndpoint {
                url: url.to_string(),
                detail: String::new(),
            })
        }
    };
    Ok((endpoint, incoming, reader))
}

/// The reader task: decodes the stream, answers `endpoint_tx` once, forwards messages, and
/// ends (dropping `incoming`, which closes the transport) when the stream does.
async fn read_stream(
    url: Url,
    response: reqwest::Response,
    endpoint_tx: oneshot::Sender<Result<Url, SseError>>,
    incoming: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut body = response.bytes_stream();
    let ended_because = loop {
        let end = match body.next().await {
            Some(Ok(chunk)) => {
                decoder.push(&chunk, &mut events);
                // Past the decoder's buffer limit nothing more can be read: end the stream.
                decoder.overflow().map(|overflow| format!(": {overflow}"))
            }
            Some(Err(e)) => {
                decoder.finish(&mut events);
                Some(format!(": {e}"))
            }
            None => {
                decoder.finish(&mut events);
                Some(String::new())
            }
        };
        for event in events.drain(..) {
            if !on_event(&url, event, &mut endpoint_tx, &incoming).await {
                return;
            }
        }
        if let Some(detail) = end {
            break detail;
        }
    };
    tracing::debug!(%url, "MCP SSE stream ended{ended_because}");
    if let Some(tx) = endpoint_tx.take() {
        let _ = tx.send(Err(SseError::EndedBeforeEndpoint {
            url: url.to_string(),
            detail: ended_because,
        }));
    }
}

/// Handles one event; false means stop reading (the transport is gone or the endpoint was
/// unusable).
async fn on_event(
    url: &Url,
    event: SseEvent,
    endpoint_tx: &mut Option<oneshot::Sender<Result<Url, SseError>>>,
    incoming: &mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) -> bool {
    match event.event.as_deref() {
        Some("endpoint") => {
            let Some(tx) = endpoint_tx.take() else {
                tracing::debug!(%url, "MCP SSE: a second `endpoint` event ignored");
                return true;
            };
            let resolved = resolve_endpoint(url, event.data.trim());
            let usable = resolved.is_ok();
            let _ = tx.send(resolved);
            usable
        }
        // An event without a name is a `message` event (the SSE default).
        None | Some("message") => {
            if endpoint_tx.is_some() {
                // The spec sends `endpoint` first; nothing can be waiting for this yet.
                tracing::warn!(%url, "MCP SSE: a message before the `endpoint` event ignored");
                return true;
            }
            match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&event.data) {
                Ok(message) => incoming.send(message).await.is_ok(),
                Err(e) => {
                    // As rmcp's stdio transport does: one bad message does not end the session.
                    tracing::warn!(%url, "MCP SSE: a message that is not JSON-RPC ignored: {e}");
                    true
                }
            }
        }
        Some(other) => {
            tracing::debug!(%url, "MCP SSE: event {other:?} ignored");
            true
        }
    }
}

/// The endpoint's URL, relative ones resolved against the stream's URL. It must share the
/// stream's origin: the POSTs carry the configured headers (often credentials).
fn resolve_endpoint(url: &Url, data: &str) -> Result<Url, SseError> {
    let endpoint = url.join(data).map_err(|e| SseError::BadEndpoint {
        url: url.to_string(),
        data: data.to_string(),
        reason: e.to_string(),
    })?;
    if endpoint.origin() != url.origin() {
        return Err(SseError::ForeignEndpoint {
            url: url.to_string(),
            endpoint: endpoint.to_string(),
        });
    }
    Ok(endpoint)
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<HeaderMap, SseError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let bad = |reason: String| SseError::BadHeader {
            name: name.clone(),
            reason,
        };
        let header = HeaderName::try_from(name.as_str()).map_err(|e| bad(e.to_string()))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|e| bad(e.to_string()))?;
        map.insert(header, value);
    }
    Ok(map)
}

/// The start of an error response's body, as `": text"`, or nothing when it is empty.
async fn body_snippet(response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    let read = async {
        while body.len() < BODY_SNIPPET_BYTES {
            match stream.next().await {
                Some(Ok(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(BODY_SNIPPET_WAIT, read).await;
    body.truncate(BODY_SNIPPET_BYTES);
    let text = String::from_utf8_lossy(&body);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!(": {}", text.replace('\n', " "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn relative_and_absolute_endpoints_resolve_against_the_stream() {
        let stream = url("http://127.0.0.1:9/mcp/sse?x=1");
        let got = |data: &str| resolve_endpoint(&stream, data).map(|u| u.to_string());
        assert_eq!(
            got("/message?sessionId=a").ok().as_deref(),
            Some("http://127.0.0.1:9/message?sessionId=a")
        );
        assert_eq!(
            got("messages?sessionId=b").ok().as_deref(),
            Some("http://127.0.0.1:9/mcp/messages?sessionId=b")
        );
        assert_eq!(
            got("http://127.0.0.1:9/m?s=c").ok().as_deref(),
            Some("http://127.0.0.1:9/m?s=c")
        );
    }

    #[test]
    fn an_endpoint_on_another_origin_is_refused() {
        let stream = url("http://127.0.0.1:9/sse");
        for data in [
            "http://evil.example/m",
            "https://127.0.0.1:9/m",
            "http://127.0.0.1:10/m",
        ] {
            let err = resolve_endpoint(&stream, data).map(|u| u.to_string());
            assert!(
                matches!(err, Err(SseError::ForeignEndpoint { .. })),
                "{data}: {err:?}"
            );
        }
    }

    #[test]
    fn bad_header_names_and_values_are_named() {
        let headers = BTreeMap::from([("bad name".to_string(), "v".to_string())]);
        let err = header_map(&headers)
            .map(|_| ())
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_deref().is_some_and(|e| e.contains("bad name")),
            "{err:?}"
        );
        let headers = BTreeMap::from([("x-ok".to_string(), "line\nbreak".to_string())]);
        assert!(header_map(&headers).is_err());
    }
}
