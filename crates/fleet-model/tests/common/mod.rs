//! Helpers shared by the client tests: fast retry settings and a stream drainer that checks
//! the stream's contract (nothing after `Completed` or an error).
// Each test binary uses its own share of these.
#![allow(dead_code)]

use fleet_model::{
    HttpOptions, ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, RetryPolicy,
};
use futures::StreamExt;
use std::time::Duration;

/// Retry settings with tiny backoffs, so retry tests do not wait on our own delays.
pub fn options(max_attempts: u32) -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            ..RetryPolicy::default()
        },
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        first_token_timeout: Some(Duration::from_secs(10)),
    }
}

/// Drains a stream, returning every event before the end and the final outcome.
pub async fn run(
    client: &dyn ModelClient,
    req: ModelRequest,
) -> (Vec<ModelEvent>, Result<ModelResponse, ModelError>) {
    let mut stream = client.stream(req);
    let mut events = Vec::new();
    // Each item has a minute to come: the client's own limits end a stalled stream long
    // before; past that the client waits on nothing, and the test says so instead of hanging.
    let next = fleet_testkit::WAIT;
    while let Some(item) =
        fleet_testkit::within(next, "the stream's next item", stream.next()).await
    {
        match item {
            Ok(ModelEvent::Completed(done)) => {
                assert!(
                    fleet_testkit::within(next, "the stream's end", stream.next())
                        .await
                        .is_none(),
                    "nothing may follow Completed"
                );
                return (events, Ok(done));
            }
            Ok(event) => events.push(event),
            Err(e) => {
                assert!(
                    fleet_testkit::within(next, "the stream's end", stream.next())
                        .await
                        .is_none(),
                    "nothing may follow an error"
                );
                return (events, Err(e));
            }
        }
    }
    panic!("stream ended without Completed or an error");
}

/// `(attempt, delay)` of every retry announced.
pub fn retries(events: &[ModelEvent]) -> Vec<(u32, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Retry { attempt, delay, .. } => Some((*attempt, *delay)),
            _ => None,
        })
        .collect()
}

/// The text deltas joined, as a printer would have shown them.
pub fn streamed_text(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
