//! The provider-neutral half of a streaming request: send, check the status, decode SSE, time
//! out when the server is slow to begin or goes quiet, and retry — but only while nothing has
//! reached the caller.
//!
//! Once a content event has been yielded, a failure is reported as it is: replaying the request
//! would show the user (and the agent loop) the same words twice.

mod failure;
mod options;

use crate::anthropic::preview;
use crate::client::ModelStream;
use crate::error::ModelError;
use crate::event::{ModelEvent, ModelResponse};
use crate::retry::parse_retry_after;
use crate::sse::{SseDecoder, SseEvent};
use failure::connect_error;
pub(crate) use failure::unreadable_body;
use fleet_protocol::AssistantMessage;
use futures::StreamExt;
pub(crate) use options::Host;
pub use options::{HttpOptions, LOCAL_FIRST_TOKEN_TIMEOUT, REMOTE_FIRST_TOKEN_TIMEOUT};
use reqwest::header::HeaderMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Model requests in flight at once in this process unless `FLEET_MAX_MODEL_REQUESTS` says
/// otherwise.
pub const DEFAULT_MAX_MODEL_REQUESTS: usize = 256;

/// The places for requests in flight, shared by every client of the process. A 10,000-agent
/// fan-out otherwise opens thousands of connections at once, each with its own buffers, and
/// its memory goes to sockets rather than agents; 256 streams keep any server (and the API's
/// concurrency limits) busy. A request waits for a place before its first-token clock starts
/// (its wait is bounded by the requests ahead of it, each bounded by its own timeouts), holds
/// it for one attempt, and gives it back before a retry's backoff.
fn in_flight() -> &'static Semaphore {
    static PLACES: OnceLock<Semaphore> = OnceLock::new();
    PLACES.get_or_init(|| Semaphore::new(max_in_flight()))
}

/// How many model requests this process has in flight at most: `FLEET_MAX_MODEL_REQUESTS`, or
/// [`DEFAULT_MAX_MODEL_REQUESTS`]. Public so that what waits for these places (the subagents
/// a fan-out builds) can be sized to them.
pub fn max_in_flight() -> usize {
    // The variable was checked at start-up (`env::check_all`); a bad value cannot get here.
    fleet_protocol::env::FLEET_MAX_MODEL_REQUESTS
        .get()
        .ok()
        .flatten()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(DEFAULT_MAX_MODEL_REQUESTS)
        .max(1)
}

/// Turns one wire protocol's SSE events into model events. A fresh decoder is made for every
/// attempt. Public so that recorded streams can be replayed (and benchmarked) without a server.
pub trait WireDecoder: Send + 'static {
    /// Handles one event, appending what the caller should see to `out`. Returns the
    /// assembled reply once the protocol says the response is complete.
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError>;

    /// The stream ended; a protocol whose end marker is optional may still complete here.
    fn on_eof(
        &mut self,
        _out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        Ok(None)
    }
    /// The server ignored `stream: true` and sent the whole reply as one JSON document (some
    /// proxies and local servers do). Emits the events a stream would have carried.
    fn on_whole_body(
        &mut self,
        body: &[u8],
        _out: &mut Vec<ModelEvent>,
    ) -> Result<AssistantMessage, ModelError> {
        Err(ModelError::Protocol(format!(
            "expected an event stream but got a JSON document: {}",
            preview(&String::from_utf8_lossy(body))
        )))
    }
}

/// How one provider's transport differs from another's.
pub(crate) struct Wire<F> {
    pub provider: &'static str,
    pub url: String,
    /// Makes the decoder for one attempt (it may carry what it needs of the request).
    pub new_decoder: F,
    /// Builds the error for a non-2xx answer from its status, headers, body and the URL.
    pub api_error: fn(u16, &HeaderMap, &[u8], &str) -> ModelError,
}

/// Runs `build` (one HTTP request per attempt) under the retry policy and streams the result.
pub(crate) fn stream<D, F, B>(
    http: reqwest::Client,
    options: HttpOptions,
    wire: Wire<F>,
    build: B,
) -> ModelStream
where
    D: WireDecoder,
    F: Fn() -> D + Send + 'static,
    B: Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + 'static,
{
    Box::pin(async_stream::stream! {
        let started = Instant::now();
        let policy_attempts = options.retry.max_attempts.max(1);
        let idle = options.idle_timeout;
        let host = Host::of(&wire.url);
        let first_token = options.first_token_limit(host);
        let too_slow = || ModelError::FirstTokenTimeout { after: first_token, local: host.local };
        let mut attempt: u32 = 1;
        let mut empty_in_a_row: u32 = 0;
        loop {
            let mut content_seen = false;
            // Held for this attempt; never closed, so `acquire` only waits.
            let place = in_flight().acquire().await.ok();
            let deadline = tokio::time::Instant::now() + first_token;
            let failure = match tokio::time::timeout_at(deadline, build(&http).send()).await {
                Err(_) => too_slow(),
                Ok(Err(e)) => connect_error(wire.provider, &wire.url, host, e),
                Ok(Ok(response)) if !response.status().is_success() => {
                    let status = response.status().as_u16();
                    let headers = response.headers().clone();
                    let body = match tokio::time::timeout(idle, response.bytes()).await {
                        Ok(Ok(body)) => body.to_vec(),
                        _ => Vec::new(),
                    };
                    (wire.api_error)(status, &headers, &body, &wire.url)
                }
                Ok(Ok(response)) if is_json(response.headers()) => {
                    let request_id = request_id(response.headers());
                    match whole_body(response, deadline, (wire.new_decoder)()).await {
                        Ok((events, message)) => {
                            for event in events {
                                yield Ok(event);
                            }
                            drop(place);
                            yield Ok(completed(message, request_id, attempt, started));
                            return;
                        }
                        Err(None) => too_slow(),
                        Err(Some(e)) => e,
                    }
                }
                Ok(Ok(response)) => {
                    let request_id = request_id(response.headers());
                    let mut body = response.bytes_stream();
                    let mut sse = SseDecoder::new();
                    let mut decoder = (wire.new_decoder)();
                    let mut events = Vec::new();
                    let mut out = Vec::new();
                    // Until the first event the first-token deadline applies; after it, the
                    // idle limit between chunks. Comments (keep-alives) are not events.
                    let mut begun = false;
                    loop {
                        let limit = if begun { tokio::time::Instant::now() + idle } else { deadline };
                        let eof = match tokio::time::timeout_at(limit, body.next()).await {
                            Err(_) if begun => break ModelError::IdleTimeout(idle),
                            Err(_) => break too_slow(),
                            Ok(Some(Err(e))) => break ModelError::StreamInterrupted {
                                when: stage(content_seen),
                                message: failure::describe_reqwest(e),
                            },
                            Ok(Some(Ok(chunk))) => {
                                sse.push(&chunk, &mut events);
                                false
                            }
                            Ok(None) => {
                                sse.finish(&mut events);
                                true
                            }
                        };
                        begun |= !events.is_empty();
                        let mut done = None;
                        let mut error = None;
                        for event in events.drain(..) {
                            match decoder.on_event(event, &mut out) {
                                Ok(Some(message)) => done = Some(message),
                                Ok(None) => {}
                                Err(e) => {
                                    error = Some(e);
                                    break;
                                }
                            }
                        }
                        if eof && done.is_none() && error.is_none() {
                            match decoder.on_eof(&mut out) {
                                Ok(message) => done = message,
                                Err(e) => error = Some(e),
                            }
                        }
                        for event in out.drain(..) {
                            content_seen |= event.is_content();
                            yield Ok(event);
                        }
                        if let Some(e) = error {
                            break e;
                        }
                        // A line or event past the decoder's bound: the decoder has stopped
                        // (its buffers freed); waiting for more would only wait.
                        if let (Some(overflow), None) = (sse.overflow(), &done) {
                            break ModelError::Protocol(overflow.to_string());
                        }
                        if let Some(message) = done {
                            drop(place);
                            yield Ok(completed(message, request_id, attempt, started));
                            return;
                        }
                        if eof && !begun {
                            break ModelError::EmptyStream {
                                url: wire.url.clone(),
                                times: empty_in_a_row + 1,
                            };
                        }
                        if eof {
                            break ModelError::StreamInterrupted {
                                when: stage(content_seen),
                                message: "the server closed the stream before the end of the message".into(),
                            };
                        }
                    }
                }
            };
            empty_in_a_row = match failure {
                ModelError::EmptyStream { times, .. } => times,
                _ => 0,
            };
            // The place goes back before the caller hears the end, and before any backoff.
            drop(place);
            if content_seen || !failure::worth_retrying(&failure) {
                yield Err(failure);
                return;
            }
            let max_attempts = failure::attempt_limit(&failure, policy_attempts);
            if attempt >= max_attempts {
                yield Err(if attempt > 1 {
                    ModelError::RetriesExhausted { attempts: attempt, last: Box::new(failure) }
                } else {
                    failure
                });
                return;
            }
            let delay = failure::delay(&failure, &options.retry, attempt);
            attempt += 1;
            tracing::debug!(provider = wire.provider, attempt, ?delay, "retrying: {failure}");
            yield Ok(ModelEvent::Retry { attempt, max_attempts, delay, reason: failure.to_string(), status: failure.status() });
            tokio::time::sleep(delay).await;
        }
    })
}

fn completed(
    message: AssistantMessage,
    request_id: Option<String>,
    attempts: u32,
    started: Instant,
) -> ModelEvent {
    ModelEvent::Completed(ModelResponse {
        message,
        request_id,
        attempts,
        duration: started.elapsed(),
    })
}

/// Where in the reply a stream broke, for `StreamInterrupted`.
fn stage(content_seen: bool) -> &'static str {
    if content_seen {
        "after part of the reply arrived"
    } else {
        "before any content"
    }
}

/// Reads a reply sent as one JSON document and turns it into the events a stream would carry.
/// `Err(None)`: the body did not arrive before `deadline`.
async fn whole_body<D: WireDecoder>(
    response: reqwest::Response,
    deadline: tokio::time::Instant,
    mut decoder: D,
) -> Result<(Vec<ModelEvent>, AssistantMessage), Option<ModelError>> {
    let body = match tokio::time::timeout_at(deadline, response.bytes()).await {
        Err(_) => return Err(None),
        Ok(Err(e)) => {
            return Err(Some(ModelError::StreamInterrupted {
                when: stage(false),
                message: failure::describe_reqwest(e),
            }))
        }
        Ok(Ok(body)) => body,
    };
    let mut events = Vec::new();
    let message = decoder.on_whole_body(&body, &mut events).map_err(Some)?;
    Ok((events, message))
}

/// A successful answer that is JSON rather than `text/event-stream`.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok().map(str::to_owned))
}

/// The server's requested wait, from the standard and Anthropic-specific headers.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    parse_retry_after(get("retry-after-ms"), get("retry-after"))
}

/// Joins a base URL and an API path, accepting bases written with or without a trailing `/v1`
/// (Anthropic's convention omits it, OpenAI's includes it).
pub(crate) fn endpoint(base: &str, path_after_v1: &str) -> Result<String, ModelError> {
    let base = base.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(base)
        .map_err(|e| ModelError::Config(format!("base URL `{base}` is not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ModelError::Config(format!(
            "base URL `{base}` must start with http:// or https://"
        )));
    }
    let base = base.strip_suffix("/v1").unwrap_or(base);
    Ok(format!("{base}/v1/{path_after_v1}"))
}

#[cfg(test)]
mod tests {
    use super::endpoint;

    #[test]
    fn endpoint_accepts_both_base_conventions() {
        let want = "http://127.0.0.1:8000/v1/chat/completions";
        assert_eq!(
            endpoint("http://127.0.0.1:8000", "chat/completions")
                .ok()
                .as_deref(),
            Some(want)
        );
        assert_eq!(
            endpoint("http://127.0.0.1:8000/v1/", "chat/completions")
                .ok()
                .as_deref(),
            Some(want)
        );
        assert!(endpoint("127.0.0.1:8000", "messages").is_err());
        assert!(endpoint("ftp://x", "messages").is_err());
    }
}
