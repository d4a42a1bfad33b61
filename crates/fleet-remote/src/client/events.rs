//! Reading a task's events from `FLEET_EVENTS`: from the start (or after a sequence), then
//! live, through an ordered consumer made again from the last sequence seen whenever the
//! broker goes away.

use super::retry::{retrying, PAUSE};
use super::{Remote, RemoteEvent};
use crate::error::RemoteError;
use crate::names;
use async_nats::jetstream::consumer::pull::{Ordered, OrderedConfig};
use async_nats::jetstream::consumer::DeliverPolicy;
use futures::stream::BoxStream;
use futures::StreamExt;

/// Where a reader is: its consumer's messages, and the last sequence it handed out.
struct Reader {
    remote: Remote,
    subject: String,
    last_seq: u64,
    /// The open consumer's messages and its name (deleted when it is replaced or done).
    messages: Option<(Ordered, String)>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.close();
    }
}

impl Remote {
    /// The task's events from the start (or after `after_seq`), then live ones as they come;
    /// survives a broker restart.
    pub async fn events(
        &self,
        task_id: &str,
        after_seq: u64,
    ) -> Result<BoxStream<'static, Result<RemoteEvent, RemoteError>>, RemoteError> {
        names::check_task_id(task_id)?;
        let mut reader = Reader {
            remote: self.clone(),
            subject: names::events_subject(task_id),
            last_seq: after_seq,
            messages: None,
        };
        // The first consumer is made here, so a broker that is not there is said at once.
        reader.messages = Some(open(self, &reader.subject, after_seq).await?);
        Ok(futures::stream::unfold(reader, |mut reader| async move {
            let item = reader.next().await;
            Some((item, reader))
        })
        .boxed())
    }

    /// The events published so far (`fleet remote logs`).
    pub async fn logs(&self, task_id: &str) -> Result<Vec<RemoteEvent>, RemoteError> {
        names::check_task_id(task_id)?;
        let subject = names::events_subject(task_id);
        let mut config = ordered(&subject, 0);
        let name = crate::broker::consumer_name("logs");
        config.name = Some(name.clone());
        let consumer = retrying(names::EVENTS_STREAM, || {
            self.broker
                .js
                .create_consumer_on_stream(config.clone(), names::EVENTS_STREAM)
        })
        .await?;
        let read = read_pending(consumer).await;
        self.broker.forget_consumer(names::EVENTS_STREAM, name);
        read
    }
}

/// Everything `consumer` holds now, then stops.
async fn read_pending(
    consumer: async_nats::jetstream::consumer::Consumer<OrderedConfig>,
) -> Result<Vec<RemoteEvent>, RemoteError> {
    let mut pending = consumer.cached_info().num_pending;
    let mut events = Vec::new();
    if pending == 0 {
        return Ok(events);
    }
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| RemoteError::broker(names::EVENTS_STREAM, e))?;
    while pending > 0 {
        let Some(message) = messages.next().await else {
            break;
        };
        let message = message.map_err(|e| RemoteError::broker(names::EVENTS_STREAM, e))?;
        let (event, left) = decode(&message)?;
        pending = left;
        events.push(event);
    }
    Ok(events)
}

/// An ordered consumer's messages, `subject` after `after_seq`, and its name.
async fn open(
    remote: &Remote,
    subject: &str,
    after_seq: u64,
) -> Result<(Ordered, String), RemoteError> {
    let mut config = ordered(subject, after_seq);
    let name = crate::broker::consumer_name("events");
    config.name = Some(name.clone());
    let js = &remote.broker.js;
    let messages = retrying(names::EVENTS_STREAM, || async {
        js.create_consumer_on_stream(config.clone(), names::EVENTS_STREAM)
            .await
            .map_err(|e| e.to_string())?
            .messages()
            .await
            .map_err(|e| e.to_string())
    })
    .await?;
    Ok((messages, name))
}

impl Reader {
    /// Lets go of the open consumer (it is made again from the last event seen).
    fn close(&mut self) {
        if let Some((_, name)) = self.messages.take() {
            self.remote
                .broker
                .forget_consumer(names::EVENTS_STREAM, name);
        }
    }

    /// The next event. A consumer that fails or ends is made again after the last event
    /// handed out, so nothing is skipped and nothing is seen twice.
    async fn next(&mut self) -> Result<RemoteEvent, RemoteError> {
        loop {
            let messages = match self.messages.as_mut() {
                Some((messages, _)) => messages,
                None => {
                    let opened = open(&self.remote, &self.subject, self.last_seq).await?;
                    &mut self.messages.insert(opened).0
                }
            };
            match messages.next().await {
                Some(Ok(message)) => {
                    let (event, _) = decode(&message)?;
                    if event.seq <= self.last_seq {
                        continue;
                    }
                    self.last_seq = event.seq;
                    return Ok(event);
                }
                Some(Err(err)) => {
                    tracing::debug!(
                        "{}: {err}; reading again from {}",
                        self.subject,
                        self.last_seq
                    );
                    self.close();
                    tokio::time::sleep(PAUSE).await;
                }
                None => {
                    self.close();
                    tokio::time::sleep(PAUSE).await;
                }
            }
        }
    }
}

/// An ordered consumer of `subject` from just after `after_seq` (from the start at 0).
fn ordered(subject: &str, after_seq: u64) -> OrderedConfig {
    OrderedConfig {
        filter_subject: subject.to_string(),
        deliver_policy: if after_seq == 0 {
            DeliverPolicy::All
        } else {
            DeliverPolicy::ByStartSequence {
                start_sequence: after_seq + 1,
            }
        },
        ..Default::default()
    }
}

/// The event a message carries, and how many more the consumer has after it.
fn decode(message: &async_nats::jetstream::Message) -> Result<(RemoteEvent, u64), RemoteError> {
    let info = message
        .info()
        .map_err(|e| RemoteError::malformed("event's delivery info", e))?;
    let attempt = message
        .headers
        .as_ref()
        .and_then(|h| h.get(names::ATTEMPT_HEADER))
        .and_then(|v| v.as_str().trim().parse::<u32>().ok())
        .unwrap_or(1);
    let line = serde_json::from_slice(&message.payload)
        .map_err(|e| RemoteError::malformed("event line", e))?;
    Ok((
        RemoteEvent {
            seq: info.stream_sequence,
            attempt,
            line,
        },
        info.pending,
    ))
}
