//! Remote jobs as the broker records them, merged into the sessions that launched them.
//!
//! A session learns of its remote jobs from its own events (`TaskStarted` of a
//! `remote_agent`, live) or its transcript (`remote_launched`, from the store), but neither
//! says which worker runs a job or which delivery it is: only the broker's task records do.
//! This crate stays free of NATS, so the caller (the CLI, which reads the broker) hands the
//! records over as [`RemoteJob`]s with [`Hub::set_remote_jobs`].
//!
//! # The merge rule
//!
//! - A record whose `id` (the task id) is a remote job a session already knows updates that
//!   job: `worker` (kept when the record has none), `attempt`, `state` and `description`
//!   (kept when the record has none). The job's `agent_id` is the session's and stays.
//! - A record no session knows is left out: a broker is shared by every user and session
//!   that reaches it, and its records do not say which session launched a job, so showing
//!   them would put strangers' jobs into a session.
//! - A job a session knows but the records lack (not published yet, or expired from the
//!   bucket) stays as it is.
//! - Only a job that actually changes is marked, so handing over the same records again
//!   costs no batch.

use std::collections::HashMap;

use super::Hub;
use crate::api::RemoteJob;

impl Hub {
    /// Merges the broker's task records into every session that knows the job (see the
    /// module's rule). Pass every record the broker holds; records of jobs no session knows
    /// are ignored.
    pub fn set_remote_jobs(&self, jobs: Vec<RemoteJob>) {
        if jobs.is_empty() {
            return;
        }
        let by_id: HashMap<&str, &RemoteJob> = jobs.iter().map(|j| (j.id.as_str(), j)).collect();
        for shared in self.inner.all() {
            // Only a changed job marks the session, so an unchanged one queues no batch.
            self.inner.edit(&shared, |m| {
                for (id, record) in &by_id {
                    let Some(known) = m.remote_job(id) else {
                        continue;
                    };
                    let merged = merge(known, record);
                    if merged != *known {
                        *m.remote_job_mut(id) = merged;
                    }
                }
            });
        }
    }
}

/// `known` updated by the broker's `record` of the same job.
fn merge(known: &RemoteJob, record: &RemoteJob) -> RemoteJob {
    RemoteJob {
        id: known.id.clone(),
        agent_id: known.agent_id.clone(),
        worker: record.worker.clone().or_else(|| known.worker.clone()),
        attempt: record.attempt,
        state: record.state.clone(),
        description: record
            .description
            .clone()
            .or_else(|| known.description.clone()),
    }
}
