//! `Bash(...)` specifiers: globs, the legacy prefix, exact commands, compound lines.

use crate::*;
use fleet_tools::permissions::Behavior::{Allow, Ask, Deny};
use fleet_tools::permissions::PermissionMode;

/// (allow rule, command, allowed?) in default mode: not allowed means Ask.
#[rustfmt::skip]
const BASH_ALLOW: &[(&str, &str, bool)] = &[
    // Globs match any characters, spaces included.
    ("Bash(npm run *)", "npm run build", true),
    ("Bash(npm run *)", "npm run test -- --watch", true),
    ("Bash(npm run *)", "npm run", true),
    ("Bash(npm run *)", "npm install", false),
    ("Bash(git * main)", "git push origin main", true),
    ("Bash(git * main)", "git push origin dev", false),
    ("Bash(ls *)", "lsof", false),
    ("Bash(*)", "anything at all", true),
    // Legacy prefix with a word boundary.
    ("Bash(npm run test:*)", "npm run test", true),
    ("Bash(npm run test:*)", "npm run test --watch", true),
    ("Bash(npm run test:*)", "npm run testing", false),
    // Exact, after trimming and collapsing spaces outside quotes.
    ("Bash(npm test)", "npm test", true),
    ("Bash(npm test)", "  npm   test  ", true),
    ("Bash(npm test)", "npm test --watch", false),
    ("Bash(echo \"a  b\")", "echo \"a  b\"", true),
    ("Bash(echo \"a  b\")", "echo \"a b\"", false),
    // Compound commands: every part must be allowed.
    ("Bash(git *)", "git status && git diff", true),
    ("Bash(git *)", "git status && rm -rf /", false),
    ("Bash(git *)", "git status; rm -rf /", false),
    ("Bash(git *)", "git log | head", false),
    ("Bash(git *)", "git status & rm -rf /", false),
    ("Bash(git *)", "git status\nrm -rf /", false),
    ("Bash(git *)", "git status || rm -rf /", false),
    ("Bash(git *)", "git commit -m 'a && rm -rf /'", true),
    ("Bash(git *)", "git commit -m \"a; b\"", true),
    ("Bash(git *)", "git commit -m a\\;b", true),
    // Substitutions are never vouched for by a specifier.
    ("Bash(echo *)", "echo $(whoami)", false),
    ("Bash(echo *)", "echo \"$(whoami)\"", false),
    ("Bash(echo *)", "echo `whoami`", false),
    ("Bash(diff *)", "diff <(ls a) <(ls b)", false),
    ("Bash(echo *)", "echo 'unterminated", false),
    // Leading assignments are skipped, unless they change what runs.
    ("Bash(cargo test *)", "RUST_LOG=debug cargo test -p x", true),
    ("Bash(cargo test *)", "A=1 B=\"two words\" cargo test", true),
    ("Bash(cargo test *)", "PATH=/tmp/evil cargo test", false),
    ("Bash(cargo test *)", "LD_PRELOAD=/tmp/x.so cargo test", false),
    ("Bash(cargo test *)", "GIT_SSH_COMMAND=evil cargo test", false),
    ("Bash(git *)", "PATH=/tmp/evil; git status", false),
    // Redirects must stay inside the workspace.
    ("Bash(echo *)", "echo hi > out.txt", true),
    ("Bash(echo *)", "echo hi 2>&1 >/dev/null", true),
    ("Bash(echo *)", "echo hi > ../outside/x", false),
    ("Bash(echo *)", "echo hi >> /etc/profile", false),
    ("Bash(echo *)", "echo hi > $HOME/x", false),
    ("Bash(echo *)", "echo hi > link/x", false),
];

#[test]
fn bash_allow_specifiers() {
    let fx = fixture();
    for (rule, command, allowed) in BASH_ALLOW {
        let perms = fx.perms(PermissionMode::Default, &[rule], &[], &[]);
        let decision = check(&fx, &perms, &bash(command));
        let want = if *allowed { Allow } else { Ask };
        assert_eq!(
            decision.behavior, want,
            "{rule} vs {command:?}: {decision:?}"
        );
    }
}

#[test]
fn compound_commands_need_every_part_allowed() {
    let fx = fixture();
    let allow = ["Bash(git *)", "Bash(grep *)"];
    let perms = fx.perms(PermissionMode::Default, &allow, &[], &[]);
    let decision = check(&fx, &perms, &bash("git log | grep fix && git status"));
    assert_eq!(decision.behavior, Allow);
    assert_eq!(rule_text(&decision).as_deref(), Some("Bash(git *)"));
    assert_eq!(check(&fx, &perms, &bash("git log | wc -l")).behavior, Ask);
    // A bare Bash rule or the mode may allow what specifiers cannot.
    for perms in [
        fx.perms(PermissionMode::Default, &["Bash"], &[], &[]),
        fx.perms(PermissionMode::BypassPermissions, &[], &[], &[]),
    ] {
        assert_eq!(check(&fx, &perms, &bash("echo $(whoami)")).behavior, Allow);
    }
}

/// (deny rule, command, denied?) with `Bash` allowed: not denied means Allow.
#[rustfmt::skip]
const BASH_DENY: &[(&str, &str, bool)] = &[
    ("Bash(rm *)", "git status && rm -rf /", true),
    ("Bash(rm *)", "git status; rm -rf /", true),
    ("Bash(rm *)", "ls | rm x", true),
    ("Bash(rm *)", "FOO=1 rm -rf x", true),
    ("Bash(rm *)", "\"rm\" -rf x", true),
    ("Bash(rm *)", "rm   -rf x", true),
    ("Bash(rm *)", "echo $(rm -rf x)", true),
    ("Bash(rm *)", "echo `rm -rf x`", true),
    ("Bash(rm *)", "if true; then rm -rf x; fi", true),
    ("Bash(rm *)", "(cd a && rm -rf x)", true),
    ("Bash(rm *)", "echo 'rm -rf x'", false),
    ("Bash(rm *)", "rmdir x", false),
    ("Bash(rm:*)", "rm", true),
    ("Bash(git push --force)", "git fetch && git push --force", true),
    ("Bash(git fetch && git push)", "git fetch && git push", true),
    // Edit rules see the files a command redirects into.
    ("Edit(./.env)", "echo KEY=1 > .env", true),
    ("Edit(./.env)", "echo KEY=1 > other.env", false),
    ("Bash", "ls", true),
];

#[test]
fn bash_deny_rules_catch_any_part() {
    let fx = fixture();
    for (rule, command, denied) in BASH_DENY {
        let perms = fx.perms(PermissionMode::Default, &["Bash"], &[], &[rule]);
        let decision = check(&fx, &perms, &bash(command));
        let want = if *denied { Deny } else { Allow };
        assert_eq!(
            decision.behavior, want,
            "{rule} vs {command:?}: {decision:?}"
        );
    }
}
