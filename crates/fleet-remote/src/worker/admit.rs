//! What a worker checks before it runs a job, and what it does with one it will not run.
//!
//! A job is only run when it is signed by a key the worker trusts (see [`crate::signing`])
//! and asks for no more than the worker's own maximum permission mode. A job refused for its
//! signature is dropped (terminated on the queue, so it is not offered again) with a log line
//! naming it and why; when it names a task still queued, that task's record is marked failed
//! with the reason, so a submitter whose key the worker lacks sees what to fix. A signed job
//! asking for too wide a mode fails the same way, recorded and logged.

use super::job_run::Ctx;
use super::publish::{get_record, put_record, Events};
use crate::event::WorkerEvent;
use crate::job::Job;
use crate::record::{TaskRecord, TaskState};
use fleet_tools::permissions::PermissionMode;
use tokio_util::sync::CancellationToken;

/// The worker's maximum when none is given: edits in the job's checkout run, other commands
/// only as the job's rules allow; `bypassPermissions` needs the operator's word.
pub const DEFAULT_MAX_MODE: PermissionMode = PermissionMode::AcceptEdits;

/// Why a worker will not run a job it could verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The job's permission mode is not one fleet knows; `reason` names the valid ones.
    #[error("refused by the worker: {reason}")]
    UnknownMode { reason: String },
    #[error(
        "refused by the worker: the job asks for permission mode {asked}, above this worker's \
         maximum {max} (an operator allows it with `fleet worker --max-mode {asked}`)"
    )]
    AboveMaximum {
        asked: PermissionMode,
        max: PermissionMode,
    },
    /// A ref name would not pin the content the submitter signed.
    #[error("refused by the worker: the job's snapshot {snapshot:?} is not a full commit id")]
    NotACommitId { snapshot: String },
}

/// Whether `job` may run on a worker whose maximum is `max`; on success its mode is spelled
/// the canonical way (the spelling is what reaches the job's command line). The error says
/// what the job asked, what the worker allows and how an operator raises it.
pub fn check(job: &mut Job, max: PermissionMode) -> Result<(), Refusal> {
    let mode: PermissionMode = job
        .permission_mode
        .parse()
        .map_err(|reason| Refusal::UnknownMode { reason })?;
    // Ranked by `PermissionMode::rank`: plan < dontAsk < default < acceptEdits < bypass.
    if mode.rank() > max.rank() {
        return Err(Refusal::AboveMaximum { asked: mode, max });
    }
    job.permission_mode = mode.as_str().to_string();
    // The snapshot is checked out by its id: a full object id pins the content the submitter
    // signed (git checks every object's hash as it reads the bundle), a ref name would not.
    if let Some(repo) = &job.repo {
        let hex = repo.snapshot.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex || !matches!(repo.snapshot.len(), 40 | 64) {
            return Err(Refusal::NotACommitId {
                snapshot: repo.snapshot.clone(),
            });
        }
    }
    Ok(())
}

/// A job that failed a signature check: logged, and its task marked failed when its record
/// is still queued (a running or finished task is never touched by an unverified message).
pub async fn drop_unverified(
    ctx: &Ctx,
    task_id: Option<&str>,
    reason: &str,
    writes: &CancellationToken,
) {
    eprintln!(
        "fleet worker {}: dropped job {}: {reason}",
        ctx.id,
        task_id.unwrap_or("(no valid task id)")
    );
    let Some(task_id) = task_id else { return };
    let Ok(Some(record)) = get_record(&ctx.broker, task_id).await else {
        return;
    };
    if record.state != TaskState::Queued {
        return;
    }
    let attempt = record.attempt + 1;
    fail(ctx, task_id, record, attempt, reason, writes).await;
}

/// Marks the task failed with `reason` without running it: the record, then an `ended`
/// event (a follower that reads the record on `ended` sees why).
pub async fn fail(
    ctx: &Ctx,
    task_id: &str,
    mut record: TaskRecord,
    attempt: u32,
    reason: &str,
    writes: &CancellationToken,
) {
    let mut events = Events::start(&ctx.broker, task_id, attempt, writes.clone());
    let now = crate::now_ms();
    record.state = TaskState::Failed;
    record.result = Some(reason.to_string());
    record.events = 1;
    record.ended_ms = Some(now);
    record.updated_ms = now;
    put_record(&ctx.broker, &record, writes).await;
    events
        .own(WorkerEvent::Ended {
            state: TaskState::Failed.into(),
            result: Some(reason.to_string()),
        })
        .await;
    events.flush().await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::job::{AgentSpec, JobKind, RepoRef};
    use PermissionMode::*;

    fn job(mode: &str) -> Job {
        Job {
            task_id: "r0123456789abcdef".into(),
            kind: JobKind::Agent,
            description: "d".into(),
            prompt: "p".into(),
            agent: AgentSpec::default(),
            model: None,
            permission_mode: mode.into(),
            allowed_tools: vec![],
            disallowed_tools: vec![],
            repo: None,
            labels: vec![],
            max_deliver: 3,
            queued_ms: 0,
            origin: String::new(),
        }
    }

    #[test]
    fn modes_up_to_the_maximum_run_and_wider_ones_are_refused() {
        for (mode, max, ok) in [
            ("plan", Plan, true),
            ("default", AcceptEdits, true),
            ("acceptEdits", AcceptEdits, true),
            ("dontAsk", Default, true),
            ("bypassPermissions", AcceptEdits, false),
            ("acceptEdits", Default, false),
            ("default", DontAsk, false),
            ("dontAsk", Plan, false),
            ("bypassPermissions", BypassPermissions, true),
        ] {
            assert_eq!(check(&mut job(mode), max).is_ok(), ok, "{mode} under {max}");
        }
        let err = check(&mut job("bypassPermissions"), DEFAULT_MAX_MODE).unwrap_err();
        assert_eq!(
            err,
            Refusal::AboveMaximum {
                asked: BypassPermissions,
                max: DEFAULT_MAX_MODE
            }
        );
        let shown = err.to_string();
        assert!(
            shown.contains("bypassPermissions") && shown.contains("--max-mode"),
            "{shown}"
        );
    }

    #[test]
    fn an_unknown_mode_is_refused_and_a_known_one_is_spelled_canonically() {
        let unknown = check(&mut job("yolo"), BypassPermissions).unwrap_err();
        assert!(matches!(unknown, Refusal::UnknownMode { .. }), "{unknown}");
        assert!(unknown.to_string().contains("unknown permission mode"));
        let mut j = job("ACCEPTEDITS");
        check(&mut j, AcceptEdits).unwrap();
        assert_eq!(j.permission_mode, "acceptEdits");
    }

    #[test]
    fn a_snapshot_that_is_not_a_full_commit_id_is_refused() {
        let mut j = job("default");
        j.repo = Some(RepoRef {
            object: "repo-x.bundle".into(),
            head: "main".into(),
            snapshot: "main".into(),
            branch: None,
            subdir: String::new(),
        });
        assert_eq!(
            check(&mut j, AcceptEdits),
            Err(Refusal::NotACommitId {
                snapshot: "main".into()
            })
        );
        j.repo.as_mut().unwrap().snapshot = "a".repeat(40);
        assert!(check(&mut j, AcceptEdits).is_ok());
    }
}
