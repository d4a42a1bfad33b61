//! Path specifiers in each prefix form, and rules by tool name.

use crate::permissions::*;
use fleet_tools::permissions::Behavior::{self, Allow, Ask, Deny};
use fleet_tools::permissions::{PermissionMode, RuleKind};

/// (deny rule, cwd relative to the project, call, denied?).
#[rustfmt::skip]
fn path_cases(fx: &Fixture) -> Vec<(String, &'static str, Call, bool)> {
    let outside = fx.outside.display().to_string();
    let home_key = fx.home.join(".ssh/id_rsa");
    vec![
        // `//` is the filesystem root.
        (format!("Read(/{outside}/secret.txt)"), "", read(fx.outside.join("secret.txt")), true),
        (format!("Read(/{outside}/secret.txt)"), "", read(fx.outside.join("other")), false),
        (format!("Read(/{outside})"), "", read(fx.outside.join("secret.txt")), true),
        // `~/` is the home folder.
        ("Read(~/.ssh/**)".into(), "", read(home_key.clone()), true),
        ("Read(~/.ssh/**)".into(), "", read(fx.p(".ssh/id_rsa")), false),
        ("Read(~)".into(), "", read(home_key.clone()), true),
        // `/` is the settings' base folder, whatever the cwd.
        ("Read(/src/**)".into(), "", read(fx.p("src/main.rs")), true),
        ("Read(/src/**)".into(), "src/sub", read(fx.p("src/main.rs")), true),
        ("Read(/src/**)".into(), "", read(fx.p("docs/src/x")), false),
        ("Read(/src/*.rs)".into(), "", read(fx.p("src/main.rs")), true),
        ("Read(/src/*.rs)".into(), "", read(fx.p("src/sub/a.rs")), false),
        ("Read(/src/**/*.rs)".into(), "", read(fx.p("src/sub/a.rs")), true),
        ("Read(/src/**/*.rs)".into(), "", read(fx.p("src/main.rs")), true),
        // `./` and paths with a slash are relative to the cwd.
        ("Read(./main.rs)".into(), "src", read(fx.p("src/main.rs")), true),
        ("Read(./main.rs)".into(), "", read(fx.p("src/main.rs")), false),
        ("Read(sub/a.rs)".into(), "src", read(fx.p("src/sub/a.rs")), true),
        ("Read(sub/a.rs)".into(), "", read(fx.p("src/sub/a.rs")), false),
        // A bare name without a slash matches at any depth below the cwd, like gitignore.
        ("Read(.env)".into(), "", read(fx.p(".env")), true),
        ("Read(*.rs)".into(), "", read(fx.p("src/sub/a.rs")), true),
        ("Read(test_*)".into(), "", read(fx.p("src/sub/test_b.rs")), true),
        ("Read(test_?.rs)".into(), "", read(fx.p("src/sub/test_b.rs")), true),
        ("Read(test_*)".into(), "", read(fx.p("src/sub/a.rs")), false),
        ("Read(*.rs)".into(), "src", read(fx.root.join("project/../outside/x.rs")), false),
        // `**` crosses folders; a folder rule covers what is under it.
        ("Read(./**/test_*.rs)".into(), "", read(fx.p("src/sub/test_b.rs")), true),
        ("Read(src/**/a.rs)".into(), "", read(fx.p("src/sub/a.rs")), true),
        ("Read(./secrets)".into(), "", read(fx.p("secrets/key")), true),
        ("Read(secrets/)".into(), "", read(fx.p("secrets/key")), true),
        // Read rules cover Glob and Grep; Glob rules only Glob.
        ("Read(./secrets)".into(), "", glob(fx.p("secrets")), true),
        ("Read(./secrets)".into(), "", grep(fx.p("secrets")), true),
        ("Glob(./secrets)".into(), "", glob(fx.p("secrets")), true),
        ("Glob(./secrets)".into(), "", read(fx.p("secrets/key")), false),
        // Edit and Write rules cover every write, not reads.
        ("Edit(./src)".into(), "", write(fx.p("src/main.rs")), true),
        ("Write(./src)".into(), "", edit(fx.p("src/main.rs")), true),
        ("Edit(./src)".into(), "", read(fx.p("src/main.rs")), false),
        // Paths are resolved before matching, and so are the rule's literal folders.
        ("Read(./src/**)".into(), "", read(fx.p("alias/main.rs")), true),
        ("Read(./alias/**)".into(), "", read(fx.p("src/main.rs")), true),
        ("Read(./link/**)".into(), "", read(fx.outside.join("secret.txt")), true),
        ("Read(./link)".into(), "", read(fx.p("link/secret.txt")), true),
        ("Read(/src/main.rs)".into(), "", read(fx.p("docs/../src/main.rs")), true),
        // A deny rule also sees the path as spelled, so a name-only rule on a symlink holds.
        ("Read(link)".into(), "", read(fx.p("link/secret.txt")), true),
        ("Read(escape)".into(), "", read(fx.p("docs/escape/secret.txt")), true),
    ]
}

#[test]
fn path_rules_in_every_form() {
    let fx = fixture();
    for (rule, cwd, call, denied) in path_cases(&fx) {
        let perms = fx.perms(PermissionMode::AcceptEdits, &[], &[], &[&rule]);
        let decision = check_in(&perms, &call, &fx.project.join(cwd));
        let want = if denied { Deny } else { Allow };
        assert_eq!(
            decision.behavior, want,
            "{rule} in ./{cwd} vs {call:?}: {decision:?}"
        );
    }
}

#[test]
fn path_allow_rules_match_where_the_write_lands() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::Default,
        &["Edit(./src/**)", "Read(link)"],
        &[],
        &[],
    );
    let cases = [
        (edit(fx.p("src/sub/a.rs")), Allow),
        (edit(fx.p("alias/sub/a.rs")), Allow),
        (edit(fx.p("docs/readme.md")), Ask),
        (read(fx.p("docs/readme.md")), Allow),
    ];
    for (call, want) in cases {
        let decision = check(&fx, &perms, &call);
        assert_eq!(decision.behavior, want, "{call:?}: {decision:?}");
    }
    // An allow rule only sees where a path lands, not how it was spelled: `Read(link)` names
    // the link, which lands outside the cwd, so a Read there is allowed by the mode.
    let decision = check(&fx, &perms, &read(fx.p("link/secret.txt")));
    assert_eq!(rule_text(&decision), None, "{decision:?}");
}

#[test]
fn tool_rules_and_mcp_servers() {
    let fx = fixture();
    #[rustfmt::skip]
    let cases: &[(&str, RuleKind, Call, Behavior)] = &[
        ("mcp__github", RuleKind::Allow, other("mcp__github__create_issue"), Allow),
        ("mcp__github__*", RuleKind::Allow, other("mcp__github__create_issue"), Allow),
        ("mcp__github", RuleKind::Allow, other("mcp__githubx__create_issue"), Ask),
        ("mcp__github__create_issue", RuleKind::Deny, other("mcp__github__create_issue"), Deny),
        ("mcp__github__create_issue", RuleKind::Deny, other("mcp__github__list"), Ask),
        // A specifier fleet cannot read never allows, and denies the whole tool to be safe.
        ("WebFetch(domain:example.com)", RuleKind::Allow, other("WebFetch"), Ask),
        ("WebFetch(domain:example.com)", RuleKind::Deny, other("WebFetch"), Deny),
        // Bare Read covers Glob and Grep; bare Edit covers Write.
        ("Read", RuleKind::Deny, glob(fx.p("src")), Deny),
        ("Read", RuleKind::Deny, grep(fx.p("src")), Deny),
        ("Edit", RuleKind::Allow, write(fx.p("src/new.rs")), Allow),
        ("Write", RuleKind::Allow, bash("ls"), Ask),
        ("Bash()", RuleKind::Allow, bash("rm -rf $(pwd)"), Allow),
        ("Bash(*)", RuleKind::Allow, bash("echo `id`"), Allow),
    ];
    for (rule, kind, call, want) in cases {
        let (allow, deny): (&[&str], &[&str]) = match kind {
            RuleKind::Deny => (&[], &[rule]),
            _ => (&[rule], &[]),
        };
        let perms = fx.perms(PermissionMode::Default, allow, &[], deny);
        let decision = check(&fx, &perms, call);
        assert_eq!(
            decision.behavior, *want,
            "{kind} {rule} vs {call:?}: {decision:?}"
        );
    }
}

#[test]
fn a_folder_rule_names_only_its_folder_whatever_characters_the_path_holds() {
    let fx = fixture();
    for name in [
        "pad*", "pad?", "[pad]", "{pad,x}", "pad)", "pa d,(x)", "pad\\",
    ] {
        let dir = fx.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let sibling = fx.root.join("padX");
        std::fs::create_dir_all(&sibling).unwrap();
        let rule = fleet_tools::permissions::folder_rule("Edit", &dir);
        let perms = fx.perms(PermissionMode::DontAsk, &[&rule], &[], &[]);
        let inside = check(&fx, &perms, &write(dir.join("notes.md")));
        assert!(inside.is_allowed(), "{rule}: {inside:?}");
        for other in [sibling.join("notes.md"), fx.root.join("pa").join("x")] {
            let decision = check(&fx, &perms, &write(other.clone()));
            assert!(
                decision.is_denied(),
                "{rule} must not cover {}: {decision:?}",
                other.display()
            );
        }
    }
}
