//! The dashboard's server over real HTTP on loopback: who gets in (the token, on the page,
//! the API and the event stream), who may change something (the origin, JSON, the size), the
//! headers every answer carries, the first event of a session's stream, and the stream of the
//! list of sessions.
#![allow(clippy::unwrap_used)]

use fleet_dashboard::actions::ReadOnly;
use fleet_dashboard::api::{SessionSummary, Snapshot};
use fleet_dashboard::{serve, Hub, LiveFeed, ServeOptions, Serving};
use futures::StreamExt;
use reqwest::StatusCode;
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

struct Fixture {
    home: tempfile::TempDir,
    hub: Hub,
    _feed: LiveFeed,
    serving: Serving,
    client: reqwest::Client,
}

impl Fixture {
    async fn start() -> Self {
        let home = tempfile::tempdir().unwrap();
        let hub = Hub::open(home.path().to_path_buf()).unwrap();
        let feed = hub.attach_live("s1", home.path(), Some("claude-test"));
        let serving = serve(hub.clone(), Arc::new(ReadOnly), ServeOptions::default())
            .await
            .unwrap();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().timeout(WAIT).build().unwrap();
        Self {
            home,
            hub,
            _feed: feed,
            serving,
            client,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.serving.origin())
    }

    fn with_token(&self, path: &str) -> String {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!(
            "{}{path}{sep}token={}",
            self.serving.origin(),
            self.serving.token()
        )
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(self.with_token(path))
            .header("Content-Type", "application/json")
    }
}

async fn error_of(response: reqwest::Response) -> String {
    let body: serde_json::Value = response.json().await.unwrap();
    body["error"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn every_route_needs_the_token() {
    let f = Fixture::start().await;
    assert!(f.serving.url().starts_with("http://127.0.0.1:"));
    assert_eq!(f.serving.token().len(), 64);
    assert!(f.serving.exposure().is_none(), "loopback is not exposed");
    let wrong = "0".repeat(64);
    for path in [
        "/",
        "/api/sessions",
        "/api/sessions/events",
        "/api/sessions/s1",
        "/api/sessions/s1/events",
        "/api/sessions/s1/agents/main/transcript",
        "/api/sessions/s1/agents/main/transcript/events",
        "/nothing/here",
    ] {
        for url in [f.url(path), format!("{}?token={wrong}", f.url(path))] {
            let response = f.client.get(&url).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{url}");
            let headers = response.headers().clone();
            assert_eq!(headers["cache-control"], "no-store", "{url}");
            assert_eq!(headers["x-content-type-options"], "nosniff", "{url}");
            assert!(error_of(response).await.contains("token"), "{url}");
        }
        let bearer = f
            .client
            .get(f.url(path))
            .bearer_auth(&wrong)
            .send()
            .await
            .unwrap();
        assert_eq!(bearer.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    // The token as a bearer opens the API too.
    let sessions = f
        .client
        .get(f.url("/api/sessions"))
        .bearer_auth(f.serving.token())
        .send()
        .await
        .unwrap();
    assert_eq!(sessions.status(), StatusCode::OK);
    let sessions: Vec<SessionSummary> = sessions.json().await.unwrap();
    assert!(sessions.iter().any(|s| s.id == "s1"), "{sessions:?}");
}

#[tokio::test]
async fn the_page_comes_whole_under_a_strict_policy() {
    let f = Fixture::start().await;
    let response = f.client.get(f.serving.url()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let policy = headers["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap()
        .to_string();
    assert!(policy.contains("default-src 'self'"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let page = response.text().await.unwrap();
    assert!(
        page.contains(&format!("<script nonce=\"{nonce}\">")),
        "{page}"
    );
    assert!(
        page.contains(&format!("<style nonce=\"{nonce}\">")),
        "{page}"
    );
    assert!(
        !page.contains("src=\"dashboard.js\""),
        "the script is inlined"
    );
    // A fresh nonce for the next answer.
    let again = f.client.get(f.serving.url()).send().await.unwrap();
    assert_ne!(
        again.headers()["content-security-policy"],
        headers["content-security-policy"]
    );
}

#[tokio::test]
async fn changes_need_the_pages_origin_and_json() {
    let f = Fixture::start().await;
    let stop = "/api/sessions/s1/tasks/t1/stop";
    let message = "/api/teams/alpha/members/bob/messages";
    let body = serde_json::json!({"text": "hello", "summary": null});
    // No origin, or another one: refused before anything is done.
    for origin in [None, Some("http://evil.example"), Some("null")] {
        for path in [stop, message] {
            let mut request = f.post(path).json(&body);
            if let Some(origin) = origin {
                request = request.header("Origin", origin);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::FORBIDDEN,
                "{path} {origin:?}"
            );
            assert!(error_of(response).await.contains("Origin"));
        }
    }
    // The right origin without JSON: refused too.
    let form = f
        .client
        .post(f.with_token(stop))
        .header("Origin", f.serving.origin())
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("a=b")
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // The right origin and JSON reach the actions (here: none, a read-only dashboard).
    let done = f
        .post(stop)
        .header("Origin", f.serving.origin())
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::CONFLICT);
    assert!(error_of(done).await.contains("read-only"));
    // A body past the limit is refused unread.
    let huge = serde_json::json!({"text": "x".repeat(100 * 1024)});
    let big = f
        .post(message)
        .header("Origin", f.serving.origin())
        .json(&huge)
        .send()
        .await
        .unwrap();
    assert_eq!(big.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// Reads server-sent events off `response` until one named `name`; its data.
async fn next_event<B: AsRef<[u8]>>(
    stream: &mut (impl futures::Stream<Item = reqwest::Result<B>> + Unpin),
    buffer: &mut String,
    name: &str,
) -> String {
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut event = "message";
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            if event == name {
                return data;
            }
        }
        let chunk = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("an event within the wait")
            .expect("the stream goes on")
            .unwrap();
        buffer.push_str(&String::from_utf8_lossy(chunk.as_ref()));
    }
}

#[tokio::test]
async fn a_sessions_stream_starts_with_its_snapshot() {
    let f = Fixture::start().await;
    let missing = f
        .client
        .get(f.with_token("/api/sessions/nope/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let response = f
        .client
        .get(f.with_token("/api/sessions/s1/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let data = next_event(&mut stream, &mut buffer, "snapshot").await;
    let snapshot: Snapshot = serde_json::from_str(&data).unwrap();
    assert_eq!(snapshot.session.id, "s1");
    assert!(
        !snapshot.actions.stop_task,
        "a read-only dashboard offers no stop"
    );
}

#[tokio::test]
async fn the_list_of_sessions_streams_from_its_first_event() {
    let f = Fixture::start().await;
    let refused = f
        .client
        .get(f.url("/api/sessions/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let response = f
        .client
        .get(f.with_token("/api/sessions/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let ids = |data: &str| -> Vec<String> {
        let list: Vec<SessionSummary> = serde_json::from_str(data).unwrap();
        list.into_iter().map(|s| s.id).collect()
    };
    let first = ids(&next_event(&mut stream, &mut buffer, "sessions").await);
    assert_eq!(first, ["s1"]);
    // A session that starts later comes down the same stream, without asking again.
    let _second = f.hub.attach_live("s2", f.home.path(), Some("claude-test"));
    loop {
        let list = ids(&next_event(&mut stream, &mut buffer, "sessions").await);
        if list.iter().any(|id| id == "s2") {
            assert!(list.iter().any(|id| id == "s1"), "{list:?}");
            break;
        }
    }
}
