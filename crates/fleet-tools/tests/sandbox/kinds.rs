//! The always-on kinds: read-only agents, the verification agent's scratch space, and
//! read-only commands of every agent.

use super::*;

#[tokio::test]
async fn a_read_only_agent_writes_nothing_but_its_private_temp() {
    let p = Project::new();
    let sandbox = p.sandbox(SandboxKind::ReadOnly, SandboxConfig::default(), &[]);
    let ctx = p.context(&sandbox);
    let out = bash(&ctx, "echo x > src/lib.rs").await;
    assert!(out.is_error, "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(p.root.join("src/lib.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(
        out.content.contains("denied by the sandbox"),
        "{}",
        out.content
    );

    let ok = bash(
        &ctx,
        "f=$(mktemp) && echo kept > \"$f\" && cat \"$f\" && echo \"$TMPDIR\"",
    )
    .await;
    assert!(!ok.is_error, "{}", ok.content);
    assert!(ok.content.contains("kept"), "{}", ok.content);
    let temp = sandbox.temp_dir().unwrap();
    assert!(ok
        .content
        .contains(&temp.canonicalize().unwrap().display().to_string()));
    assert!(temp.is_dir());
    drop(ctx);
    drop(sandbox);
    assert!(
        !temp.exists(),
        "the private temp folder is removed with the sandbox"
    );
}

#[tokio::test]
async fn the_scratch_kind_writes_only_its_scratch_folder() {
    let p = Project::new();
    let sandbox = p.sandbox(
        SandboxKind::Scratch(p.outside.clone()),
        SandboxConfig::default(),
        &[],
    );
    let ctx = p.context(&sandbox);
    let ok = bash(&ctx, &format!("echo t > {}/check.txt", p.outside.display())).await;
    assert!(!ok.is_error, "{}", ok.content);
    let out = bash(&ctx, "echo x >> src/lib.rs").await;
    assert!(out.is_error, "{}", out.content);
}

#[tokio::test]
async fn read_only_commands_run_confined_even_without_sandbox_settings() {
    let p = Project::new();
    let sandbox = p.sandbox(SandboxKind::Standard, SandboxConfig::default(), &[]);
    let ctx = p.context(&sandbox);
    // Accepted by the read-only classifier, so confined: the seccomp filter shows.
    let out = bash(&ctx, "grep Seccomp: /proc/self/status").await;
    assert!(out.content.contains('2'), "{}", out.content);
    // Not read-only, and the sandbox is not enabled: unconfined, as before.
    let out = bash(&ctx, "grep Seccomp: /proc/self/status && touch made").await;
    assert!(
        !out.is_error && out.content.contains('0'),
        "{}",
        out.content
    );
    assert!(p.root.join("made").exists());
    // Nothing at all for the unconfined kind.
    let bare = Arc::new(AgentSandbox::unconfined());
    let out = bash(&p.context(&bare), "grep Seccomp: /proc/self/status").await;
    assert!(out.content.contains('0'), "{}", out.content);
}

#[tokio::test]
async fn auto_allow_covers_commands_the_sandbox_confines() {
    let p = Project::new();
    let config = SandboxConfig {
        enabled: true,
        auto_allow_bash: true,
        ..SandboxConfig::default()
    };
    let sandbox = p.sandbox(SandboxKind::Standard, config, &[]);
    assert!(sandbox.auto_allows("make build", &p.root));
    let off = p.sandbox(SandboxKind::Standard, SandboxConfig::default(), &[]);
    assert!(!off.auto_allows("make build", &p.root));
}

/// The capability sets of a process, as `/proc/self/status` prints them.
fn capability_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("Cap")).collect()
}

#[tokio::test]
async fn sandboxed_commands_hold_no_capabilities_even_as_root() {
    let p = Project::new();
    let sandbox = p.sandbox(SandboxKind::ReadOnly, SandboxConfig::default(), &[]);
    // A child of the shell too: nothing can be regained by exec.
    let out = bash(&p.context(&sandbox), "grep ^Cap /proc/self/status").await;
    let lines = capability_lines(&out.content);
    assert_eq!(lines.len(), 5, "{}", out.content);
    for line in lines {
        let mask = line.split_whitespace().nth(1).unwrap();
        assert!(mask.chars().all(|c| c == '0'), "{line}\n{}", out.content);
    }
    // Unconfined, root keeps them (this is what the sandbox takes away).
    if nix::unistd::geteuid().is_root() {
        let bare = Arc::new(AgentSandbox::unconfined());
        let out = bash(&p.context(&bare), "grep ^CapEff /proc/self/status").await;
        assert!(
            !out.content.trim_end().ends_with("0000000000000000"),
            "{}",
            out.content
        );
    }
}
