//! A kernel without Landlock, simulated with `FLEET_SANDBOX_UNAVAILABLE=1`: one warning and the
//! old behaviour, or a refusal with `failIfUnavailable`; read-only agents refuse Bash unless
//! the user allows them to run it unsandboxed. Its own test binary, as it changes this
//! process's environment.
#![allow(clippy::unwrap_used)]

use fleet_tools::builtin::BashTool;
use fleet_tools::sandbox::{
    set_warning_handler, AgentSandbox, SandboxConfig, SandboxKind, SandboxRefusal,
};
use fleet_tools::{Tool, ToolContext, ToolError, Workspace};
use serde_json::json;
use std::sync::{Arc, Mutex};

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn record(message: &str) {
    WARNINGS.lock().unwrap().push(message.to_string());
}

#[tokio::test]
async fn without_landlock_bash_warns_once_and_runs_as_before_or_refuses() {
    std::env::set_var("FLEET_SANDBOX_UNAVAILABLE", "1");
    set_warning_handler(record);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let context_of = |kind: SandboxKind, config: SandboxConfig| {
        let sandbox = AgentSandbox::new(kind, Arc::new(config), None);
        ToolContext::new(root.clone(), Arc::new(Workspace::new(&root)))
            .with_sandbox(Arc::new(sandbox))
    };
    let context = |config: SandboxConfig| context_of(SandboxKind::ReadOnly, config);

    // A read-only agent (Explore, Plan, plan mode, verification) refuses to run Bash
    // unconfined, saying why and how the user lifts it.
    for kind in [SandboxKind::ReadOnly, SandboxKind::Scratch(root.clone())] {
        let refused = context_of(kind, SandboxConfig::default());
        let err = BashTool::default()
            .call(json!({"command": "touch refused"}), &refused)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                ToolError::Sandbox { refusal, .. }
                    if matches!(**refusal, SandboxRefusal::ReadOnlyUnsandboxed(_))
            ),
            "{err}"
        );
        assert!(err.is_refusal());
        let why = err.to_string();
        assert!(
            why.contains("read-only") && why.contains("unavailable"),
            "{why}"
        );
        assert!(why.contains("sandbox.allowUnsandboxedReadOnly"), "{why}");
        assert!(!root.join("refused").exists());
    }

    // With the user's consent it runs as before, with one warning.
    let ctx = context(SandboxConfig {
        allow_unsandboxed_read_only: true,
        ..SandboxConfig::default()
    });
    for name in ["a", "b"] {
        let out = BashTool::default()
            .call(
                json!({"command": format!("touch {name} && grep Seccomp: /proc/self/status")}),
                &ctx,
            )
            .await
            .unwrap();
        assert!(
            !out.is_error && out.content.contains('0'),
            "{}",
            out.content
        );
        assert!(root.join(name).exists());
    }
    let warnings = WARNINGS.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("FLEET_SANDBOX_UNAVAILABLE"),
        "{warnings:?}"
    );

    // An ordinary agent runs unconfined, as before.
    let ordinary = context_of(SandboxKind::Standard, SandboxConfig::default());
    let out = BashTool::default()
        .call(json!({"command": "touch d"}), &ordinary)
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(root.join("d").exists());

    let strict = context(SandboxConfig {
        fail_if_unavailable: true,
        allow_unsandboxed_read_only: true,
        ..SandboxConfig::default()
    });
    let err = BashTool::default()
        .call(json!({"command": "touch c"}), &strict)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            ToolError::Sandbox { refusal, .. } if matches!(**refusal, SandboxRefusal::Unavailable(_))
        ),
        "{err}"
    );
    assert!(err.to_string().contains("failIfUnavailable"), "{err}");
    assert!(!root.join("c").exists());
}
