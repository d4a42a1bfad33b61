//! The NATS launcher against a real nats-server, with the test playing the worker: the job
//! carries the request and the caller's repository, events become task updates (a
//! redelivery starts them over), the end fetches the result branch into the caller's
//! repository, and a cancel stops the job. Also: a snapshot is stored once per commit.
#![allow(clippy::unwrap_used)]

use crate::support;

use fleet_protocol::TaskStatus;
use fleet_remote::launcher::NatsLauncher;
use fleet_remote::record::ResultBranch;
use fleet_remote::{bundle, names, Job, Remote, TaskState};
use fleet_runtime::remote::{RemoteLauncher, RemoteRequest, RemoteUpdate};
use fleet_testkit::NatsServer;
use futures::StreamExt;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use support::git;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "committed\n").unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "one"]);
    dir
}

fn request(task_id: &str, cwd: &Path) -> RemoteRequest {
    RemoteRequest {
        task_id: task_id.into(),
        description: "edit remotely".into(),
        prompt: "write b.txt".into(),
        agent_type: "general-purpose".into(),
        definition: json!({"description": "d", "prompt": "p"}),
        model: "claude-sonnet-4-5".into(),
        permission_mode: fleet_protocol::PermissionMode::AcceptEdits,
        allow: vec!["Bash(git:*)".into()],
        deny: vec!["Bash(rm *)".into()],
        cwd: cwd.to_path_buf(),
    }
}

async fn take_job(remote: &Remote) -> Job {
    let consumer = remote.broker().workers_consumer().await.unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let message = tokio::time::timeout(WAIT, messages.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    message.ack().await.unwrap();
    support::open_job(&message.payload)
}

fn assistant(id: &str, tool: &str, tokens: u64) -> serde_json::Value {
    json!({"type": "assistant", "message": {"id": id, "content": [
        {"type": "tool_use", "id": format!("tu-{id}"), "name": tool, "input": {}}],
        "usage": {"input_tokens": tokens, "output_tokens": 1}}})
}

async fn next(updates: &mut tokio::sync::mpsc::Receiver<RemoteUpdate>) -> RemoteUpdate {
    tokio::time::timeout(WAIT, updates.recv())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_launched_job_is_followed_to_its_end_and_its_branch_arrives() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let caller = repo();
    std::fs::write(caller.path().join("draft.txt"), "not committed\n").unwrap();
    let launcher = NatsLauncher::new(server.url()).with_signer(support::signer());
    let task = "r1111222233334444";
    let mut launched = launcher
        .launch(request(task, caller.path()), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        launched.session_url,
        format!("{} fleet.events.{task}", server.url())
    );

    // The worker's side.
    let remote = support::connect(&server.url()).await;
    let job = take_job(&remote).await;
    assert_eq!(job.task_id, task);
    assert_eq!(job.agent.name, "general-purpose");
    assert_eq!(
        job.agent.definition,
        Some(json!({"description": "d", "prompt": "p"}))
    );
    assert_eq!(job.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(job.permission_mode, "acceptEdits");
    assert_eq!(
        (job.allowed_tools.clone(), job.disallowed_tools.clone()),
        (
            vec!["Bash(git:*)".to_string()],
            vec!["Bash(rm *)".to_string()]
        )
    );
    let repo_ref = job.repo.clone().expect("the caller's repository travels");
    assert_eq!(repo_ref.head, git(caller.path(), &["rev-parse", "HEAD"]));

    support::publish_event(
        &remote,
        task,
        1,
        json!({"type": "fleet_remote", "event": "started", "worker": "w1", "attempt": 1}),
    )
    .await;
    support::publish_event(&remote, task, 1, assistant("m1", "Read", 100)).await;
    support::publish_event(&remote, task, 1, assistant("m1", "Read", 100)).await;
    // Redelivered to another worker: it starts over.
    support::publish_event(
        &remote,
        task,
        2,
        json!({"type": "fleet_remote", "event": "started", "worker": "w2", "attempt": 2}),
    )
    .await;
    support::publish_event(&remote, task, 1, assistant("late", "Bash", 999)).await;
    support::publish_event(&remote, task, 2, assistant("m2", "Write", 40)).await;

    // The job's checkout, its change and its result bundle.
    let scratch = tempfile::tempdir().unwrap();
    let bundle_file = scratch.path().join("in.bundle");
    let mut object = remote.broker().bundles.get(&repo_ref.object).await.unwrap();
    let mut file = tokio::fs::File::create(&bundle_file).await.unwrap();
    tokio::io::copy(&mut object, &mut file).await.unwrap();
    let checkout = scratch.path().join("checkout");
    bundle::checkout(&bundle_file, &repo_ref.snapshot, &checkout)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(checkout.join("draft.txt")).unwrap(),
        "not committed\n"
    );
    std::fs::write(checkout.join("b.txt"), "from the worker\n").unwrap();
    let branch = names::result_branch(task);
    let out = scratch.path().join("out.bundle");
    let commit = bundle::result_bundle(&checkout, &repo_ref.snapshot, &branch, &out)
        .await
        .unwrap()
        .unwrap();
    let object = names::result_object(task);
    let mut file = tokio::fs::File::open(&out).await.unwrap();
    remote
        .broker()
        .bundles
        .put(object.as_str(), &mut file)
        .await
        .unwrap();
    let mut record = remote.record(task).await.unwrap().unwrap();
    record.state = TaskState::Completed;
    record.result = Some("wrote b.txt".into());
    record.branch = Some(ResultBranch {
        object,
        branch: branch.clone(),
        commit,
        base: repo_ref.snapshot.clone(),
    });
    record.usage.duration_ms = 1200;
    remote
        .broker()
        .tasks
        .put(task, serde_json::to_vec(&record).unwrap().into())
        .await
        .unwrap();
    support::publish_event(&remote, task, 2, json!({"type": "fleet_remote", "event": "ended", "state": "completed", "result": "wrote b.txt"})).await;

    let updates = &mut launched.updates;
    assert_eq!(
        next(updates).await,
        RemoteUpdate::Started {
            worker: "w1".into(),
            attempt: 1
        }
    );
    assert_eq!(
        next(updates).await,
        RemoteUpdate::Progress {
            tool_uses: 1,
            total_tokens: 101,
            last_activity: Some("Read".into())
        }
    );
    // The same message repeated counts once.
    assert_eq!(
        next(updates).await,
        RemoteUpdate::Progress {
            tool_uses: 1,
            total_tokens: 101,
            last_activity: Some("Read".into())
        }
    );
    assert_eq!(
        next(updates).await,
        RemoteUpdate::Started {
            worker: "w2".into(),
            attempt: 2
        }
    );
    // The earlier delivery's late line is left out.
    assert_eq!(
        next(updates).await,
        RemoteUpdate::Progress {
            tool_uses: 1,
            total_tokens: 41,
            last_activity: Some("Write".into())
        }
    );
    let RemoteUpdate::Ended(ending) = next(updates).await else {
        panic!("the job ended");
    };
    assert_eq!(ending.status, TaskStatus::Completed);
    assert_eq!(ending.result, "wrote b.txt");
    assert_eq!(ending.branch.as_deref(), Some(branch.as_str()));
    assert_eq!(
        (
            ending.usage.tool_uses,
            ending.usage.total_tokens,
            ending.usage.duration_ms
        ),
        (1, 41, 1200)
    );
    assert_eq!(
        git(caller.path(), &["show", &format!("{branch}:b.txt")]),
        "from the worker"
    );
    assert_eq!(git(caller.path(), &["branch", "--show-current"]), "main");
    assert!(updates.recv().await.is_none(), "nothing follows the end");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_job_still_queued_is_killed_at_once() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let launcher = NatsLauncher::new(server.url()).with_signer(support::signer());
    let cancel = CancellationToken::new();
    let task = "r5555666677778888";
    let mut launched = launcher
        .launch(request(task, dir.path()), cancel.clone())
        .await
        .unwrap();
    cancel.cancel();
    let RemoteUpdate::Ended(ending) = next(&mut launched.updates).await else {
        panic!("the job ended");
    };
    assert_eq!(ending.status, TaskStatus::Killed);
    let remote = support::connect(&server.url()).await;
    let record = remote.record(task).await.unwrap().unwrap();
    assert_eq!(record.state, TaskState::Killed);
    let stops = remote
        .broker()
        .js
        .get_stream(names::CONTROL_STREAM)
        .await
        .unwrap();
    let stop = stops
        .get_last_raw_message_by_subject(&names::control_subject(task))
        .await
        .unwrap();
    assert_eq!(
        support::open_control(task, &stop.payload),
        fleet_remote::Control::Stop
    );
}

#[tokio::test]
async fn a_snapshot_is_stored_once_per_commit_and_nothing_outside_a_repository() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    let caller = repo();
    let first = remote.snapshot_repo(caller.path()).await.unwrap().unwrap();
    let info = remote.broker().bundles.info(&first.object).await.unwrap();
    let again = remote.snapshot_repo(caller.path()).await.unwrap().unwrap();
    assert_eq!(again, first);
    let same = remote.broker().bundles.info(&first.object).await.unwrap();
    assert_eq!(
        same.nuid, info.nuid,
        "the object was not uploaded a second time"
    );
    assert_eq!(first.snapshot, first.head, "a clean checkout is its HEAD");
    std::fs::write(caller.path().join("new.txt"), "x\n").unwrap();
    let changed = remote.snapshot_repo(caller.path()).await.unwrap().unwrap();
    assert_ne!(changed.object, first.object);
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(remote.snapshot_repo(outside.path()).await.unwrap(), None);
}
