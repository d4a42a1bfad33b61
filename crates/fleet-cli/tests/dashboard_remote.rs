//! `fleet dashboard` with a broker configured (`FLEET_NATS_URL`, a real nats-server): a
//! session in the store that launched a remote job shows the job's worker, attempt and state
//! as the broker's task record says, and follows the record when it changes. Skipped (with a
//! note) where nats-server cannot be had, as the other broker tests are.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::dashboard_common;

use common::Project;
use dashboard_common::{client, origin_of, start_dashboard_with, terminate, token_of, WAIT};
use fleet_protocol::{ContentBlock, Message, Role};
use fleet_remote::{JobKind, Remote, TaskRecord, TaskState};
use fleet_store::{FleetHome, SessionStore, TranscriptEntry as Line};
use fleet_testkit::NatsServer;
use serde_json::{json, Value};

const TASK: &str = "r00112233445566aa";

/// A session whose main agent launched remote job [`TASK`], as the runtime writes it.
fn session_with_a_remote_job(project: &Project) -> String {
    let store = SessionStore::new(FleetHome::at(&project.fleet_home));
    let mut main = store.create_session(&project.repo).unwrap();
    main.append(Line::message(Message::user_text(
        "count the files remotely",
    )))
    .unwrap();
    main.append(
        Line::message(Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "toolu_1",
                "Agent",
                json!({"description": "count", "prompt": "count the files", "remote": true}),
            )],
        ))
        .with_extra("model", "claude-sonnet-4-5"),
    )
    .unwrap();
    main.append(
        Line::message(Message::with_blocks(
            Role::User,
            vec![ContentBlock::tool_result(
                "toolu_1",
                format!("Started remote agent {TASK} (general-purpose) on a remote worker"),
                false,
            )],
        ))
        .with_extra(
            "toolUseResults",
            json!({"toolu_1": {"status": "remote_launched", "taskId": TASK,
                               "agentType": "general-purpose", "description": "count"}}),
        ),
    )
    .unwrap();
    main.session_id().to_owned()
}

async fn put_record(remote: &Remote, worker: &str, attempt: u32, state: TaskState) {
    let now = fleet_remote::now_ms();
    let record = TaskRecord {
        task_id: TASK.into(),
        kind: JobKind::Agent,
        description: "count the files".into(),
        state,
        worker: Some(worker.into()),
        attempt,
        plan: None,
        result: None,
        branch: None,
        usage: Default::default(),
        events: 0,
        queued_ms: now,
        started_ms: Some(now),
        ended_ms: None,
        updated_ms: now,
        origin: "here:/x".into(),
    };
    remote
        .broker()
        .tasks
        .put(TASK, serde_json::to_vec(&record).unwrap().into())
        .await
        .unwrap();
}

/// Reads the session's snapshot until its job [`TASK`] satisfies `done` (bounded by WAIT).
async fn job_where(api: &str, done: impl Fn(&Value) -> bool) -> Value {
    let http = client();
    let mut last = Value::Null;
    let found = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot: Value = http.get(api).send().await.unwrap().json().await.unwrap();
            last = snapshot["remote_jobs"]
                .as_array()
                .and_then(|jobs| jobs.iter().find(|j| j["id"] == TASK))
                .cloned()
                .unwrap_or(Value::Null);
            if done(&last) {
                return last.clone();
            }
            // Re-asked at a gentle pace: the server is what is tested, not this loop.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no such job within the wait; last seen: {last}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_shows_a_remote_job_as_the_broker_records_it() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let remote = Remote::connect(&nats.url()).await.unwrap();
    put_record(&remote, "box-7", 2, TaskState::Running).await;
    let project = Project::new(&[("a.txt", "x\n")]);
    let session = session_with_a_remote_job(&project);

    let nats_url = nats.url();
    let (child, url) = start_dashboard_with(
        &project,
        &["--no-open"],
        &[("FLEET_NATS_URL", nats_url.as_str())],
    )
    .await;
    let api = format!(
        "{}/api/sessions/{session}?token={}",
        origin_of(&url),
        token_of(&url)
    );
    let job = job_where(&api, |j| j["worker"] == "box-7").await;
    assert_eq!(job["attempt"], 2, "{job}");
    assert_eq!(job["state"], "running", "{job}");
    assert_eq!(job["description"], "count the files", "{job}");

    // Redelivered to another worker: the page follows the record.
    put_record(&remote, "box-8", 3, TaskState::Completed).await;
    let job = job_where(&api, |j| j["worker"] == "box-8").await;
    assert_eq!(
        (job["attempt"].clone(), job["state"].clone()),
        (json!(3), json!("completed"))
    );

    let (status, stderr) = terminate(child).await;
    assert!(status.success(), "{stderr}");
}

/// No broker configured: the dashboard serves as ever, and says nothing about brokers.
#[tokio::test]
async fn without_a_broker_the_dashboard_starts_as_ever() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let session = session_with_a_remote_job(&project);
    let (child, url) = start_dashboard_with(&project, &["--no-open"], &[]).await;
    let api = format!(
        "{}/api/sessions/{session}?token={}",
        origin_of(&url),
        token_of(&url)
    );
    let job = job_where(&api, |j| !j.is_null()).await;
    assert_eq!(job["worker"], Value::Null, "{job}");
    let (status, stderr) = terminate(child).await;
    assert!(status.success(), "{stderr}");
    assert!(!stderr.to_lowercase().contains("broker"), "{stderr}");
}
