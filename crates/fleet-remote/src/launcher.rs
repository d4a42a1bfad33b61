//! The runtime's `isolation: "remote"` on NATS: a [`RemoteLauncher`] that turns the request
//! into a job, follows its events into task updates, stops it on cancel and fetches its
//! branch at the end.

mod follow;

use crate::client::Remote;
use crate::job::{AgentSpec, Job, JobKind, DEFAULT_MAX_DELIVER};
use crate::signing::UserKey;
use fleet_runtime::remote::{LaunchError, RemoteLaunched, RemoteLauncher, RemoteRequest};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio::sync::{mpsc, OnceCell};
use tokio_util::sync::CancellationToken;

/// Launches remote agents through the broker at `url`, connecting on first use (a session
/// that never goes remote never connects).
#[derive(Debug)]
pub struct NatsLauncher {
    pub url: String,
    remote: OnceCell<Remote>,
    /// The key jobs are signed with; `None`: the user's, from `$FLEET_HOME`.
    signer: Option<Arc<UserKey>>,
}

impl NatsLauncher {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            remote: OnceCell::new(),
            signer: None,
        }
    }

    /// Signs jobs with `key` instead of the user's key in `$FLEET_HOME`.
    pub fn with_signer(mut self, key: impl Into<Arc<UserKey>>) -> Self {
        self.signer = Some(key.into());
        self
    }

    /// The connection, made by the first launch and shared by the later ones.
    async fn remote(&self) -> Result<&Remote, crate::RemoteError> {
        self.remote
            .get_or_try_init(|| async {
                let remote = Remote::connect(&self.url).await?;
                Ok(match &self.signer {
                    Some(key) => remote.with_signer(key.clone()),
                    None => remote,
                })
            })
            .await
    }
}

impl RemoteLauncher for NatsLauncher {
    fn launch(
        &self,
        request: RemoteRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<RemoteLaunched, LaunchError>> {
        Box::pin(async move {
            let remote = self
                .remote()
                .await
                .map_err(|e| LaunchError::Connect(Box::new(e)))?
                .clone();
            let repo = remote
                .snapshot_repo(&request.cwd)
                .await
                .map_err(|e| LaunchError::Repository(Box::new(e)))?;
            let in_repo = repo.is_some();
            let job = job_for(&request, repo);
            let submitted = remote
                .submit(job)
                .await
                .map_err(|e| LaunchError::Submit(Box::new(e)))?;
            let (updates, receiver) = mpsc::channel(64);
            let follower = follow::Follower {
                remote,
                task_id: submitted.task_id.clone(),
                repo: in_repo.then(|| request.cwd.clone()),
                updates,
                cancel,
            };
            tokio::spawn(follower.run());
            Ok(RemoteLaunched {
                session_url: submitted.session_url,
                updates: receiver,
            })
        })
    }
}

/// The job for `request`: the definition travels whole, so a worker without the caller's
/// agent files runs the same agent; credentials never do.
pub fn job_for(request: &RemoteRequest, repo: Option<crate::job::RepoRef>) -> Job {
    Job {
        task_id: request.task_id.clone(),
        kind: JobKind::Agent,
        description: request.description.clone(),
        prompt: request.prompt.clone(),
        agent: AgentSpec {
            name: request.agent_type.clone(),
            definition: Some(request.definition.clone()),
            append_system_prompt: None,
        },
        model: Some(request.model.clone()).filter(|m| !m.trim().is_empty()),
        // The job keeps the name: a worker must read a job with a mode it does not know, to
        // refuse it by name.
        permission_mode: request.permission_mode.as_str().to_string(),
        allowed_tools: request.allow.clone(),
        disallowed_tools: request.deny.clone(),
        repo,
        labels: Vec::new(),
        max_deliver: DEFAULT_MAX_DELIVER,
        queued_ms: crate::now_ms(),
        origin: origin(&request.cwd),
    }
}

/// `host:/folder`, for `fleet remote status`.
pub fn origin(cwd: &std::path::Path) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", cwd.display())
}
