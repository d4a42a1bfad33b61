//! What a running session changes: the mode, shared by copies unless one took its own, and
//! rules and folders granted on top of the settings.

use super::*;
use fleet_tools::permissions::Behavior;

#[test]
fn a_mode_change_reaches_every_copy_that_shares_it() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::Default, &[], &[], &[]);
    let copy = perms.clone();
    let mut own = perms.clone();
    own.set_own_mode(PermissionMode::Plan);
    let call = write(fx.p("src/new.rs"));
    assert_eq!(check(&fx, &copy, &call).behavior, Behavior::Ask);

    perms.change_mode(PermissionMode::AcceptEdits);
    assert_eq!(copy.mode(), PermissionMode::AcceptEdits);
    assert_eq!(check(&fx, &copy, &call).behavior, Behavior::Allow);
    assert_eq!(own.mode(), PermissionMode::Plan, "its own mode stays");
    assert_eq!(check(&fx, &own, &call).behavior, Behavior::Deny);
}

#[test]
fn a_granted_rule_joins_the_settings_rules_for_every_copy() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::Default, &["Bash(git status)"], &[], &[]);
    let copy = perms.clone();
    let line = bash("git status && npm test");
    assert_eq!(check(&fx, &copy, &line).behavior, Behavior::Ask);

    perms
        .grant_rules(
            RuleKind::Allow,
            &["Bash(npm test)".to_string()],
            &fx.project,
            "session",
        )
        .unwrap();
    // The two rules vouch for the two parts of one line together.
    let decision = check(&fx, &copy, &line);
    assert_eq!(decision.behavior, Behavior::Allow, "{decision:?}");

    perms
        .grant_rules(
            RuleKind::Deny,
            &["Bash(npm *)".to_string()],
            &fx.project,
            "session",
        )
        .unwrap();
    assert_eq!(check(&fx, &copy, &line).behavior, Behavior::Deny);
    assert_eq!(
        perms.revoke_rules(RuleKind::Deny, &["Bash(npm *)".to_string()]),
        1
    );
    assert_eq!(check(&fx, &copy, &line).behavior, Behavior::Allow);
}

#[test]
fn a_granted_folder_takes_writes_in_accept_edits_mode() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::AcceptEdits, &[], &[], &[]);
    let call = write(fx.outside.join("notes.md"));
    assert_eq!(check(&fx, &perms, &call).behavior, Behavior::Deny);

    perms.grant_dirs(std::slice::from_ref(&fx.outside));
    assert_eq!(perms.granted_dirs(), std::slice::from_ref(&fx.outside));
    assert_eq!(check(&fx, &perms, &call).behavior, Behavior::Allow);
    perms.revoke_dirs(std::slice::from_ref(&fx.outside));
    assert_eq!(check(&fx, &perms, &call).behavior, Behavior::Deny);
}
