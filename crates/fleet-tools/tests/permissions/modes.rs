//! Modes, the order rules are weighed in, and the workspace boundary.

use crate::permissions::*;
use fleet_tools::permissions::{
    Behavior::{self, Allow, Ask, Deny},
    CommandLinePermissions, DecisionReason, PermissionMode, PermissionSettings, Permissions,
    SettingsSource,
};
use fleet_tools::workspace::Workspace;

#[test]
fn each_mode_decides_reads_writes_and_commands() {
    let fx = fixture();
    use PermissionMode::*;
    // read inside, read outside, write inside, command, tool touching nothing
    let table = [
        (Default, [Allow, Allow, Ask, Ask, Ask]),
        (AcceptEdits, [Allow, Allow, Allow, Ask, Ask]),
        (Plan, [Allow, Allow, Deny, Deny, Deny]),
        (BypassPermissions, [Allow, Allow, Allow, Allow, Allow]),
        (DontAsk, [Allow, Allow, Deny, Deny, Deny]),
    ];
    for (mode, expected) in table {
        let perms = fx.perms(mode, &[], &[], &[]);
        let calls = [
            read(fx.p("src/main.rs")),
            read(fx.outside.join("secret.txt")),
            write(fx.p("src/new.rs")),
            bash("ls"),
            other("WebFetch"),
        ];
        for (call, want) in calls.iter().zip(expected) {
            let decision = check(&fx, &perms, call);
            assert_eq!(decision.behavior, want, "{mode} {call:?}: {decision:?}");
            assert_eq!(
                decision.reason,
                DecisionReason::Mode(mode),
                "{mode} {call:?}"
            );
        }
    }
}

#[test]
fn writes_escaping_the_workspace_are_denied_in_every_mode() {
    let fx = fixture();
    let secret = fx.outside.join("secret.txt");
    let escapes = [
        ("..", write(fx.p("src/../../outside/secret.txt")), &secret),
        ("symlink", edit(fx.p("link/secret.txt")), &secret),
        (
            "nested symlink",
            write(fx.p("docs/escape/new.txt")),
            &fx.outside.join("new.txt"),
        ),
        ("absolute", write(secret.clone()), &secret),
        ("relative", write("../outside/secret.txt"), &secret),
    ];
    for mode in PermissionMode::ALL {
        let perms = fx.perms(mode, &["Edit", "Write"], &[], &[]);
        for (how, call, lands) in &escapes {
            let decision = check(&fx, &perms, call);
            assert_eq!(decision.behavior, Deny, "{mode} via {how}: {decision:?}");
            let want = match mode {
                PermissionMode::Plan => DecisionReason::Mode(mode),
                _ => DecisionReason::OutsideWorkspace(lands.to_path_buf()),
            };
            assert_eq!(decision.reason, want, "{mode} via {how}");
        }
    }
    // A write through a symlink that stays inside is an ordinary inside write.
    let perms = fx.perms(PermissionMode::AcceptEdits, &[], &[], &[]);
    assert_eq!(
        check(&fx, &perms, &edit(fx.p("alias/main.rs"))).behavior,
        Allow
    );
}

#[test]
fn an_allow_rule_naming_an_outside_path_opens_it() {
    let fx = fixture();
    let outside_rule = format!("Edit(/{}/**)", fx.outside.display());
    let secret = fx.outside.join("secret.txt");
    #[rustfmt::skip]
    let cases: &[(&str, Call, Behavior)] = &[
        (&outside_rule, write(secret.clone()), Allow),
        (&outside_rule, edit(fx.p("link/secret.txt")), Allow),
        (&outside_rule, write(fx.p("src/../../outside/secret.txt")), Allow),
        (&outside_rule, write(fx.root.join("shared/x")), Deny),
        // A rule naming the link covers where it points.
        ("Edit(/link/**)", write(secret.clone()), Allow),
        ("Edit(./link/secret.txt)", edit(fx.p("link/secret.txt")), Allow),
        // A rule for a folder inside does not vouch for a symlink in it that leads out.
        ("Edit(/docs/**)", write(fx.p("docs/escape/new.txt")), Deny),
        // A bare Edit names no path, so it cannot open the boundary.
        ("Edit", write(secret.clone()), Deny),
    ];
    for (rule, call, want) in cases {
        for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
            let perms = fx.perms(mode, &[rule], &[], &[]);
            let decision = check(&fx, &perms, call);
            assert_eq!(
                decision.behavior, *want,
                "{mode} {rule} {call:?}: {decision:?}"
            );
        }
    }
}

#[test]
fn added_folders_take_writes() {
    let fx = fixture();
    let shared = fx.root.join("shared/notes.md");
    let cli = CommandLinePermissions {
        add_dirs: vec![PathBuf::from("../shared")],
        mode: Some(PermissionMode::AcceptEdits),
        ..Default::default()
    };
    let perms =
        Permissions::from_sources(Workspace::new(&fx.project), &[], &cli, &fx.project).unwrap();
    assert_eq!(check(&fx, &perms, &write(shared.clone())).behavior, Allow);
    assert_eq!(
        check(&fx, &perms, &write(fx.outside.join("x"))).behavior,
        Deny
    );

    let settings: PermissionSettings =
        serde_json::from_str(r#"{"additionalDirectories": ["../shared", "~/notes"]}"#).unwrap();
    let source = SettingsSource {
        settings,
        base: fx.project.clone(),
        name: fx.settings_name(),
    };
    let mut builder = Permissions::builder(Workspace::new(&fx.project));
    builder.home(Some(fx.home.clone()));
    builder
        .settings(&source.settings, &source.base, &source.name)
        .unwrap();
    let perms = builder.build();
    assert!(perms.workspace.contains(&fx.root.join("shared")));
    assert!(perms.workspace.contains(&fx.home.join("notes/today.md")));
    assert_eq!(check(&fx, &perms, &write(shared)).behavior, Ask);
}

/// A list of rule texts.
type Rules<'a> = &'a [&'a str];

#[test]
fn deny_beats_allow_and_ask_beats_allow() {
    let fx = fixture();
    #[rustfmt::skip]
    let cases: &[(Rules, Rules, Rules, Call, Behavior, &str)] = &[
        (&["Bash"], &[], &["Bash(rm *)"], bash("rm -rf x"), Deny, "Bash(rm *)"),
        (&["Bash(rm *)"], &["Bash(rm *)"], &["Bash(rm *)"], bash("rm x"), Deny, "Bash(rm *)"),
        (&["Bash"], &["Bash(git push *)"], &[], bash("git push origin"), Ask, "Bash(git push *)"),
        (&["Edit"], &[], &["Edit(./.env)"], edit(fx.p(".env")), Deny, "Edit(./.env)"),
        (&["Read"], &["Read(./secrets)"], &[], read(fx.p("secrets/key")), Ask, "Read(./secrets)"),
        (&["Edit"], &[], &[], edit(fx.p("src/main.rs")), Allow, "Edit"),
    ];
    for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
        for (allow, ask, deny, call, want, rule) in cases {
            let perms = fx.perms(mode, allow, ask, deny);
            let decision = check(&fx, &perms, call);
            assert_eq!(decision.behavior, *want, "{mode} {call:?}: {decision:?}");
            assert_eq!(rule_text(&decision).as_deref(), Some(*rule), "{call:?}");
        }
    }
}

#[test]
fn ask_rules_ask_even_in_bypass_and_deny_in_dont_ask() {
    let fx = fixture();
    let call = bash("git push origin main");
    let (allow, ask) = (["Bash(git *)"], ["Bash(git push *)"]);
    let bypass = fx.perms(PermissionMode::BypassPermissions, &allow, &ask, &[]);
    assert_eq!(check(&fx, &bypass, &call).behavior, Ask);
    let dont_ask = fx.perms(PermissionMode::DontAsk, &allow, &ask, &[]);
    let decision = check(&fx, &dont_ask, &call);
    assert_eq!(decision.behavior, Deny);
    assert_eq!(rule_text(&decision).as_deref(), Some("Bash(git push *)"));
    assert!(
        decision.message().contains("dontAsk"),
        "{}",
        decision.message()
    );
    // dontAsk still runs what a rule allows.
    assert_eq!(check(&fx, &dont_ask, &bash("git status")).behavior, Allow);
    assert_eq!(check(&fx, &dont_ask, &bash("make")).behavior, Deny);
}

#[test]
fn plan_mode_only_looks() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::Plan,
        &["Bash", "Bash(ls)", "Edit"],
        &[],
        &[],
    );
    for call in [
        bash("ls"),
        edit(fx.p("src/main.rs")),
        write(fx.p("new.txt")),
    ] {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, Deny, "{call:?}");
        assert_eq!(decision.reason, DecisionReason::Mode(PermissionMode::Plan));
        assert!(
            decision.message().contains("plan mode"),
            "{}",
            decision.message()
        );
    }
    assert_eq!(check(&fx, &perms, &grep(fx.p("src"))).behavior, Allow);
    // A deny rule still names itself in plan mode.
    let perms = fx.perms(PermissionMode::Plan, &[], &[], &["Read(./.env)"]);
    let decision = check(&fx, &perms, &read(fx.p(".env")));
    assert_eq!(rule_text(&decision).as_deref(), Some("Read(./.env)"));
}

/// What a hook's `allow` may answer: a question a person would have been asked, in dontAsk
/// too, where that question became a refusal; never a deny rule, plan mode or the boundary.
#[test]
fn only_decisions_that_would_ask_are_approvable() {
    let fx = fixture();
    use PermissionMode::*;
    for mode in [Default, DontAsk] {
        let perms = fx.perms(mode, &[], &["Bash(git push *)"], &["Bash(rm *)"]);
        assert!(check(&fx, &perms, &bash("ls")).is_approvable(), "{mode}");
        assert!(
            check(&fx, &perms, &bash("git push origin")).is_approvable(),
            "{mode}: ask rule"
        );
        let denied = check(&fx, &perms, &bash("rm -rf x"));
        assert_eq!(denied.behavior, Deny);
        assert!(!denied.is_approvable(), "{mode}: deny rule");
        let escaping = check(&fx, &perms, &write(fx.outside.join("x.txt")));
        assert!(!escaping.is_approvable(), "{mode}: outside the workspace");
    }
    let plan = fx.perms(Plan, &[], &[], &[]);
    assert!(!check(&fx, &plan, &bash("touch x")).is_approvable());
}
