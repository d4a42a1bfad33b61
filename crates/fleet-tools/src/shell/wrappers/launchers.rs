//! Programs that start a command under changed conditions: CPU affinity and scheduling
//! (`taskset`, `chrt`, `numactl`), resource limits (`prlimit`), namespaces and roots
//! (`unshare`, `nsenter`, `chroot`, `proot`, `firejail`), other users (`runuser`, `pkexec`,
//! `setpriv`, `sg`), tracers and debuggers (`strace`, `ltrace`, `valgrind`, `gdb`), locks
//! (`flock`), terminals (`script`), services (`systemd-run`, `dbus-run-session`), remote
//! shells (`ssh`) and multi-call binaries (`busybox`).
//!
//! A deny rule must see the command each one runs: `Bash(rm *)` denies `flock /tmp/l rm -rf x`
//! as it denies `rm -rf x`. A launcher that writes a file of its own (`strace -o`, `script
//! FILE`, `flock FILE`) or changes who or where the command runs is not transparent, so an
//! allow rule for the command alone does not vouch for it.

use super::options::{has_flag, known_words, option_value, options_end, spec, Spec};
use super::{unknown_command, wrapped, Runs};
use crate::shell::model::{SimpleCommand, Word};

/// What the launcher `name` runs, or `None` when `name` is not one of these.
pub(super) fn runs(name: &str, rest: &[Word]) -> Option<Runs> {
    let wrapper = name.to_string();
    let simple = |spec: Spec, transparent: bool| wrapped(&wrapper, rest, &spec, transparent);
    let found = match name {
        "taskset" => {
            if has_flag(rest, &['p']) || has_long(rest, "pid") {
                return Some(Runs::Nothing);
            }
            simple(skip(spec("", &[]), 1), true)
        }
        "chrt" => {
            if has_flag(rest, &['p']) || has_long(rest, "pid") {
                return Some(Runs::Nothing);
            }
            simple(
                skip(
                    spec("TPD", &["sched-runtime", "sched-period", "sched-deadline"]),
                    1,
                ),
                true,
            )
        }
        "numactl" => simple(
            spec(
                "CNmpilP",
                &[
                    "physcpubind",
                    "cpunodebind",
                    "membind",
                    "preferred",
                    "interleave",
                    "localalloc",
                    "preferred-many",
                    "cpubind",
                ],
            ),
            true,
        ),
        "prlimit" => {
            if has_flag(rest, &['p']) || has_long(rest, "pid") {
                return Some(Runs::Nothing);
            }
            simple(spec("", &["output"]), true)
        }
        "nocache" | "catchsegv" | "unbuffer" => simple(spec("", &[]), true),
        "faketime" => simple(skip(spec("p", &["exclude-monotonic"]), 1), true),
        "setarch" | "linux32" | "linux64" => {
            let skip_arch = usize::from(name == "setarch");
            simple(skip(spec("", &["uname-2.6"]), skip_arch), true)
        }
        "busybox" => simple(spec("", &[]), true),
        "unshare" => simple(
            spec(
                "SGRw",
                &["setuid", "setgid", "root", "wd", "propagation", "setgroups"],
            ),
            false,
        ),
        "nsenter" => simple(spec("tSG", &["target", "setuid", "setgid"]), false),
        "chroot" => simple(skip(spec("", &["userspec", "groups"]), 1), false),
        "setpriv" => simple(
            spec(
                "",
                &[
                    "reuid",
                    "regid",
                    "ruid",
                    "euid",
                    "rgid",
                    "egid",
                    "groups",
                    "inh-caps",
                    "ambient-caps",
                    "bounding-set",
                    "securebits",
                    "pdeathsig",
                    "selinux-label",
                    "apparmor-profile",
                    "landlock-access",
                    "landlock-rule",
                ],
            ),
            false,
        ),
        "pkexec" => simple(spec("", &["user"]), false),
        "proot" => simple(
            spec(
                "rbqwk",
                &["rootfs", "bind", "qemu", "cwd", "kernel-release"],
            ),
            false,
        ),
        "firejail" | "torsocks" => simple(spec("upaP", &[]), false),
        "systemd-run" => simple(
            spec(
                "upEMH",
                &[
                    "unit",
                    "property",
                    "setenv",
                    "machine",
                    "host",
                    "description",
                    "slice",
                    "uid",
                    "gid",
                    "working-directory",
                    "nice",
                    "on-active",
                    "on-calendar",
                ],
            ),
            false,
        ),
        "dbus-run-session" => {
            if rest
                .iter()
                .any(|w| w.known().is_some_and(|t| t.starts_with("--dbus-daemon")))
            {
                return Some(unknown_command(wrapper));
            }
            simple(spec("", &["config-file"]), false)
        }
        "strace" | "ltrace" => {
            let writes = option_value(rest, TRACER_VALUES, 'o', "output").is_some();
            simple(
                spec(TRACER_VALUES, &["output", "attach", "signal"]),
                !writes,
            )
        }
        "valgrind" => {
            let writes = rest.iter().any(|w| {
                w.known()
                    .is_some_and(|t| t.starts_with("--log-file") || t.starts_with("--xml-file"))
            });
            simple(spec("", &[]), !writes)
        }
        // `logsave [-asv] FILE CMD…` writes CMD's output into FILE as well.
        "logsave" => simple(skip(spec("", &[]), 1), false),
        "flock" => flock(&wrapper, rest),
        "script" => script(&wrapper, rest),
        "runuser" | "sg" => runuser(&wrapper, rest),
        "ssh" => ssh(&wrapper, rest),
        "gdb" => gdb(&wrapper, rest),
        "parallel" => parallel(&wrapper, rest),
        _ => return None,
    };
    Some(found)
}

/// strace's and ltrace's short options that take a value.
const TRACER_VALUES: &str = "abeEIoOpPsSuUXAFlLnwDx";

const fn skip(mut spec: Spec, operands: usize) -> Spec {
    spec.skip = operands;
    spec
}

fn has_long(words: &[Word], name: &str) -> bool {
    words.iter().any(|w| {
        w.known()
            .and_then(|t| t.strip_prefix("--"))
            .is_some_and(|t| t.split('=').next() == Some(name))
    })
}

fn line(wrapper: String, value: Option<Word>, transparent: bool) -> Option<Runs> {
    match value? {
        Word::Known(line) => Some(Runs::Line {
            wrapper,
            line,
            transparent,
        }),
        Word::Unknown(_) => Some(unknown_command(wrapper)),
    }
}

/// `flock [OPT]… FILE|DIR CMD [ARG]…`, `flock [OPT]… FILE|DIR -c LINE`, `flock FD`. The lock
/// file is created if missing, so it is never transparent.
fn flock(wrapper: &str, rest: &[Word]) -> Runs {
    const VALUES: &str = "wEc";
    // `-c LINE` may come before or after the lock file.
    let after_file = rest
        .iter()
        .position(|w| !w.may_be_option())
        .map_or(rest.len(), |at| at + 1);
    let given = option_value(rest, VALUES, 'c', "command").or_else(|| {
        option_value(
            rest.get(after_file..).unwrap_or_default(),
            VALUES,
            'c',
            "command",
        )
    });
    if let Some(found) = line(wrapper.into(), given, false) {
        return found;
    }
    wrapped(
        wrapper,
        rest,
        &skip(spec(VALUES, &["timeout", "wait", "conflict-exit-code"]), 1),
        false,
    )
}

/// `script [OPT]… [FILE]` writes FILE (a typescript); `-c LINE` runs a line in it.
fn script(wrapper: &str, rest: &[Word]) -> Runs {
    line(
        wrapper.into(),
        option_value(rest, "cIOBTtE", 'c', "command"),
        false,
    )
    .unwrap_or(Runs::Nothing)
}

/// `runuser -u USER [--] CMD…`, `runuser [-] USER -c LINE`, `sg GROUP -c LINE`.
fn runuser(wrapper: &str, rest: &[Word]) -> Runs {
    if let Some(found) = line(
        wrapper.into(),
        option_value(rest, "cgGuws", 'c', "command"),
        false,
    ) {
        return found;
    }
    if has_flag(rest, &['u']) || has_long(rest, "user") {
        return wrapped(
            wrapper,
            rest,
            &spec("ugGw", &["user", "group", "supp-group"]),
            false,
        );
    }
    if wrapper == "sg" {
        return wrapped(wrapper, rest, &skip(spec("", &[]), 1), false);
    }
    Runs::Nothing
}

/// `ssh [OPT]… HOST [COMMAND…]`: the command words are joined into a line the remote shell
/// runs.
fn ssh(wrapper: &str, rest: &[Word]) -> Runs {
    let starts = match options_end(rest, &spec("BbcDEeFIiJLlmOopPQRSWw", &[])) {
        Ok(starts) => starts,
        Err(why) => {
            return Runs::Unknown {
                wrapper: wrapper.into(),
                why: why.to_string(),
            }
        }
    };
    let mut lines = Vec::new();
    for start in starts {
        let Some(command) = rest.get(start + 1..).filter(|c| !c.is_empty()) else {
            continue;
        };
        match known_words(command) {
            Some(words) => lines.push(words.join(" ")),
            None => return unknown_command(wrapper.into()),
        }
    }
    super::lines_run(wrapper, &lines)
}

/// `gdb --args PROG ARG…` runs PROG; `-ex 'shell CMD'` (or `!CMD`) runs a shell line; a
/// command file (`-x`) or Python (`-ex 'python …'`) runs what cannot be seen.
fn gdb(wrapper: &str, rest: &[Word]) -> Runs {
    let mut lines = Vec::new();
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        i += 1;
        let Some(text) = word.known() else {
            continue;
        };
        if text == "--args" || text == "-args" {
            let command = rest[i..].to_vec();
            if command.is_empty() {
                break;
            }
            return Runs::Commands {
                wrapper: wrapper.into(),
                transparent: false,
                readings: vec![SimpleCommand::of_words(command)],
            };
        }
        let value = match text {
            "-ex"
            | "-iex"
            | "--ex"
            | "--iex"
            | "-eval-command"
            | "--eval-command"
            | "-init-eval-command"
            | "--init-eval-command" => {
                i += 1;
                rest.get(i - 1).cloned()
            }
            "-x" | "--x" | "-command" | "--command" | "-ix" | "--ix" => {
                return unknown_command(wrapper.into())
            }
            _ => text
                .split_once('=')
                .filter(|(name, _)| name.trim_start_matches('-').ends_with("eval-command"))
                .map(|(_, v)| Word::Known(v.to_string())),
        };
        let Some(value) = value else {
            continue;
        };
        let Some(command) = value.known() else {
            return unknown_command(wrapper.into());
        };
        let command = command.trim_start();
        if let Some(shell) = command
            .strip_prefix("shell ")
            .or_else(|| command.strip_prefix('!'))
            .or_else(|| command.strip_prefix("pipe "))
            .or_else(|| command.strip_prefix('|'))
        {
            lines.push(shell.to_string());
        } else if command.starts_with("python") || command.starts_with("source") {
            return unknown_command(wrapper.into());
        }
    }
    super::lines_run(wrapper, &lines)
}

/// `parallel [OPT]… CMD [ARG]… ::: INPUT…`: CMD runs with each input appended.
fn parallel(wrapper: &str, rest: &[Word]) -> Runs {
    let values = spec(
        "jSadInNX",
        &[
            "jobs",
            "sshlogin",
            "arg-file",
            "delimiter",
            "colsep",
            "joblog",
            "results",
            "workdir",
            "tmpdir",
            "max-args",
        ],
    );
    let starts = match options_end(rest, &values) {
        Ok(starts) => starts,
        Err(why) => {
            return Runs::Unknown {
                wrapper: wrapper.into(),
                why: why.to_string(),
            }
        }
    };
    let readings: Vec<SimpleCommand> = starts
        .into_iter()
        .filter_map(|start| {
            let command: Vec<Word> = rest
                .get(start..)?
                .iter()
                .take_while(|w| !w.known().is_some_and(|t| t.starts_with(":::")))
                .cloned()
                .chain(std::iter::once(Word::anything("{parallel input}")))
                .collect();
            (command.len() > 1).then(|| SimpleCommand::of_words(command))
        })
        .collect();
    if readings.is_empty() {
        // The commands come from the input.
        return unknown_command(wrapper.into());
    }
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent: false,
        readings,
    }
}
