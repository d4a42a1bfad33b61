//! The job remote tests publish: an Agent job with default rules and no repository.

use fleet_remote::{names, AgentSpec, Job, JobKind};

/// An Agent job with default rules and no repository.
pub fn agent_job(prompt: &str) -> Job {
    Job {
        task_id: names::new_task_id(),
        kind: JobKind::Agent,
        description: prompt.chars().take(40).collect(),
        prompt: prompt.to_string(),
        agent: AgentSpec {
            name: "general-purpose".into(),
            ..Default::default()
        },
        model: None,
        permission_mode: "default".into(),
        allowed_tools: Vec::new(),
        disallowed_tools: Vec::new(),
        repo: None,
        labels: Vec::new(),
        max_deliver: fleet_remote::job::DEFAULT_MAX_DELIVER,
        queued_ms: fleet_remote::now_ms(),
        origin: "test".into(),
    }
}
