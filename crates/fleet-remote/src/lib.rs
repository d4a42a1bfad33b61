//! Remote agents and Ultraplan on NATS JetStream.
//!
//! When one machine is not enough, agents run on worker machines. Everything between the
//! caller and the workers goes through a NATS server with JetStream; there is no home-made
//! broker and no file shared across machines:
//!
//! | what | JetStream piece | module |
//! |---|---|---|
//! | jobs waiting for a worker | `FLEET_JOBS`, a work-queue stream with one shared pull consumer | [`broker`], [`job`] |
//! | what a job's agent did (replayable) | `FLEET_EVENTS`, subject `fleet.events.<task>` | [`worker`], [`client`], [`event`] |
//! | stop, approve, reject, teleport | `FLEET_CONTROL`, subject `fleet.control.<task>` | [`record::Control`] |
//! | task state, workers' heartbeats | KV buckets `fleet_tasks`, `fleet_workers` | [`record`] |
//! | repository snapshots and result branches | object store `fleet_bundles` | [`bundle`] |
//!
//! Jobs are signed with the submitting user's Ed25519 key and run only by workers that trust
//! it, within the worker's own maximum permission mode ([`signing`], [`worker`]).
//!
//! The caller's side ([`client::Remote`], and [`launcher`] for the runtime's
//! `isolation: "remote"`) publishes a job and follows it; a worker ([`worker`]) pulls jobs and
//! runs each as an ordinary `fleet` process in a fresh checkout, driving it over the Agent
//! SDK's control protocol. [`ultraplan`] is remote planning built on the same jobs.

pub mod broker;
pub mod bundle;
pub mod client;
pub mod error;
pub mod event;
pub mod job;
pub mod launcher;
pub mod names;
pub mod record;
pub mod signing;
pub mod ultraplan;
pub mod worker;

pub use broker::Broker;
pub use client::Remote;
pub use error::RemoteError;
pub use event::{EventLine, RemoteState, WorkerEvent};
pub use job::{AgentSpec, Job, JobKind, RepoRef};
pub use record::{Control, TaskRecord, TaskState, WorkerRecord};

/// Milliseconds since the Unix epoch (what records and latencies are measured in).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}
