//! The names on the bus, in one place: streams, subjects, consumers and buckets.

/// The work queue of jobs; one message per job, removed when a worker acknowledges it.
pub const JOBS_STREAM: &str = "FLEET_JOBS";
pub const JOBS_SUBJECT: &str = "fleet.jobs";
/// The one durable pull consumer all workers share, so each job goes to one worker.
pub const WORKERS_CONSUMER: &str = "fleet-workers";

/// What jobs' agents did, kept so a client that reconnects replays what it missed.
pub const EVENTS_STREAM: &str = "FLEET_EVENTS";
/// Stop and plan decisions for a task, kept so a worker that reconnects still gets them.
pub const CONTROL_STREAM: &str = "FLEET_CONTROL";

/// Task state (`TaskRecord` per task id).
pub const TASKS_BUCKET: &str = "fleet_tasks";
/// Workers' heartbeats (`WorkerRecord` per worker id); entries expire when not renewed.
pub const WORKERS_BUCKET: &str = "fleet_workers";
/// Repository bundles in, result bundles out.
pub const BUNDLES_BUCKET: &str = "fleet_bundles";

/// The header a job's event carries: which delivery of the job produced it.
pub const ATTEMPT_HEADER: &str = "Fleet-Attempt";

/// `fleet.events.<task>`.
pub fn events_subject(task_id: &str) -> String {
    format!("fleet.events.{task_id}")
}

/// `fleet.control.<task>`.
pub fn control_subject(task_id: &str) -> String {
    format!("fleet.control.{task_id}")
}

/// The object holding a repository snapshot: one per snapshot commit.
pub fn repo_object(snapshot: &str) -> String {
    format!("repo-{snapshot}.bundle")
}

/// The object holding a job's result branch.
pub fn result_object(task_id: &str) -> String {
    format!("result-{task_id}.bundle")
}

/// The local branch a job's changes arrive on: `fleet/remote-<id8>`, the first 8 hex digits
/// of the task id (after its `r`).
pub fn result_branch(task_id: &str) -> String {
    let short: String = task_id.trim_start_matches('r').chars().take(8).collect();
    format!("fleet/remote-{short}")
}

/// Whether `id` is a remote task id (`r` and 16 lowercase hex digits). Ids become subject
/// tokens, KV keys, object names, branch names and folder names, so one that is anything else
/// (`a.>`, `../x`) is refused wherever it comes in from outside.
pub fn is_task_id(id: &str) -> bool {
    id.len() == 17
        && id.starts_with('r')
        && id[1..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The error for an id that is not one.
pub fn check_task_id(id: &str) -> Result<(), crate::RemoteError> {
    if is_task_id(id) {
        return Ok(());
    }
    Err(crate::RemoteError::NotATaskId(id.to_string()))
}

/// A new remote task id: `r` and 16 hex digits (agents are `a…`, shells `b…`).
pub fn new_task_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("r{}", &uuid[..16])
}
