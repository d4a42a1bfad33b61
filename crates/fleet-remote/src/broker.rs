//! The connection to NATS and the JetStream pieces fleet uses, created on first use by
//! whoever connects first (caller or worker) and found as they are afterwards.
//!
//! A broker restart is survived by the client library: it reconnects without limit, and
//! JetStream calls made meanwhile fail with an error the caller retries. Only the first
//! connection fails fast, so a wrong URL is said at once.

use crate::error::RemoteError;
use crate::names;
use async_nats::jetstream::{self, consumer, kv, object_store, stream};
use std::time::Duration;

/// How long an unacknowledged job stays with a worker before JetStream gives it to another.
/// Workers renew it every [`Broker::progress_every`] while the job runs, so only a worker that
/// died (or lost the broker for this long) loses its job. `FLEET_REMOTE_ACK_WAIT_MS` sets it
/// (tests use a short one); it is fixed when the consumer is first made.
pub const DEFAULT_ACK_WAIT: Duration = Duration::from_secs(30);

/// How long a worker's heartbeat entry lives without renewal.
pub const WORKER_TTL: Duration = Duration::from_secs(30);

/// How long events and finished tasks' records are kept.
pub const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// A connected client with fleet's streams, buckets and consumer at hand.
#[derive(Clone)]
pub struct Broker {
    pub url: String,
    pub client: async_nats::Client,
    pub js: jetstream::Context,
    pub tasks: kv::Store,
    pub workers: kv::Store,
    pub bundles: object_store::ObjectStore,
    pub ack_wait: Duration,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker").field("url", &self.url).finish()
    }
}

impl Broker {
    /// Connects to `url` and makes sure the streams, buckets and the workers' consumer exist.
    pub async fn connect(url: &str) -> Result<Self, RemoteError> {
        let client = async_nats::ConnectOptions::new()
            .name("fleet")
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None)
            .connect(url)
            .await
            .map_err(|e| RemoteError::Connect {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        let js = jetstream::new(client.clone());
        let ack_wait = ack_wait_from_env();
        ensure_streams(&js).await?;
        let tasks = ensure_kv(&js, names::TASKS_BUCKET, KEEP_FOR).await?;
        let workers = ensure_kv(&js, names::WORKERS_BUCKET, WORKER_TTL).await?;
        let bundles = match js.get_object_store(names::BUNDLES_BUCKET).await {
            Ok(store) => store,
            Err(_) => js
                .create_object_store(object_store::Config {
                    bucket: names::BUNDLES_BUCKET.to_string(),
                    storage: stream::StorageType::File,
                    max_age: KEEP_FOR,
                    ..Default::default()
                })
                .await
                .map_err(|e| RemoteError::broker(names::BUNDLES_BUCKET, e))?,
        };
        let broker = Self {
            url: url.to_string(),
            client,
            js,
            tasks,
            workers,
            bundles,
            ack_wait,
        };
        broker.workers_consumer().await?;
        Ok(broker)
    }

    /// How often a worker renews a running job's delivery (a third of the ack wait).
    pub fn progress_every(&self) -> Duration {
        (self.ack_wait / 3).max(Duration::from_millis(100))
    }

    /// The shared pull consumer every worker takes jobs from.
    pub async fn workers_consumer(&self) -> Result<consumer::PullConsumer, RemoteError> {
        let stream = self
            .js
            .get_stream(names::JOBS_STREAM)
            .await
            .map_err(|e| RemoteError::broker(names::JOBS_STREAM, e))?;
        stream
            .get_or_create_consumer(
                names::WORKERS_CONSUMER,
                consumer::pull::Config {
                    durable_name: Some(names::WORKERS_CONSUMER.to_string()),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: self.ack_wait,
                    // Deliveries are counted by the worker against each job's own
                    // `max_deliver`, so it can fail the job with the reason.
                    max_deliver: -1,
                    max_ack_pending: 100_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| RemoteError::broker(names::WORKERS_CONSUMER, e))
    }
}

impl Broker {
    /// Deletes an ephemeral consumer its reader no longer needs, in the background. JetStream
    /// would drop it only after 30 s of inactivity, and a busy broker holding a reader per
    /// job for that long runs into its consumer limit.
    pub fn forget_consumer(&self, stream: &'static str, name: String) {
        let js = self.js.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(stream) = js.get_stream(stream).await {
                    let _ = stream.delete_consumer(&name).await;
                }
            });
        }
    }
}

/// A name for an ephemeral consumer, so that it can be deleted when its reader is done.
pub fn consumer_name(kind: &str) -> String {
    format!("{kind}-{}", uuid::Uuid::new_v4().simple())
}

/// The binary checks every typed variable at start, so a bad value never gets here; a
/// library caller with one gets the default.
fn ack_wait_from_env() -> Duration {
    fleet_protocol::env::FLEET_REMOTE_ACK_WAIT_MS
        .get()
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_ACK_WAIT)
}

async fn ensure_streams(js: &jetstream::Context) -> Result<(), RemoteError> {
    let streams = [
        stream::Config {
            name: names::JOBS_STREAM.to_string(),
            subjects: vec![names::JOBS_SUBJECT.to_string()],
            retention: stream::RetentionPolicy::WorkQueue,
            storage: stream::StorageType::File,
            ..Default::default()
        },
        stream::Config {
            name: names::EVENTS_STREAM.to_string(),
            subjects: vec![names::events_subject("*")],
            storage: stream::StorageType::File,
            max_age: KEEP_FOR,
            ..Default::default()
        },
        stream::Config {
            name: names::CONTROL_STREAM.to_string(),
            subjects: vec![names::control_subject("*")],
            storage: stream::StorageType::File,
            max_age: KEEP_FOR,
            ..Default::default()
        },
    ];
    for config in streams {
        let name = config.name.clone();
        js.get_or_create_stream(config)
            .await
            .map_err(|e| RemoteError::broker(name, e))?;
    }
    Ok(())
}

async fn ensure_kv(
    js: &jetstream::Context,
    bucket: &str,
    max_age: Duration,
) -> Result<kv::Store, RemoteError> {
    if let Ok(store) = js.get_key_value(bucket).await {
        return Ok(store);
    }
    js.create_key_value(kv::Config {
        bucket: bucket.to_string(),
        history: 1,
        max_age,
        storage: stream::StorageType::File,
        ..Default::default()
    })
    .await
    .map_err(|e| RemoteError::broker(bucket, e))
}
