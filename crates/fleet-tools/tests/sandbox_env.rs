//! Secrets in fleet's environment stay out of the Bash tool's processes. Its own test binary,
//! as it changes this process's environment.
#![allow(clippy::unwrap_used)]

use fleet_tools::builtin::BashTool;
use fleet_tools::sandbox::AgentSandbox;
use fleet_tools::{Tool, ToolContext, Workspace};
use serde_json::json;
use std::sync::Arc;

const SECRETS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "DB_PASSWORD",
    "STRIPE_SECRET",
];

#[tokio::test]
async fn printenv_in_bash_shows_no_secrets() {
    // One test in this binary, before any other thread reads the environment.
    for name in SECRETS {
        std::env::set_var(name, "sk-do-not-leak");
    }
    std::env::set_var("FLEET_TEST_HARMLESS", "visible");
    let dir = tempfile::tempdir().unwrap();
    for sandbox in [AgentSandbox::off(), AgentSandbox::unconfined()] {
        let ctx = ToolContext::new(
            dir.path().to_path_buf(),
            Arc::new(Workspace::new(dir.path())),
        )
        .with_sandbox(Arc::new(sandbox));
        let out = BashTool::with_max_output(100_000)
            .call(
                json!({"command": "printenv; env | grep -c do-not-leak || true"}),
                &ctx,
            )
            .await
            .unwrap();
        assert!(
            out.content.contains("FLEET_TEST_HARMLESS=visible"),
            "{}",
            out.content
        );
        assert!(!out.content.contains("sk-do-not-leak"), "{}", out.content);
        for name in SECRETS {
            assert!(
                !out.content.contains(name),
                "{name} leaked: {}",
                out.content
            );
        }
    }
}
