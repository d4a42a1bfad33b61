//! `fleet remote status` and `fleet remote logs` as a person runs them, against a real
//! nats-server holding a job, its worker's heartbeat and its events.
#![allow(clippy::unwrap_used)]

use crate::cluster::jobs;
use crate::common;

use common::{run_with_stdin, server, stderr, stdout, Project};
use fleet_remote::{names, Job, Remote, WorkerRecord};
use fleet_testkit::{NatsServer, Scenario};
use serde_json::{json, Value};

async fn publish(remote: &Remote, task: &str, line: Value) {
    // No attempt header: a reader takes it as the first delivery.
    remote
        .broker()
        .js
        .publish(names::events_subject(task), line.to_string().into())
        .await
        .unwrap()
        .await
        .unwrap();
}

/// A broker with one worker and one finished job.
async fn broker_with_a_job(nats: &NatsServer) -> Remote {
    // Signed with a key in memory: no test touches the user's own key.
    let remote = Remote::connect(&nats.url())
        .await
        .unwrap()
        .with_signer(fleet_remote::signing::UserKey::generate("test caller"));
    let worker = WorkerRecord {
        id: "box-7".into(),
        host: "box".into(),
        pid: 7,
        slots: 2,
        running: vec![],
        labels: vec!["gpu".into()],
        started_ms: fleet_remote::now_ms(),
        heartbeat_ms: fleet_remote::now_ms(),
    };
    remote
        .broker()
        .workers
        .put("box-7", serde_json::to_vec(&worker).unwrap().into())
        .await
        .unwrap();
    remote
        .submit(Job {
            task_id: "r0123456789abcdef".into(),
            description: "count the files".into(),
            origin: "here:/x".into(),
            ..jobs::agent_job("count")
        })
        .await
        .unwrap();
    for line in [
        json!({"type": "fleet_remote", "event": "started", "worker": "box-7", "attempt": 1}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls | wc -l"}}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "12"}]}}),
        json!({"type": "fleet_remote", "event": "ended", "state": "completed", "result": "12 files"}),
    ] {
        publish(&remote, "r0123456789abcdef", line).await;
    }
    remote
}

#[tokio::test(flavor = "multi_thread")]
async fn status_and_logs_show_what_the_broker_knows() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    broker_with_a_job(&nats).await;
    let model = server(Scenario::new()).await;
    let project = Project::new(&[]);
    let url = nats.url();

    let out = project
        .run(&model, &["remote", "status", "--nats", &url], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Workers (1)"), "{text}");
    assert!(text.contains("box-7  box   0/2    gpu"), "{text}");
    assert!(text.contains("r0123456789abcdef  agent  queued"), "{text}");
    assert!(text.contains("count the files"), "{text}");

    let out = project
        .run(&model, &["remote", "status", "--nats", &url, "--json"], "")
        .await;
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(value["workers"][0]["labels"], json!(["gpu"]));
    assert_eq!(value["tasks"][0]["task_id"], "r0123456789abcdef");

    let out = project
        .run(
            &model,
            &["remote", "logs", "r0123456789abcdef", "--nats", &url],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "fleet_remote: started on box-7 (attempt 1)\n\
         tool: Bash(ls | wc -l)\n\
         \x20 result: 12\n\
         fleet_remote: ended completed — 12 files\n"
    );
    // --follow stops at the worker's last line; --json prints the lines as published.
    let out = project
        .run(
            &model,
            &[
                "remote",
                "logs",
                "r0123456789abcdef",
                "--nats",
                &url,
                "--follow",
                "--json",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["event"], "ended");

    let out = project
        .run(
            &model,
            &["remote", "logs", "r00000000deadbeef", "--nats", &url],
            "",
        )
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no remote task \"r00000000deadbeef\""),
        "{}",
        stderr(&out)
    );
    let out = project
        .run(&model, &["remote", "logs", "r.>", "--nats", &url], "")
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("\"r.>\" is not a remote task id"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn without_a_broker_url_the_error_says_where_to_set_one() {
    let model = server(Scenario::new()).await;
    let project = Project::new(&[]);
    let mut cmd = project.command(&model, &["remote", "status"]);
    cmd.env_remove("FLEET_NATS_URL");
    let out = run_with_stdin(cmd, "").await;
    assert!(!out.status.success());
    let err = stderr(&out);
    for needed in ["--nats", "FLEET_NATS_URL", "natsUrl", "fleet worker"] {
        assert!(err.contains(needed), "{err}");
    }
}
