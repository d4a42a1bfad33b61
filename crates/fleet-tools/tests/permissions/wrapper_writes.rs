//! Issue 30, item 4: allow rules do not cover commands that write protected files. A
//! wrapper's file option (`time -o`, `strace -o`, `script FILE` …) is a visible write, and
//! `git config` with a value (or anything else that writes git's configuration) is a write of
//! the configuration file: the protected-path ask applies and no wildcard rule covers it.

use crate::permissions::*;
use fleet_tools::permissions::{
    Behavior::{Allow, Ask},
    DecisionReason, PermissionMode,
};

/// (allow rule, command): each must ask, in default mode and in bypassPermissions.
const PROTECTED_WRITES: &[(&str, &str)] = &[
    (
        "Bash(npm test)",
        "/usr/bin/time -a -o ~/.bashrc -f PAYLOAD npm test",
    ),
    ("Bash(npm test)", "time -o ~/.bashrc npm test"),
    (
        "Bash(npm test)",
        "/usr/bin/time --output=~/.bashrc --append npm test",
    ),
    (
        "Bash(npm test)",
        "strace -f -o .git/hooks/pre-commit npm test",
    ),
    ("Bash(npm test)", "ltrace -o ~/.zshrc npm test"),
    ("Bash(npm test)", "valgrind --log-file=.git/config npm test"),
    ("Bash(npm test)", "script -q -c 'npm test' .bashrc"),
    (
        "Bash(npm test)",
        "script -c 'npm test' -O .claude/settings.json",
    ),
    ("Bash(npm test)", "perf record -o .mcp.json npm test"),
    ("Bash(npm test)", "flock .envrc npm test"),
    ("Bash(npm test)", "logsave -a ~/.profile npm test"),
    (
        "Bash(git *)",
        "git config core.fsmonitor 'touch /tmp/pwned'",
    ),
    ("Bash(git *)", "git config --global core.pager 'sh -c evil'"),
    ("Bash(git *)", "git config --system core.hooksPath /tmp/h"),
    ("Bash(git *)", "git config --add alias.x '!evil'"),
    ("Bash(git *)", "git config --unset core.fsmonitor"),
    ("Bash(git *)", "git config --replace-all core.pager less"),
    ("Bash(git *)", "git config --edit"),
    ("Bash(git *)", "git config -f .git/config core.fsmonitor x"),
    (
        "Bash(git *)",
        "git config --file=.git/config core.fsmonitor x",
    ),
    ("Bash(git *)", "git config set core.fsmonitor x"),
    ("Bash(git *)", "git -C src config core.fsmonitor x"),
    ("Bash(git *)", "git remote add evil 'ext::sh -c evil'"),
    ("Bash(git *)", "git remote set-url origin 'ext::sh -c evil'"),
    (
        "Bash(git *)",
        "git submodule add https://example.com/x.git vendor/x",
    ),
    ("Bash(git *)", "git submodule init"),
    ("Bash(git *)", "git branch --set-upstream-to=origin/main"),
    ("Bash(git *)", "git push -u origin main"),
    ("Bash(git *)", "git maintenance register"),
    ("Bash(git config *)", "git config core.sshCommand evil"),
];

#[test]
fn wrapper_output_options_and_git_config_writes_ask_whatever_allows_them() {
    let fx = fixture();
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        for (rule, command) in PROTECTED_WRITES {
            let perms = fx.perms(mode, &[rule], &[], &[]);
            let decision = check(&fx, &perms, &bash(command));
            assert_eq!(
                decision.behavior, Ask,
                "{mode} {rule} vs {command:?}: {decision:?}"
            );
            assert!(
                matches!(decision.reason, DecisionReason::Protected(_)),
                "{mode} {rule} vs {command:?}: {decision:?}"
            );
        }
    }
}

#[test]
fn a_wrapper_writing_an_ordinary_file_is_a_write_the_command_rule_does_not_cover() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::Default, &["Bash(npm test)"], &[], &[]);
    for command in [
        "time -o out.txt npm test",
        "strace -o trace.txt npm test",
        "script -c 'npm test' log.txt",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Ask, "{command:?}: {decision:?}");
    }
    // The wrapper adds nothing: the rule for what it runs is enough.
    for command in [
        "time npm test",
        "/usr/bin/time -p npm test",
        "strace -f npm test",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Allow, "{command:?}: {decision:?}");
    }
}

#[test]
fn git_config_that_only_reads_stays_allowed_and_no_wildcard_covers_a_write() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::Default, &["Bash(git *)"], &[], &[]);
    for command in [
        "git config --get user.name",
        "git config user.name",
        "git config --list",
        "git remote -v",
        "git branch --list",
        "git commit -m x",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Allow, "{command:?}: {decision:?}");
    }
    // Even an allow rule naming the file does not let a wildcard Bash rule write it: only
    // an exact rule for the command and an Edit rule naming the path together would.
    let perms = fx.perms(
        PermissionMode::Default,
        &["Bash(git *)", "Edit(.git/config)"],
        &[],
        &[],
    );
    let decision = check(&fx, &perms, &bash("git config core.fsmonitor x"));
    assert_eq!(decision.behavior, Ask, "{decision:?}");
}
