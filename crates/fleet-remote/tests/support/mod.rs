//! What the fleet-remote tests share: git in a folder with a throwaway identity, a repository
//! with one commit, a job, and an event published as a worker publishes it.
#![allow(dead_code, clippy::unwrap_used)]

use fleet_remote::{names, Job, JobKind, Remote};
use std::path::Path;
use std::process::Command;

/// `git -C dir args…`, which must succeed; its output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository on `main` with `a.txt` committed and `ignored.txt` ignored.
pub fn repo_with_a_commit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "committed\n").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "ignored.txt\n").unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "one"]);
    dir
}

/// A plain Agent job with no repository.
pub fn job(task_id: &str, queued_ms: u64) -> Job {
    Job {
        task_id: task_id.into(),
        kind: JobKind::Agent,
        description: format!("job {task_id}"),
        prompt: "say hi".into(),
        agent: Default::default(),
        model: None,
        permission_mode: "default".into(),
        allowed_tools: vec![],
        disallowed_tools: vec![],
        repo: None,
        labels: vec![],
        max_deliver: 3,
        queued_ms,
        origin: "host:/x".into(),
    }
}

/// Publishes `line` as attempt `attempt`'s event of `task`; its stream sequence.
pub async fn publish_event(
    remote: &Remote,
    task: &str,
    attempt: u32,
    line: serde_json::Value,
) -> u64 {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(names::ATTEMPT_HEADER, attempt.to_string().as_str());
    remote
        .broker()
        .js
        .publish_with_headers(
            names::events_subject(task),
            headers,
            line.to_string().into(),
        )
        .await
        .unwrap()
        .await
        .unwrap()
        .sequence
}

/// The key these tests' callers sign jobs with (one per test process, in memory only, so no
/// test touches the user's own key).
pub fn signer() -> std::sync::Arc<fleet_remote::signing::UserKey> {
    static KEY: std::sync::OnceLock<std::sync::Arc<fleet_remote::signing::UserKey>> =
        std::sync::OnceLock::new();
    KEY.get_or_init(|| std::sync::Arc::new(fleet_remote::signing::UserKey::generate("test caller")))
        .clone()
}

/// A caller signing with [`signer`].
pub async fn connect(url: &str) -> Remote {
    Remote::connect(url).await.unwrap().with_signer(signer())
}

/// The job in a message on the jobs subject, as a worker trusting [`signer`] reads it.
pub fn open_job(payload: &[u8]) -> Job {
    use fleet_remote::signing::{open, Opened, TrustedKeys};
    match open(payload, &TrustedKeys::new(vec![signer().public_key()])) {
        Opened::Verified { job, .. } => *job,
        Opened::Refused { reason, .. } => panic!("the job does not open: {reason}"),
    }
}

/// The control in a message on `task`'s control subject, as a worker trusting [`signer`]
/// reads it.
pub fn open_control(task: &str, payload: &[u8]) -> fleet_remote::Control {
    use fleet_remote::signing::{open_control, TrustedKeys};
    open_control(
        task,
        payload,
        &TrustedKeys::new(vec![signer().public_key()]),
    )
    .unwrap_or_else(|reason| panic!("the control does not open: {reason}"))
}
