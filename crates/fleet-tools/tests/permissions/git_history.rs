//! Issue 30, item 10: a `Read(./.env)` deny rule is not bypassed through git: while any Read
//! deny rule exists, git commands that print file contents are denied when they name a denied
//! path and ask otherwise, in every mode, whatever allow rule would cover them.

use crate::permissions::*;
use fleet_tools::permissions::{
    Behavior::{Allow, Ask, Deny},
    PermissionMode,
};

const NAMING: &[&str] = &[
    "git show HEAD~1:.env",
    "git show HEAD:./.env",
    "git cat-file -p HEAD:.env",
    "git log -p -- .env",
    "git diff HEAD~3 -- .env",
    "git blame .env",
    "git grep -n KEY HEAD -- .env",
];

const PRINTING: &[&str] = &[
    "git log -p",
    "git log --patch -3",
    "git diff",
    "git diff HEAD~1",
    "git show",
    "git cat-file -p 1234abcd",
    "git archive HEAD",
    "git grep KEY",
    "git stash show -p",
    "git -C . log -p",
    "git show HEAD~1 | head",
];

#[test]
fn git_printing_a_denied_file_is_denied_naming_the_read_rule() {
    let fx = fixture();
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let perms = fx.perms(mode, &["Bash(git *)"], &[], &["Read(./.env)"]);
        for command in NAMING {
            let decision = check(&fx, &perms, &bash(command));
            assert_eq!(decision.behavior, Deny, "{mode} {command:?}: {decision:?}");
            assert_eq!(rule_text(&decision).as_deref(), Some("Read(./.env)"));
            assert!(decision.message().contains("Read(./.env)"));
        }
        for command in PRINTING {
            let decision = check(&fx, &perms, &bash(command));
            assert_eq!(decision.behavior, Ask, "{mode} {command:?}: {decision:?}");
            assert!(
                decision.message().contains("Read(./.env)"),
                "{}",
                decision.message()
            );
        }
        // git that prints no contents is not affected.
        for command in ["git status", "git log --oneline -5", "git branch -a"] {
            let decision = check(&fx, &perms, &bash(command));
            assert_eq!(decision.behavior, Allow, "{mode} {command:?}: {decision:?}");
        }
    }
}

#[test]
fn without_a_read_deny_rule_git_history_is_read_as_before() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::Default,
        &["Bash(git *)"],
        &[],
        &["Edit(./.env)"],
    );
    for command in NAMING.iter().chain(PRINTING).filter(|c| !c.contains('|')) {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Allow, "{command:?}: {decision:?}");
    }
}
