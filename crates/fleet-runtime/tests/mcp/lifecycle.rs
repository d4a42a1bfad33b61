//! A server's rest and return: `suspend` (a stopped teammate's own server) ends the process,
//! and the next call starts a new one; `stop` (an agent that ended) ends it for good.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{connect, wait_gone};

#[tokio::test]
async fn a_suspended_server_is_gone_until_the_next_call_starts_it_again() {
    let conn = connect("fault", &[]).await;
    let first = conn.server_pid().await.unwrap();
    conn.suspend().await;
    assert!(wait_gone(first).await, "the process ends at once");
    assert!(conn.server_pid().await.is_none());
    let out = conn
        .call("echo", json!({"text": "back"}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.content, "back");
    let second = conn.server_pid().await.unwrap();
    assert_ne!(first, second, "a new process answered");
    conn.shutdown().await;
    assert!(wait_gone(second).await);
}

#[tokio::test]
async fn a_stopped_server_stays_stopped() {
    let conn = connect("fault", &[]).await;
    let pid = conn.server_pid().await.unwrap();
    conn.stop().await;
    assert!(wait_gone(pid).await);
    let err = conn
        .call("echo", json!({"text": "again"}), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("stopped with the agent"), "{err}");
}
