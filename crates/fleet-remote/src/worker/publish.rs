//! A job's events and record on the broker. Events go out in order, each publish awaited
//! until JetStream has stored it and retried while the broker is away (a message id makes a
//! retry of a stored event a no-op), so nothing a client was told about is lost. The record is
//! written at state changes and, for the events count, at most about once a second.
//!
//! # Back-pressure
//!
//! What waits for the broker is bounded ([`Limits`]: lines and bytes). When a broker outage
//! fills the queue, [`Events::line`] waits for room; the session then stops reading the
//! agent's stdout, the pipe fills and the agent's own writes block. An outage slows the job
//! instead of growing the worker's memory, and nothing is dropped. The pause is said twice:
//! on the worker's stderr when it starts and ends, and to the job's followers as an
//! `{"type":"fleet_remote","event":"output_paused",…}` line once the broker takes events again.

use crate::broker::Broker;
use crate::event::{EventLine, WorkerEvent};
use crate::names;
use crate::record::TaskRecord;
use async_nats::jetstream::message::PublishMessage;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest pause between two tries of a publish or a record write.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How long a writer waits for room before the pause is said: shorter waits are the queue
/// doing its job while the broker is slow, not news.
pub const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// How much of a job's output may wait for the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lines queued; one more may be with the broker, unacknowledged.
    pub lines: usize,
    /// Bytes of those lines. A single line longer than this still goes, alone.
    pub bytes: usize,
}

impl Limits {
    /// About a minute of a busy agent's output, and at most 8 MiB of it per job.
    pub const DEFAULT: Self = Self {
        lines: 1024,
        bytes: 8 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Counters of one attempt's queue, readable while it runs (the tests' view, and the numbers
/// the pause notices quote).
#[derive(Debug, Default)]
pub struct Gauge {
    sent: AtomicU64,
    stored: AtomicU64,
    peak: AtomicU64,
    pauses: AtomicU64,
    reported: AtomicU64,
}

impl Gauge {
    /// Lines queued or with the broker, not yet stored.
    pub fn queued(&self) -> u64 {
        let stored = self.stored.load(Ordering::Acquire);
        self.sent.load(Ordering::Acquire).saturating_sub(stored)
    }

    /// The most [`queued`](Self::queued) has been.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }

    /// How many times the queue was full and the job's output held back.
    pub fn pauses(&self) -> u64 {
        self.pauses.load(Ordering::Acquire)
    }

    /// How many of those pauses lasted past [`NOTICE_AFTER`] and were said (stderr, and an
    /// `output_paused` event).
    pub fn reported(&self) -> u64 {
        self.reported.load(Ordering::Acquire)
    }

    /// Lines stored by JetStream.
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::Acquire)
    }
}

/// A line's claim on the queue, given back once JetStream stored it (or gave up on it).
struct Room {
    _line: OwnedSemaphorePermit,
    _bytes: OwnedSemaphorePermit,
}

/// One job attempt's event stream.
pub struct Events {
    lines: mpsc::UnboundedSender<(String, Room)>,
    line_room: Arc<Semaphore>,
    byte_room: Arc<Semaphore>,
    limits: Limits,
    task_id: String,
    /// How many were queued so far.
    sent: u64,
    /// How many were stored so far.
    stored: watch::Receiver<u64>,
    gauge: Arc<Gauge>,
    task: JoinHandle<()>,
}

impl Events {
    /// Starts publishing to `fleet.events.<task>` with the attempt header. `stop` abandons
    /// what is not yet stored (the job goes back to the queue then, and runs again).
    pub fn start(broker: &Broker, task_id: &str, attempt: u32, stop: CancellationToken) -> Self {
        Self::start_with(broker, task_id, attempt, stop, Limits::DEFAULT)
    }

    /// [`start`](Self::start) with other bounds on what may wait for the broker.
    pub fn start_with(
        broker: &Broker,
        task_id: &str,
        attempt: u32,
        stop: CancellationToken,
        limits: Limits,
    ) -> Self {
        let limits = Limits {
            lines: limits.lines.clamp(1, Semaphore::MAX_PERMITS),
            bytes: limits.bytes.clamp(1, u32::MAX as usize),
        };
        // The queue itself is unbounded: every item holds a line's and its bytes' permits,
        // which bound it.
        let (tx, mut rx) = mpsc::unbounded_channel::<(String, Room)>();
        let (counter, stored) = watch::channel(0u64);
        let line_room = Arc::new(Semaphore::new(limits.lines));
        let byte_room = Arc::new(Semaphore::new(limits.bytes));
        let gauge = Arc::new(Gauge::default());
        let js = broker.js.clone();
        let subject = names::events_subject(task_id);
        let id_prefix = format!("{task_id}.{attempt}.");
        let (rooms, seen) = ([line_room.clone(), byte_room.clone()], gauge.clone());
        let task = tokio::spawn(async move {
            let mut n: u64 = 0;
            while let Some((line, room)) = rx.recv().await {
                n += 1;
                let message = PublishMessage::build()
                    .payload(line.into())
                    .header(names::ATTEMPT_HEADER, attempt.to_string().as_str())
                    .message_id(format!("{id_prefix}{n}"));
                if !publish(&js, &subject, message, &stop).await {
                    break;
                }
                seen.stored.store(n, Ordering::Release);
                counter.send_replace(n);
                drop(room);
            }
            // Nothing more is stored: a writer waiting for room stops waiting.
            for room in rooms {
                room.close();
            }
        });
        Self {
            lines: tx,
            line_room,
            byte_room,
            limits,
            task_id: task_id.to_string(),
            sent: 0,
            stored,
            gauge,
            task,
        }
    }

    /// The queue's counters.
    pub fn gauge(&self) -> Arc<Gauge> {
        self.gauge.clone()
    }

    /// Queues one line (a child's stdout line, as it came). While the queue is full this
    /// waits for the broker to take some; that is the back-pressure on the job's process.
    pub async fn line(&mut self, line: String) {
        let weight = line.len().clamp(1, self.limits.bytes) as u32;
        let room = match self.try_room(weight) {
            Ok(room) => room,
            Err(TryAcquireError::Closed) => return,
            Err(TryAcquireError::NoPermits) => {
                self.gauge.pauses.fetch_add(1, Ordering::AcqRel);
                let (held, queued) = (Instant::now(), self.gauge.queued());
                // A short wait is flow control as usual; a long one is said.
                let waited = tokio::time::timeout(NOTICE_AFTER, self.room(weight)).await;
                let room = match waited {
                    Ok(room) => room,
                    Err(_) => {
                        let room = self.held_back(weight, held, queued).await;
                        if let Some(room) = room {
                            self.push(line, room);
                            self.notice(held, queued).await;
                        }
                        return;
                    }
                };
                let Some(room) = room else { return };
                room
            }
        };
        self.push(line, room);
    }

    /// Queues one of the worker's own `{"type":"fleet_remote",…}` lines.
    pub async fn own(&mut self, event: WorkerEvent) {
        self.line(EventLine::from(event).to_json()).await;
    }

    pub fn stored(&self) -> u64 {
        *self.stored.borrow()
    }

    /// Waits until everything queued so far is stored (or abandoned by `stop`).
    pub async fn flush(&mut self) {
        let sent = self.sent;
        // An error: the publisher stopped, and nothing more will be stored.
        let _ = self.stored.wait_for(|stored| *stored >= sent).await;
    }

    /// Waits for room past [`NOTICE_AFTER`], saying so on the worker's stderr.
    async fn held_back(&self, weight: u32, since: Instant, queued: u64) -> Option<Room> {
        self.gauge.reported.fetch_add(1, Ordering::AcqRel);
        eprintln!(
            "fleet worker: {}: the broker has not stored the last {queued} events; the agent's \
             output is held back until it does",
            self.task_id,
        );
        let room = self.room(weight).await;
        if room.is_some() {
            eprintln!(
                "fleet worker: {}: the broker takes events again; the agent's output was held \
                 back for {:.1} s",
                self.task_id,
                since.elapsed().as_secs_f64()
            );
        }
        room
    }

    /// Tells the job's followers the output was held back, and for how long.
    async fn notice(&mut self, since: Instant, queued: u64) {
        let paused_ms = since.elapsed().as_millis() as u64;
        let line = EventLine::from(WorkerEvent::OutputPaused {
            queued,
            paused_ms,
            message: format!(
                "the broker did not take events: the agent's output was held back for {:.1} s \
                 (nothing was lost)",
                paused_ms as f64 / 1000.0
            ),
        })
        .to_json();
        let weight = line.len().clamp(1, self.limits.bytes) as u32;
        if let Some(room) = self.room(weight).await {
            self.push(line, room);
        }
    }

    fn try_room(&self, weight: u32) -> Result<Room, TryAcquireError> {
        let line = self.line_room.clone().try_acquire_owned()?;
        let bytes = self.byte_room.clone().try_acquire_many_owned(weight)?;
        Ok(Room {
            _line: line,
            _bytes: bytes,
        })
    }

    /// Room for a line of `weight` bytes, once there is; `None` when the publisher stopped.
    /// One writer only (`&mut self`), so waiting on one bound while holding the other
    /// cannot deadlock.
    async fn room(&self, weight: u32) -> Option<Room> {
        let line = self.line_room.clone().acquire_owned().await.ok()?;
        let bytes = self
            .byte_room
            .clone()
            .acquire_many_owned(weight)
            .await
            .ok()?;
        Some(Room {
            _line: line,
            _bytes: bytes,
        })
    }

    fn push(&mut self, line: String, room: Room) {
        if self.lines.send((line, room)).is_ok() {
            self.sent += 1;
            self.gauge.sent.store(self.sent, Ordering::Release);
            self.gauge
                .peak
                .fetch_max(self.gauge.queued(), Ordering::AcqRel);
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Publishes until JetStream acknowledges it; `false` when `stop` fired first.
async fn publish(
    js: &async_nats::jetstream::Context,
    subject: &str,
    message: PublishMessage,
    stop: &CancellationToken,
) -> bool {
    let mut backoff = Duration::from_millis(50);
    loop {
        let attempt = async {
            let ack = js
                .send_publish(subject.to_string(), message.clone())
                .await
                .map_err(|e| e.to_string())?;
            ack.await.map(|_| ()).map_err(|e| e.to_string())
        };
        let outcome = tokio::select! {
            outcome = attempt => outcome,
            () = stop.cancelled() => return false,
        };
        match outcome {
            Ok(()) => return true,
            Err(err) => {
                tracing::debug!("publishing to {subject}: {err}; retrying");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => return false,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Writes `record` under its task id, retrying while the broker is away; `false` when `stop`
/// fired first.
pub async fn put_record(broker: &Broker, record: &TaskRecord, stop: &CancellationToken) -> bool {
    let Ok(bytes) = serde_json::to_vec(record) else {
        return false;
    };
    let mut backoff = Duration::from_millis(50);
    loop {
        let put = broker.tasks.put(&record.task_id, bytes.clone().into());
        let outcome = tokio::select! {
            outcome = put => outcome,
            () = stop.cancelled() => return false,
        };
        match outcome {
            Ok(_) => return true,
            Err(err) => {
                tracing::debug!("writing the record of {}: {err}; retrying", record.task_id);
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => return false,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Reads a task's record; `Ok(None)` when there is none.
pub async fn get_record(
    broker: &Broker,
    task_id: &str,
) -> Result<Option<TaskRecord>, crate::RemoteError> {
    let Some(bytes) = broker
        .tasks
        .get(task_id)
        .await
        .map_err(|e| crate::RemoteError::broker(names::TASKS_BUCKET, e))?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| crate::RemoteError::malformed("task record", e))
}
