//! Parsing rules, rule lists, messages, and merging settings with the command line.

use crate::permissions::*;
use fleet_tools::permissions::Behavior::{Allow, Deny};
use fleet_tools::permissions::{
    split_rule_list, CommandLinePermissions, PermissionMode, PermissionSettings, Permissions,
    RuleKind, RuleProblem, RuleSet, SettingsSource,
};
use fleet_tools::workspace::Workspace;

#[test]
fn malformed_rules_name_their_source() {
    let cases = [
        ("Bash(", "missing `)`"),
        ("(x)", "no tool name"),
        ("", "empty"),
        ("   ", "empty"),
        ("Bash)", "without `(`"),
        ("bash(ls)", "write `Bash`"),
        ("Bash(:*)", "`:*`"),
        ("Read(~bob/x)", "~user"),
        ("Bad Name", "not a tool name"),
        ("Edit(x)y", "missing `)`"),
    ];
    let source = "/p/.claude/settings.json";
    for (text, hint) in cases {
        let mut rules = RuleSet::default();
        let err = rules
            .add(RuleKind::Allow, text, PathBuf::from("/p"), source)
            .unwrap_err();
        assert_eq!((err.origin.as_str(), err.rule.as_str()), (source, text));
        let shown = err.to_string();
        assert!(
            shown.starts_with("/p/.claude/settings.json: invalid permission rule")
                && shown.contains(hint),
            "{text:?}: {shown}"
        );
        assert!(rules.is_empty());
    }
    // From the command line, the flag is the source.
    let cli = CommandLinePermissions {
        allowed_tools: vec!["Read Bash(git *".into()],
        ..Default::default()
    };
    let err =
        Permissions::from_sources(Workspace::new("/"), &[], &cli, Path::new("/")).unwrap_err();
    assert_eq!(
        (err.origin.as_str(), err.rule.as_str()),
        ("--allowedTools", "Bash(git *")
    );
}

#[test]
fn malformed_rules_keep_what_is_wrong() {
    let problem = |text: &str| {
        RuleSet::default()
            .add(
                RuleKind::Deny,
                text,
                PathBuf::from("/p"),
                "--disallowedTools",
            )
            .unwrap_err()
            .problem
    };
    assert_eq!(
        problem("Bash(git *"),
        RuleProblem::UnclosedParenthesis {
            tool: "Bash".into()
        }
    );
    assert_eq!(
        problem("bash(ls)"),
        RuleProblem::WrongCase { known: "Bash" }
    );
    assert_eq!(problem("Bash(:*)"), RuleProblem::EmptyPrefix);
    assert_eq!(
        problem("Bad Name"),
        RuleProblem::NotAToolName {
            tool: "Bad Name".into(),
            bad: ' '
        }
    );
    let bad_glob = problem("Read(src/[z-a].rs)");
    assert!(
        matches!(bad_glob, RuleProblem::PathPattern { .. }),
        "{bad_glob:?}"
    );
    assert!(
        std::error::Error::source(&bad_glob).is_some(),
        "the pattern's own error is kept as the source"
    );
}

#[test]
fn rule_lists_split_outside_parentheses() {
    #[rustfmt::skip]
    let cases: &[(&str, &[&str])] = &[
        ("Bash(git *) Edit", &["Bash(git *)", "Edit"]),
        ("Read,Edit , Write", &["Read", "Edit", "Write"]),
        ("Bash(npm run test:*),Bash(echo a, b)", &["Bash(npm run test:*)", "Bash(echo a, b)"]),
        ("  Bash(a (b) c)  Read  ", &["Bash(a (b) c)", "Read"]),
        ("", &[]),
        (" , ", &[]),
    ];
    for (list, want) in cases {
        assert_eq!(split_rule_list(list), *want, "{list:?}");
    }
}

#[test]
fn rules_print_as_written() {
    let cases = [
        ("Bash(npm run *)", "Bash(npm run *)"),
        ("  Bash( git status )  ", "Bash(git status)"),
        ("Bash(*)", "Bash"),
        ("Edit()", "Edit"),
        ("Read", "Read"),
        ("Bash(echo (hi))", "Bash(echo (hi))"),
    ];
    for (text, shown) in cases {
        let mut rules = RuleSet::default();
        rules
            .add(RuleKind::Deny, text, PathBuf::from("/"), "test")
            .unwrap();
        assert_eq!(rules.deny[0].to_string(), shown);
    }
}

#[test]
fn messages_say_what_happened_and_what_to_do() {
    let fx = fixture();
    let mut builder = Permissions::builder(Workspace::new(&fx.project));
    builder
        .rules(
            RuleKind::Deny,
            &["Bash(rm *)"],
            &fx.project,
            "/p/.claude/settings.json",
        )
        .unwrap();
    let perms = builder.build();
    let denied = check(&fx, &perms, &bash("rm -rf x"));
    assert!(denied.is_denied() && !denied.is_allowed());
    let message = denied.message();
    assert!(
        message.starts_with(
            "Permission to use Bash with command `rm -rf x` was denied by rule `Bash(rm *)` \
             in /p/.claude/settings.json"
        ),
        "{message}"
    );

    let asked = check(&fx, &perms, &bash("npm test"));
    assert!(asked.needs_approval());
    let message = asked.message();
    for part in [
        "needs approval",
        "Bash(npm test)",
        "--allowedTools",
        "--permission-mode",
    ] {
        assert!(message.contains(part), "missing {part:?} in {message}");
    }

    let outside = check(&fx, &perms, &write(fx.outside.join("x")));
    let message = outside.message();
    let rule = format!("Edit(/{})", fx.outside.join("x").display());
    for part in ["outside the workspace", "--add-dir", rule.as_str()] {
        assert!(message.contains(part), "missing {part:?} in {message}");
    }
    assert_eq!(outside.suggested_rules(), [rule]);

    let allowed = check(&fx, &perms, &read(fx.p(".env")));
    assert!(allowed.is_allowed());
    assert_eq!(allowed.reason.to_string(), "default mode");
}

#[test]
fn sources_merge_with_the_command_line_on_top() {
    let fx = fixture();
    let user: PermissionSettings = serde_json::from_str(
        r#"{"deny": ["Bash(curl *)"], "defaultMode": "plan", "allow": ["Read"]}"#,
    )
    .unwrap();
    let project: PermissionSettings = serde_json::from_str(
        r#"{"allow": ["Bash(curl *)", "Bash(make *)", "Edit(/src/**)"], "defaultMode": "dontAsk",
            "ask": ["Bash(make deploy)"], "somethingNew": true}"#,
    )
    .unwrap();
    let sources = [
        SettingsSource {
            settings: user,
            base: fx.home.clone(),
            name: fx.home.join(".claude/settings.json").display().to_string(),
        },
        SettingsSource {
            settings: project,
            base: fx.project.clone(),
            name: fx.settings_name(),
        },
    ];
    let cwd = fx.p("src");
    let workspace = || Workspace::new(&fx.project);
    let no_flags = CommandLinePermissions::default();
    let perms = Permissions::from_sources(workspace(), &sources, &no_flags, &cwd).unwrap();
    assert_eq!(perms.mode(), PermissionMode::DontAsk);
    let decision = check_in(&perms, &bash("curl example.com"), &cwd);
    assert_eq!(decision.behavior, Deny);
    assert!(decision.message().contains("home/.claude/settings.json"));
    assert_eq!(check_in(&perms, &bash("make all"), &cwd).behavior, Allow);
    assert_eq!(check_in(&perms, &bash("make deploy"), &cwd).behavior, Deny);
    assert_eq!(
        check_in(&perms, &edit(fx.p("src/main.rs")), &cwd).behavior,
        Allow
    );
    assert_eq!(check_in(&perms, &edit(fx.p("docs/x")), &cwd).behavior, Deny);

    let flags = CommandLinePermissions {
        allowed_tools: vec!["Bash(git *) Edit".into()],
        disallowed_tools: vec!["Bash(make *)".into()],
        mode: Some(PermissionMode::Default),
        add_dirs: Vec::new(),
    };
    let perms = Permissions::from_sources(workspace(), &sources, &flags, &cwd).unwrap();
    assert_eq!(perms.mode(), PermissionMode::Default);
    assert_eq!(check_in(&perms, &bash("git status"), &cwd).behavior, Allow);
    assert_eq!(
        check_in(&perms, &edit(fx.p("docs/x")), &cwd).behavior,
        Allow
    );
    let decision = check_in(&perms, &bash("make all"), &cwd);
    assert_eq!(decision.behavior, Deny);
    assert_eq!(
        decision.reason.to_string(),
        "deny rule `Bash(make *)` in --disallowedTools"
    );

    let bad = serde_json::from_str::<PermissionSettings>(r#"{"defaultMode": "yolo"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("yolo") && bad.contains("bypassPermissions"),
        "{bad}"
    );
}
