//! `fleet dashboard` as its users start it: the URL as the first stdout line, the page behind
//! the token, a warning for a non-loopback host, a message to a team member signed as `fleet
//! team send` signs it — the real binary, real HTTP on loopback.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::dashboard_common;

use common::Project;
use dashboard_common::{
    client, origin_of, start_dashboard, start_dashboard_with, terminate, token_of, WAIT,
};
use fleet_dashboard::api::ActionResult;
use serde_json::{json, Value};

#[tokio::test]
async fn fleet_dashboard_prints_its_url_first_and_serves_the_page_behind_the_token() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let (child, url) = start_dashboard(&project, &["--port", "0"]).await;
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let token = token_of(&url);
    assert_eq!(token.len(), 64, "{url}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{url}");
    let http = client();
    let page = http.get(&url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("data-testid=\"connection\""));
    let origin = origin_of(&url);
    for path in ["/", "/api/sessions"] {
        let refused = http.get(format!("{origin}{path}")).send().await.unwrap();
        assert_eq!(refused.status(), 401, "{path}");
    }
    // Stopping a task is for the session's own process.
    let stop = http
        .post(format!(
            "{origin}/api/sessions/x/tasks/t/stop?token={token}"
        ))
        .header("Origin", &origin)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(stop.status(), 409);
    let why: Value = stop.json().await.unwrap();
    assert!(
        why["error"].as_str().unwrap().contains("--dashboard"),
        "{why}"
    );
    let (status, stderr) = terminate(child).await;
    assert!(
        status.success(),
        "a server stopped by SIGTERM exits 0: {status:?} {stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[tokio::test]
async fn a_host_beyond_loopback_is_warned_about() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let (child, url) = start_dashboard(&project, &["--host", "0.0.0.0"]).await;
    assert!(url.starts_with("http://0.0.0.0:"), "{url}");
    let (status, stderr) = terminate(child).await;
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("fleet: warning:"), "{stderr}");
    assert!(stderr.contains("other machines"), "{stderr}");
}

/// A `fleet -p … --dashboard` run: its URL read off stderr (the rest of stderr drained).
#[tokio::test]
async fn a_message_from_the_page_is_signed_mail_as_fleet_team_send_writes_it() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let home = fleet_store::FleetHome::at(&project.fleet_home);
    let teams = fleet_store::team::TeamStore::new(&home);
    let lead = fleet_store::team::Member::new("team-lead", "", "team-lead", "/src/app");
    let team = teams
        .create("crew", None, lead, "3f2c0000-0000-4000-8000-000000000000")
        .unwrap();
    teams
        .update(&team.name, |config| {
            let alpha = fleet_store::team::Member::new("alpha", "crew", "general-purpose", "/src");
            config.members.push(alpha);
        })
        .unwrap();
    let (child, url) = start_dashboard(&project, &[]).await;
    let (origin, token) = (origin_of(&url), token_of(&url));
    let send = |team: &str, member: &str, body: Value| {
        client()
            .post(format!(
                "{origin}/api/teams/{team}/members/{member}/messages?token={token}"
            ))
            .header("Origin", &origin)
            .json(&body)
            .send()
    };
    let sent = send(
        "crew",
        "alpha",
        json!({"text": "please rebase", "summary": "rebase"}),
    )
    .await
    .unwrap();
    assert_eq!(sent.status(), 200);
    let result: ActionResult = sent.json().await.unwrap();
    assert!(result.ok, "{result:?}");
    let inbox = fleet_store::Mailbox::open(&teams.inboxes_dir("crew"), "alpha").unwrap();
    let unread = inbox.unread().unwrap();
    assert_eq!(unread.entries.len(), 1);
    let entry = &unread.entries[0];
    assert_eq!(entry.from, "user");
    assert_eq!(entry.text, "please rebase");
    assert_eq!(entry.summary.as_deref(), Some("rebase"));
    assert!(result.message.contains(&entry.msg_id), "{result:?}");
    assert!(
        entry.lead_sig.is_some(),
        "signed with the user's key: {entry:?}"
    );
    let missing = send("nope", "alpha", json!({"text": "hi", "summary": null}))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let empty = send("crew", "alpha", json!({"text": "  ", "summary": null}))
        .await
        .unwrap();
    assert_eq!(empty.status(), 400);
    // Names that would climb out of the teams folder are refused as bad requests, and
    // nothing is written outside it.
    let climbing = send(
        "..%2F..%2Fescaped",
        "alpha",
        json!({"text": "hi", "summary": null}),
    )
    .await
    .unwrap();
    assert_eq!(climbing.status(), 400);
    let member = send(
        "crew",
        "..%2F..%2Fescaped",
        json!({"text": "hi", "summary": null}),
    )
    .await
    .unwrap();
    assert!(member.status().is_client_error(), "{}", member.status());
    assert!(!project.fleet_home.join("escaped").exists());
    assert!(!project.fleet_home.join("teams").join("escaped").exists());
    let (status, stderr) = terminate(child).await;
    assert!(status.success(), "{stderr}");
}

#[tokio::test]
async fn the_browser_is_opened_on_the_url_and_one_that_fails_is_only_a_note() {
    let project = Project::new(&[("a.txt", "x\n")]);
    // A "browser" that writes down what it was asked to open.
    let opened = project.home.join("opened.txt");
    let browser = project.home.join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {}.part && mv {0}.part {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let listed = format!("/nonexistent/browser:{}", browser.display());
    let (child, url) = start_dashboard_with(&project, &[], &[("BROWSER", &listed)]).await;
    let start = std::time::Instant::now();
    while !opened.exists() {
        assert!(start.elapsed() < WAIT, "the browser was never started");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), url);
    let (status, stderr) = terminate(child).await;
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("could not open"), "{stderr}");

    let (child, _) =
        start_dashboard_with(&project, &[], &[("BROWSER", "/nonexistent/browser")]).await;
    let (status, stderr) = terminate(child).await;
    assert!(
        status.success(),
        "a browser that fails is no error: {stderr}"
    );
    assert!(
        stderr.contains("fleet: note: could not open a browser"),
        "{stderr}"
    );
}
