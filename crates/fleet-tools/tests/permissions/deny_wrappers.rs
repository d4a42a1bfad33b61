//! Issue 30, item 9: deny rules see through wrappers fleet knows (unwrapped and denied), and
//! ask when any later word of a simple command starts a denied command (a program fleet does
//! not know may run it) — in bypassPermissions too.

use crate::permissions::*;
use fleet_tools::permissions::{
    Behavior::{Allow, Ask, Deny},
    PermissionMode,
};

/// Commands that ran past `Bash(rm *)` in bypassPermissions before: each is denied now.
const UNWRAPPED: &[&str] = &[
    "flock /tmp/lock rm -rf x",
    "flock -w 5 /tmp/lock rm -rf x",
    "flock /tmp/lock -c 'rm -rf x'",
    "taskset 0x1 rm -rf x",
    "taskset -c 0 rm -rf x",
    "chrt -f 10 rm -rf x",
    "script -qc 'rm -rf x' /dev/null",
    "script -c 'rm -rf x'",
    "unshare -r rm -rf x",
    "unshare --map-root-user rm -rf x",
    "strace -f rm -rf x",
    "strace -o /dev/null -e trace=file rm -rf x",
    "prlimit --nofile=100 rm -rf x",
    "git -c alias.x='!rm -rf y' x",
    "git -c core.pager='rm -rf y' log",
    "nsenter -t 1 -m rm -rf x",
    "chroot / rm -rf x",
    "setpriv --reuid=0 rm -rf x",
    "systemd-run --user rm -rf x",
    "parallel rm ::: a b",
    "ssh host rm -rf x",
    "gdb -batch -ex 'shell rm -rf x'",
    "gdb --args rm -rf x",
    "valgrind --log-file=/dev/null rm -rf x",
    "busybox rm -rf x",
    "ionice -c3 rm -rf x",
    "stdbuf -oL rm -rf x",
    "firejail --noprofile rm -rf x",
    "xargs rm -rf",
    "env -S 'rm -rf x'",
    "watch -n 1 rm -rf x",
    "sudo rm -rf x",
    "doas rm -rf x",
    "runuser -u nobody -- rm -rf x",
    "su -c 'rm -rf x'",
    "nocache rm -rf x",
    "catchsegv rm -rf x",
    "ltrace rm -rf x",
    "faketime '2020-01-01' rm -rf x",
    "proot rm -rf x",
    "torsocks rm -rf x",
    "dbus-run-session -- rm -rf x",
    "pkexec rm -rf x",
    "numactl --cpunodebind=0 rm -rf x",
    "setarch x86_64 rm -rf x",
    "time -o /dev/null rm -rf x",
    "logsave /dev/null rm -rf x",
    "git rebase -x 'rm -rf x' main",
    "git submodule foreach rm -rf x",
    "git bisect run rm -rf x",
    "git filter-branch --tree-filter 'rm -rf x' HEAD",
];

/// Programs fleet does not know as wrappers: a later word starts the denied command, so the
/// line asks.
const LATER_WORD: &[&str] = &[
    "mywrapper rm -rf x",
    "some-tool --flag value /bin/rm -rf x",
    "./run.sh rm -rf x",
    "bwrap --bind / / rm -rf x",
];

#[test]
fn deny_rules_see_through_the_launcher_family_in_every_mode() {
    let fx = fixture();
    for mode in [PermissionMode::BypassPermissions, PermissionMode::Default] {
        let perms = fx.perms(mode, &["Bash"], &[], &["Bash(rm *)"]);
        for command in UNWRAPPED {
            let decision = check(&fx, &perms, &bash(command));
            assert_eq!(decision.behavior, Deny, "{mode} {command:?}: {decision:?}");
        }
    }
}

#[test]
fn a_later_word_starting_a_denied_command_asks_even_in_bypass_mode() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::BypassPermissions,
        &["Bash"],
        &[],
        &["Bash(rm *)"],
    );
    for command in LATER_WORD {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Ask, "{command:?}: {decision:?}");
        assert!(
            decision.message().contains("deny rule `Bash(rm *)`"),
            "{}",
            decision.message()
        );
    }
    // dontAsk turns that ask into a refusal.
    let perms = fx.perms(PermissionMode::DontAsk, &["Bash"], &[], &["Bash(rm *)"]);
    let decision = check(&fx, &perms, &bash("mywrapper rm -rf x"));
    assert_eq!(decision.behavior, Deny, "{decision:?}");
    // Text handed to a program is not a program it runs.
    let perms = fx.perms(PermissionMode::BypassPermissions, &[], &[], &["Bash(rm *)"]);
    for command in ["echo 'rm -rf x'", "ls -la", "git commit -m 'rm the file'"] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Allow, "{command:?}: {decision:?}");
    }
}

#[test]
fn git_dash_c_runs_arbitrary_code_no_wildcard_allows_it() {
    let fx = fixture();
    let perms = fx.perms(PermissionMode::Default, &["Bash(git *)"], &[], &[]);
    for command in [
        "git -c alias.x='!touch /tmp/pwned' x",
        "git -c core.pager=less log",
        "git --config-env=core.pager=X log",
        "git --exec-path=/tmp/evil status",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Ask, "{command:?}: {decision:?}");
    }
}

#[test]
fn git_global_options_do_not_hide_a_denied_subcommand() {
    let fx = fixture();
    let perms = fx.perms(
        PermissionMode::BypassPermissions,
        &["Bash"],
        &[],
        &["Bash(git push *)"],
    );
    for command in [
        "git -C . push origin main",
        "git --no-pager -c color.ui=never push --force",
        "/usr/bin/git --git-dir=.git push",
    ] {
        let decision = check(&fx, &perms, &bash(command));
        assert_eq!(decision.behavior, Deny, "{command:?}: {decision:?}");
    }
}
