//! `fleet --dashboard` in the terminal UI (tmux, the fake model server): the page's URL shows
//! as a notice, and a permission question the UI asks can be answered on the page instead —
//! the UI's prompt goes away and the call runs.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::tmux;

use common::{server, Project};
use fleet_dashboard::api::{ActionResult, Snapshot};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::time::Duration;
use tmux::Tmux;

/// Wide enough for the URL (token included) on one row.
const SIZE: (u16, u16) = (220, 40);

const WAIT: Duration = Duration::from_secs(60);

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().timeout(WAIT).build().unwrap()
}

/// The session's snapshot once `check` holds for it (polled: the TUI session has no other
/// signal for the test to wait on).
async fn snapshot_when(url: &str, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let start = std::time::Instant::now();
    loop {
        let sessions: Vec<fleet_dashboard::api::SessionSummary> = client()
            .get(format!("{}/api/sessions?{}", origin(url), query(url)))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for session in sessions {
            let snapshot: Snapshot = client()
                .get(format!(
                    "{}/api/sessions/{}?{}",
                    origin(url),
                    session.id,
                    query(url)
                ))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if check(&snapshot) {
                return snapshot;
            }
        }
        assert!(start.elapsed() < WAIT, "the page never showed it");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn origin(url: &str) -> String {
    url.split("/?").next().unwrap().to_string()
}

fn query(url: &str) -> String {
    url.split("/?").nth(1).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_in_the_tui_is_answered_on_the_page() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("WROTE-IT").when_tool_result(true),
        Rule::tool_use(
            "Write",
            json!({"file_path": project.path("first.txt"), "content": "one\n"}),
        )
        .when_last_user_contains("make-first"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &["--dashboard"], SIZE, &[]);
    let screen = term.wait_for("dashboard: http://127.0.0.1:");
    let url = screen
        .split("dashboard: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(url.contains("/?token="), "{url}");
    term.wait_for("for commands");
    term.type_text("make-first");
    term.keys(&["Enter"]);
    term.wait_for("1. Yes");
    let snapshot = snapshot_when(&url, |s| !s.pending_permissions.is_empty()).await;
    assert!(snapshot.actions.answer_permission, "{:?}", snapshot.actions);
    let question = &snapshot.pending_permissions[0];
    assert_eq!(question.tool, "Write");
    let answered = client()
        .post(format!(
            "{}/api/sessions/{}/permissions/{}?{}",
            origin(&url),
            snapshot.session.id,
            question.id,
            query(&url)
        ))
        .header("Origin", origin(&url))
        .json(&json!({"decision": "allow", "message": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    let result: ActionResult = answered.json().await.unwrap();
    assert!(result.ok, "{result:?}");
    let screen = term.wait_for("WROTE-IT");
    assert!(
        !screen.contains("1. Yes"),
        "the UI's prompt went away:\n{screen}"
    );
    assert_eq!(project.read("first.txt"), "one\n");
    let after = snapshot_when(&url, |s| s.session.id == snapshot.session.id).await;
    assert!(after.pending_permissions.is_empty(), "{after:?}");
    term.type_text("/exit");
    term.keys(&["Enter"]);
    let after = term.after_exit();
    assert!(after.starts_with("exit=0\n"), "fleet's exit: {after}");
}
