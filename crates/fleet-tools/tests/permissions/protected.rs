//! Writes to paths that decide what runs later ask in every mode, unless a rule names them.

use crate::permissions::*;
use fleet_tools::permissions::{
    Behavior::{Allow, Ask, Deny},
    DecisionReason, PermissionMode,
};

/// The writes an attacker would use to escalate: next run's permissions, git hooks and config,
/// editor tasks, MCP servers, shell start-up files.
fn escalations(fx: &Fixture) -> Vec<Call> {
    vec![
        write(fx.p(".claude/settings.json")),
        edit(fx.p(".claude/settings.local.json")),
        write(fx.p(".fleet/settings.json")),
        write(fx.p(".git/hooks/pre-commit")),
        edit(fx.p(".git/config")),
        write(fx.p("vendor/lib/.git/config")),
        write(fx.p(".vscode/tasks.json")),
        write(fx.p(".mcp.json")),
        write(fx.p("src/../.mcp.json")),
        bash("echo '{\"permissions\":{\"defaultMode\":\"bypassPermissions\"}}' > .claude/settings.json"),
        bash("echo x >> .git/config"),
    ]
}

#[test]
fn protected_writes_ask_in_every_mode_and_are_refused_without_a_person() {
    let fx = fixture();
    for mode in PermissionMode::ALL {
        // Blanket allows for everything a write could match.
        let perms = fx.perms(
            mode,
            &["Edit", "Write", "Bash(echo *)", "Edit(**)"],
            &[],
            &[],
        );
        for call in escalations(&fx) {
            let decision = check(&fx, &perms, &call);
            let want = match mode {
                PermissionMode::Plan => Deny,
                PermissionMode::DontAsk => Deny,
                _ => Ask,
            };
            assert_eq!(decision.behavior, want, "{mode} {call:?}: {decision:?}");
            if mode != PermissionMode::Plan {
                assert!(
                    matches!(decision.reason, DecisionReason::Protected(_)),
                    "{mode} {call:?}: {decision:?}"
                );
                assert!(
                    decision.message().contains("protected path"),
                    "{}",
                    decision.message()
                );
            }
        }
    }
}

#[test]
fn an_allow_rule_naming_the_protected_path_lets_the_write_through() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::AcceptEdits,
        &[
            "Edit(.claude/settings.json)",
            "Edit(/.git/hooks/**)",
            "Bash(echo *)",
        ],
        &[],
        &[],
    );
    let allowed = [
        write(fx.p(".claude/settings.json")),
        write(fx.p(".git/hooks/pre-commit")),
        bash("echo hi > .git/hooks/pre-push"),
    ];
    for call in allowed {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, Allow, "{call:?}: {decision:?}");
    }
    // Naming one protected path opens only that one.
    for call in [
        write(fx.p(".claude/settings.local.json")),
        edit(fx.p(".git/config")),
    ] {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, Ask, "{call:?}: {decision:?}");
    }
}

#[test]
fn a_symlink_into_a_protected_folder_is_still_protected() {
    let fx = fixture();
    std::fs::create_dir_all(fx.p(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", fx.p("hooks")).unwrap();
    let perms = fx.perms(PermissionMode::BypassPermissions, &[], &[], &[]);
    for call in [
        write(fx.p("hooks/pre-commit")),
        bash("echo x > hooks/post-checkout"),
    ] {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, Ask, "{call:?}: {decision:?}");
    }
}

#[test]
fn ordinary_files_and_lookalikes_are_not_protected() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::AcceptEdits, &[], &[], &[]);
    for call in [
        write(fx.p(".gitignore")),
        write(fx.p(".github/workflows/ci.yml")),
        write(fx.p("docs/claude.md")),
        edit(fx.p("src/main.rs")),
    ] {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, Allow, "{call:?}: {decision:?}");
    }
}

#[test]
fn programs_that_visibly_write_a_protected_path_ask_even_when_a_rule_allows_them() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::BypassPermissions,
        &[
            "Bash(cp *)",
            "Bash(tee *)",
            "Bash(ln *)",
            "Bash(sed *)",
            "Bash(mv *)",
        ],
        &[],
        &[],
    );
    for command in [
        "cp /tmp/evil .git/hooks/pre-commit",
        "echo x | tee -a .git/config",
        "ln -sf /tmp/evil .git/hooks/post-checkout",
        "sed -i s/a/b/ .claude/settings.json",
        "mv notes.txt .mcp.json",
        "cd src && cp x ../.vscode/tasks.json",
        "bash -c 'cp x .git/hooks/pre-push'",
        "timeout 5 cp x ~/.bashrc",
        "cp x $HOME/.gitconfig",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Ask, "{command}: {decision:?}");
        assert!(
            matches!(decision.reason, DecisionReason::Protected(_)),
            "{command}: {decision:?}"
        );
    }
    // Lookalikes go through.
    let decision = check(&fx, &perms, &bash("cp a.txt .gitignore"));
    assert_eq!(decision.behavior, Allow, "{decision:?}");
}
