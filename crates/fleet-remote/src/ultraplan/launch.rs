//! Launching an Ultraplan session: a `JobKind::Ultraplan` job in plan mode, on the strongest
//! model, with the planning instructions and a snapshot of the caller's repository.

use super::prompt::{description, task_prompt, PLANNING_INSTRUCTIONS};
use crate::client::{Remote, Submitted};
use crate::error::RemoteError;
use crate::job::{AgentSpec, Job, JobKind, RepoRef, DEFAULT_MAX_DELIVER};
use crate::names::new_task_id;
use crate::record::Control;
use std::path::PathBuf;

/// The model a planning session runs on unless told otherwise: the strongest.
pub const DEFAULT_MODEL: &str = "opus";
/// Overrides [`DEFAULT_MODEL`] (a `--model` flag wins over it).
pub const MODEL_ENV: &str = "FLEET_ULTRAPLAN_MODEL";

/// The model to plan with: the flag, else `FLEET_ULTRAPLAN_MODEL`, else `opus`.
pub fn choose_model(flag: Option<&str>) -> String {
    let env = std::env::var(MODEL_ENV).ok();
    let chosen = [flag, env.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|m| !m.is_empty())
        .unwrap_or(DEFAULT_MODEL)
        .to_string();
    chosen
}

/// What to plan, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    /// The person's prompt, as typed (the keyword stays; `/ultraplan` is dropped).
    pub prompt: String,
    /// The folder whose repository the session plans on.
    pub cwd: PathBuf,
    /// The model; `None`: [`choose_model`] without a flag.
    pub model: Option<String>,
    /// Labels a worker must have.
    pub labels: Vec<String>,
}

/// The job for `request` (pure: the caller supplies the id, the repository and the time).
pub fn job(task_id: String, request: &LaunchRequest, repo: Option<RepoRef>, now_ms: u64) -> Job {
    Job {
        task_id,
        kind: JobKind::Ultraplan,
        description: description(&task_prompt(&request.prompt)),
        prompt: task_prompt(&request.prompt),
        agent: AgentSpec {
            name: "ultraplan".to_string(),
            definition: None,
            append_system_prompt: Some(PLANNING_INSTRUCTIONS.to_string()),
        },
        model: Some(request.model.clone().unwrap_or_else(|| choose_model(None))),
        permission_mode: "plan".to_string(),
        allowed_tools: Vec::new(),
        disallowed_tools: Vec::new(),
        repo,
        labels: request.labels.clone(),
        max_deliver: DEFAULT_MAX_DELIVER,
        queued_ms: now_ms,
        origin: origin(&request.cwd),
    }
}

/// Snapshots the repository and submits the planning job. A submit that fails may still
/// have left the task's record behind, so the task is archived (best effort) before the
/// error is returned: every error path after the job may exist leaves no orphan.
pub async fn launch(remote: &Remote, request: &LaunchRequest) -> Result<Submitted, RemoteError> {
    let repo = remote.snapshot_repo(&request.cwd).await?;
    let task_id = new_task_id();
    let job = job(task_id.clone(), request, repo, crate::now_ms());
    match remote.submit(job).await {
        Ok(submitted) => Ok(submitted),
        Err(err) => {
            if let Err(archive) = remote.send(&task_id, Control::Stop).await {
                tracing::warn!(task = %task_id, error = %archive, "could not archive the task");
            }
            Err(err)
        }
    }
}

/// `host:folder`, for `fleet remote status`.
fn origin(cwd: &std::path::Path) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}:{}", cwd.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planning_job_is_plan_mode_on_the_chosen_model_with_the_instructions() {
        let request = LaunchRequest {
            prompt: "/ultraplan split the parser".to_string(),
            cwd: PathBuf::from("/repo"),
            model: Some("sonnet".to_string()),
            labels: vec!["big".to_string()],
        };
        let job = job("r0123".to_string(), &request, None, 42);
        assert_eq!(job.kind, JobKind::Ultraplan);
        assert_eq!(job.permission_mode, "plan");
        assert_eq!(job.model.as_deref(), Some("sonnet"));
        assert_eq!(job.prompt, "split the parser");
        assert_eq!(job.description, "ultraplan: split the parser");
        assert_eq!(
            job.agent.append_system_prompt.as_deref(),
            Some(PLANNING_INSTRUCTIONS)
        );
        assert_eq!(job.max_deliver, DEFAULT_MAX_DELIVER);
        assert_eq!(job.labels, ["big"]);
        assert_eq!(job.queued_ms, 42);
        assert!(job.origin.ends_with(":/repo"), "{}", job.origin);
    }

    #[test]
    fn the_flag_wins_then_opus() {
        assert_eq!(choose_model(Some("haiku")), "haiku");
        if std::env::var(MODEL_ENV).is_err() {
            assert_eq!(choose_model(None), "opus");
            assert_eq!(choose_model(Some("  ")), "opus");
        }
    }
}
