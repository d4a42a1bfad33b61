//! `Bash(...)` specifiers: globs, the legacy prefix, exact commands, compound lines.

use crate::permissions::*;
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
    // A redirect into a file is a file edit, which default mode asks about (see
    // `redirects_into_files_need_a_mode_that_accepts_edits`); devices are fine.
    ("Bash(echo *)", "echo hi > out.txt", false),
    ("Bash(echo *)", "echo hi 2>&1 >/dev/null", true),
    ("Bash(echo *)", "echo hi > ../outside/x", false),
    ("Bash(echo *)", "echo hi >> /etc/profile", false),
    ("Bash(echo *)", "echo hi > $HOME/x", false),
    ("Bash(echo *)", "echo hi > link/x", false),
    // An exact rule is exactly that command, however it is quoted.
    ("Bash(git status)", "git status", true),
    ("Bash(git status)", "'git' \"status\"", true),
    ("Bash(git status)", "git status --short", false),
    ("Bash(git status)", "git status; git log", false),
    ("Bash(git status)", "git $(echo status)", false),
    ("Bash(git commit -m \"a b\")", "git commit -m 'a b'", true),
    ("Bash(git commit -m \"a b\")", "git commit -m a b", false),
    // A word only known when it runs is never vouched for.
    ("Bash(ls *)", "ls $HOME", false),
    ("Bash(ls *)", "ls *.rs", false),
    ("Bash(ls *)", "ls ~", false),
    ("Bash(ls *)", "ls {a,b}", false),
    ("Bash(cat *)", "cat $'a b'", true),
    // Wrappers that add nothing are judged by what they run; others need both allowed.
    ("Bash(cargo test)", "timeout 60 cargo test", true),
    ("Bash(cargo test)", "nice -n 5 cargo test", true),
    ("Bash(cargo test)", "bash -c 'cargo test'", true),
    ("Bash(cargo test)", "bash -lc 'cargo test'", false),
    ("Bash(cargo test)", "sudo cargo test", false),
    ("Bash(cargo test)", "env PATH=/tmp/evil cargo test", false),
    ("Bash(timeout *)", "timeout 5 rm -rf x", false),
    ("Bash(xargs *)", "xargs rm", false),
    ("Bash(find *)", "find . -exec rm {} ;", false),
    // A `*` never stands for an option that makes a reading program write or run.
    ("Bash(find *)", "find . -name '*.rs'", true),
    ("Bash(find *)", "find . -delete", false),
    ("Bash(find . -delete)", "find . -delete", true),
    ("Bash(sed -n *)", "sed -n 1p f", true),
    ("Bash(sed -n *)", "sed -n -i s/a/b/ f", false),
    ("Bash(git *)", "git -c core.pager=evil log", false),
    // Arithmetic on variables can run hidden commands.
    ("Bash(echo *)", "echo $((1+2))", false),
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
    // Deny rules see through wrappers, quoting and paths.
    ("Bash(rm *)", "/bin/rm x", true),
    ("Bash(rm *)", "env rm x", true),
    ("Bash(rm *)", "env -i rm x", true),
    ("Bash(rm *)", "env -i FOO=1 rm x", true),
    ("Bash(rm *)", "command rm x", true),
    ("Bash(rm *)", "builtin exec rm x", true),
    ("Bash(rm *)", "timeout 5 rm x", true),
    ("Bash(rm *)", "timeout -s KILL 5 rm x", true),
    ("Bash(rm *)", "nice -n 5 rm x", true),
    ("Bash(rm *)", "nohup rm x", true),
    ("Bash(rm *)", "time rm x", true),
    ("Bash(rm *)", "stdbuf -oL rm x", true),
    ("Bash(rm *)", "setsid rm x", true),
    ("Bash(rm *)", "exec rm x", true),
    ("Bash(rm *)", "xargs rm", true),
    ("Bash(rm *)", "xargs -0 rm", true),
    ("Bash(rm *)", "find . -exec rm {} ;", true),
    ("Bash(rm *)", "bash -c 'rm x'", true),
    ("Bash(rm *)", "sh -c \"rm x\"", true),
    ("Bash(rm *)", "bash -c 'echo; rm x'", true),
    ("Bash(rm *)", "eval 'rm x'", true),
    ("Bash(rm *)", "sudo rm x", true),
    ("Bash(rm *)", "sudo -u root rm x", true),
    ("Bash(rm *)", "doas rm x", true),
    ("Bash(rm *)", "$(rm x)", true),
    ("Bash(rm *)", "cat <<EOF\n$(rm x)\nEOF", true),
    ("Bash(rm *)", "\\rm x", true),
    ("Bash(rm *)", "'rm' x", true),
    ("Bash(rm *)", "r\\m x", true),
    ("Bash(rm *)", "rm $x", true),
    ("Bash(rm)", "xargs rm", true),
    ("Bash(rm *)", "f() { rm x; }", true),
    ("Bash(rm *)", "rm -rf x\necho 'unterminated", true),
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

#[test]
fn ask_rules_see_through_wrappers_too() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::Default,
        &["Bash"],
        &["Bash(git push *)"],
        &[],
    );
    for command in [
        "git push origin main",
        "env git push origin main",
        "bash -c 'git push origin main'",
        "timeout 60 git push origin main",
    ] {
        assert_eq!(
            check(&fx, &perms, &bash(command)).behavior,
            Ask,
            "{command}"
        );
    }
    assert_eq!(check(&fx, &perms, &bash("git pull")).behavior, Allow);
}

#[test]
fn redirects_into_files_need_a_mode_that_accepts_edits() {
    let fx = fixture();
    for (mode, want) in [
        (PermissionMode::Default, Ask),
        (PermissionMode::AcceptEdits, Allow),
        (PermissionMode::DontAsk, Deny),
    ] {
        let perms = fx.perms(mode, &["Bash(echo *)"], &[], &[]);
        let decision = check(&fx, &perms, &bash("echo hi > out.txt"));
        assert_eq!(decision.behavior, want, "{mode:?}");
    }
}

#[test]
fn always_allow_suggests_one_exact_rule_per_command() {
    let fx = fixture();
    let ask = fx.perms(PermissionMode::Default, &[], &[], &[]);
    let suggested = |command: &str| check(&fx, &ask, &bash(command)).suggested_rules();
    assert_eq!(
        suggested("git status && git diff"),
        ["Bash(git status)", "Bash(git diff)"]
    );
    assert_eq!(
        suggested("git commit -m 'a b' | tee /dev/null; git log"),
        [
            "Bash(git commit -m 'a b')",
            "Bash(tee /dev/null)",
            "Bash(git log)"
        ]
    );
    assert_eq!(suggested("timeout 5 cargo test"), ["Bash(cargo test)"]);
    assert_eq!(suggested("sudo rm x"), ["Bash(sudo rm x)", "Bash(rm x)"]);
    assert_eq!(suggested("PATH=/x ls"), ["Bash(PATH=/x ls)"]);
    // Nothing to store when a part is only known when it runs, or the line writes a file.
    for command in [
        "git $(echo log)",
        "git status; ls $HOME",
        "ls *.rs",
        "echo hi > out.txt",
        "eval \"$x\"",
        "echo 'unterminated",
    ] {
        assert!(suggested(command).is_empty(), "{command}");
    }

    // The stored rules allow exactly what was approved, part by part.
    let stored = suggested("git status && git diff");
    let stored: Vec<&str> = stored.iter().map(String::as_str).collect();
    let perms = fx.perms(PermissionMode::Default, &stored, &[], &[]);
    for (command, allowed) in [
        ("git status && git diff", true),
        ("git diff; git status", true),
        ("git status", true),
        ("git log; rm -rf x", false),
        ("git status; rm -rf x", false),
        ("git $(rm -rf x)", false),
        ("git status $(rm -rf x)", false),
        ("git status --porcelain", false),
        ("git status > /tmp/x", false),
    ] {
        let want = if allowed { Allow } else { Ask };
        assert_eq!(
            check(&fx, &perms, &bash(command)).behavior,
            want,
            "{command}"
        );
    }

    // Quoting survives the round trip through a stored rule.
    let tricky = "printf '%s\\n' \"it's\" '*' '' $'tab\\there'";
    let stored = suggested(tricky);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(!stored[0].chars().any(char::is_control), "{stored:?}");
    let perms = fx.perms(PermissionMode::Default, &[stored[0].as_str()], &[], &[]);
    assert_eq!(
        check(&fx, &perms, &bash(tricky)).behavior,
        Allow,
        "{stored:?}"
    );
    assert_eq!(
        check(
            &fx,
            &perms,
            &bash("printf '%s\\n' \"it's\" x '' $'tab\\there'")
        )
        .behavior,
        Ask
    );
}

#[test]
fn messages_name_the_exact_rules_or_say_there_are_none() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::DontAsk, &[], &[], &[]);
    let message = check(&fx, &perms, &bash("git status && git diff")).message();
    assert!(
        message.contains("`Bash(git status)` and `Bash(git diff)`"),
        "{message}"
    );
    let message = check(&fx, &perms, &bash("git log $(x)")).message();
    assert!(message.contains("no exact rule can cover"), "{message}");
}
