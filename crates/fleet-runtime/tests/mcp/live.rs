//! `McpLive`: an agent's MCP tools after a `list_changed`, by what its grant gave it.

use std::sync::Arc;
use std::time::Duration;

use fleet_runtime::mcp::{McpLive, McpTool};
use fleet_tools::{Tool, ToolPool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::connect;

fn pool_of(tools: Vec<McpTool>, keep: impl Fn(&str) -> bool) -> ToolPool {
    let mut pool = ToolPool::builtin();
    for tool in tools {
        if keep(tool.name()) {
            pool.insert(Arc::new(tool));
        }
    }
    pool
}

fn has(pool: &ToolPool, name: &str) -> bool {
    pool.names().contains(&name)
}

#[tokio::test]
async fn a_whole_server_grant_gets_new_tools_and_a_named_grant_does_not() {
    let conn = Arc::new(connect("fault", &[]).await);
    let mut whole = pool_of(McpTool::all(&conn).await, |_| true);
    let mut named = pool_of(McpTool::all(&conn).await, |name| {
        name == "mcp__fault__echo" || name == "mcp__fault__change_tools"
    });
    let mut whole_live = McpLive::watch(vec![conn.clone()], false).unwrap();
    let mut named_live = McpLive::watch(vec![conn.clone()], false).unwrap();
    // The first look finds the pools current: nothing to show the model again.
    assert!(!whole_live.refresh(&mut whole).await);
    assert!(!named_live.refresh(&mut named).await);

    conn.call("change_tools", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    // The result and the notification race inside rmcp; refresh until the listing moves.
    let mut changed = false;
    for _ in 0..300 {
        if whole_live.refresh(&mut whole).await {
            changed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(changed, "the whole-server agent never saw the change");
    assert!(has(&whole, "mcp__fault__extra"));
    assert!(has(&whole, "Read"), "built-in tools are untouched");

    assert!(
        !named_live.refresh(&mut named).await,
        "an agent granted two tools keeps exactly those"
    );
    assert!(!has(&named, "mcp__fault__extra"));
    assert!(has(&named, "mcp__fault__echo") && has(&named, "mcp__fault__change_tools"));
    assert!(!has(&named, "mcp__fault__add"));
}

#[tokio::test]
async fn a_read_only_agent_keeps_only_tools_the_server_marks_read_only() {
    let conn = Arc::new(connect("fault", &[]).await);
    let mut pool = pool_of(McpTool::all(&conn).await, |_| true);
    let mut live = McpLive::watch(vec![conn.clone()], true).unwrap();
    conn.call("change_tools", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    let mut changed = false;
    for _ in 0..300 {
        if live.refresh(&mut pool).await {
            changed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(changed);
    let mcp: Vec<&str> = pool
        .names()
        .into_iter()
        .filter(|n| n.starts_with("mcp__fault__"))
        .collect();
    assert_eq!(
        mcp,
        ["mcp__fault__echo", "mcp__fault__add"],
        "only the tools the server marks readOnlyHint (not the new `extra`)"
    );
}
