//! Programs that run other programs: `env`, `sudo`, `timeout`, `xargs`, `sh -c`, `eval`,
//! `find -exec` … What each runs is returned as commands (or a command line) of its own, so
//! that the classifier and deny rules judge the program that really runs: `env rm x` is
//! `rm x`, `bash -c 'rm x'` is the line `rm x`.
//!
//! A wrapper's own options are read with a small table per wrapper. Where an unknown word
//! could be an option or the program itself, what runs is unknown.

pub(crate) mod git;
mod launchers;
mod options;

use super::model::{Assignment, SimpleCommand, Word};
use super::program_name;
use options::{has_command, has_flag, known_words, option_value, options_end, spec, Spec};

/// What a simple command runs besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// Nothing: not a program that runs programs, or one given nothing to run.
    Nothing,
    /// Runs a command; one reading per way its options can be read.
    Commands {
        wrapper: String,
        /// The wrapper adds nothing a rule should care about (`timeout 5 cargo test` is
        /// `cargo test`): allow rules judge only what it runs. A wrapper that changes who
        /// runs it, gives it arguments of its own or runs it elsewhere (`sudo`, `xargs`,
        /// `find -exec`, `env -C`) is not transparent: the wrapper itself must be allowed
        /// as well.
        transparent: bool,
        readings: Vec<SimpleCommand>,
    },
    /// Runs a command line given as text (`sh -c 'ls'`, `eval 'ls'`).
    Line {
        wrapper: String,
        line: String,
        transparent: bool,
    },
    /// Runs something that cannot be known before it runs (`sh -c "$x"`, `eval $x`).
    Unknown { wrapper: String, why: String },
}

/// What `command` runs besides itself.
pub fn runs(command: &SimpleCommand) -> Runs {
    let Some((program, rest)) = command.words.split_first() else {
        return Runs::Nothing;
    };
    let Some(name) = program_name(program) else {
        return Runs::Nothing;
    };
    let wrapper = name.to_string();
    let simple = |spec: Spec, transparent: bool| wrapped(&wrapper, rest, &spec, transparent);
    match name {
        "command" => {
            if has_flag(rest, &['v', 'V']) {
                return Runs::Nothing;
            }
            simple(spec("", &[]), true)
        }
        "builtin" | "nohup" | "setsid" => simple(spec("", &[]), true),
        "exec" => simple(spec("a", &[]), true),
        "nice" => simple(spec("n", &["adjustment"]), true),
        "timeout" => simple(
            Spec {
                short: "sk",
                long: &["signal", "kill-after"],
                skip: 1,
            },
            true,
        ),
        "time" => {
            // `time -o FILE` writes FILE: a visible write, not a transparent wrapper.
            let writes = option_value(rest, "fo", 'o', "output").is_some();
            simple(spec("fo", &["format", "output"]), !writes)
        }
        "stdbuf" => simple(spec("ioe", &["input", "output", "error"]), true),
        "ionice" => {
            if has_flag(rest, &['p', 'P', 'u']) {
                return Runs::Nothing;
            }
            simple(
                spec("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
                true,
            )
        }
        "coproc" => coproc(&wrapper, rest),
        "sudo" => {
            if has_flag(rest, &['e', 'l', 'v', 'k', 'K', 'V']) && !has_command(rest) {
                return Runs::Nothing;
            }
            if has_flag(rest, &['e']) || rest.iter().any(|w| w.known() == Some("--edit")) {
                // sudoedit: the operands are files to edit.
                return Runs::Nothing;
            }
            simple(
                spec(
                    "CDgprRtTUu",
                    &[
                        "user",
                        "group",
                        "close-from",
                        "chdir",
                        "host",
                        "prompt",
                        "role",
                        "type",
                        "command-timeout",
                        "other-user",
                        "chroot",
                    ],
                ),
                false,
            )
        }
        "doas" => {
            if has_flag(rest, &['C']) {
                return Runs::Nothing;
            }
            simple(spec("u", &[]), false)
        }
        "env" => env(&wrapper, rest),
        "xargs" => xargs(&wrapper, rest),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" => shell(&wrapper, rest),
        "su" => su(&wrapper, rest),
        "eval" => match known_words(rest) {
            Some(words) => Runs::Line {
                wrapper,
                line: words.join(" "),
                transparent: true,
            },
            None => Runs::Unknown {
                wrapper,
                why: "eval runs text only known when it runs".into(),
            },
        },
        "watch" => {
            if has_flag(rest, &['x']) || rest.iter().any(|w| w.known() == Some("--exec")) {
                return simple(spec("nqd", &["interval"]), false);
            }
            match options_end(rest, &spec("nq", &["interval"])) {
                Ok(starts) => match known_words(rest.get(starts[0]..).unwrap_or_default()) {
                    Some(words) if !words.is_empty() => Runs::Line {
                        wrapper,
                        line: words.join(" "),
                        transparent: false,
                    },
                    Some(_) => Runs::Nothing,
                    None => unknown_command(wrapper),
                },
                Err(why) => Runs::Unknown {
                    wrapper,
                    why: why.to_string(),
                },
            }
        }
        "find" => find(&wrapper, rest),
        "git" => git::runs(&wrapper, rest),
        _ => launchers::runs(name, rest).unwrap_or(Runs::Nothing),
    }
}

fn unknown_command(wrapper: String) -> Runs {
    Runs::Unknown {
        why: format!("the command {wrapper} runs is only known when it runs"),
        wrapper,
    }
}

fn wrapped(wrapper: &str, rest: &[Word], spec: &Spec, transparent: bool) -> Runs {
    let starts = match options_end(rest, spec) {
        Ok(starts) => starts,
        Err(why) => {
            return Runs::Unknown {
                wrapper: wrapper.into(),
                why: why.to_string(),
            }
        }
    };
    let mut readings = Vec::new();
    for start in starts {
        let operands = &rest[start.min(rest.len())..];
        if operands
            .iter()
            .take(spec.skip)
            .any(|w| w.is_unknown() && w.may_be_option())
        {
            return unknown_command(wrapper.into());
        }
        let command = operands.get(spec.skip..).unwrap_or_default();
        if !command.is_empty() {
            readings.push(SimpleCommand::of_words(command.to_vec()));
        }
    }
    if readings.is_empty() {
        return Runs::Nothing;
    }
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent,
        readings,
    }
}

/// `coproc [NAME] command`: the name is optional, so both readings.
fn coproc(wrapper: &str, rest: &[Word]) -> Runs {
    let mut readings = vec![SimpleCommand::of_words(rest.to_vec())];
    if rest.len() > 1 {
        readings.push(SimpleCommand::of_words(rest[1..].to_vec()));
    }
    if rest.is_empty() {
        return Runs::Nothing;
    }
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent: true,
        readings,
    }
}

/// `env [OPTION]… [NAME=VALUE]… [COMMAND [ARG]…]`.
fn env(wrapper: &str, rest: &[Word]) -> Runs {
    let spec = spec("uCS", &["unset", "chdir", "split-string"]);
    let starts = match options_end(rest, &spec) {
        Ok(starts) => starts,
        Err(why) => {
            return Runs::Unknown {
                wrapper: wrapper.into(),
                why: why.to_string(),
            }
        }
    };
    if let Some(split) = option_value(rest, spec.short, 'S', "split-string") {
        return match split.known() {
            Some(line) => Runs::Line {
                wrapper: wrapper.into(),
                line: line.to_string(),
                transparent: false,
            },
            None => unknown_command(wrapper.into()),
        };
    }
    let elsewhere = option_value(rest, spec.short, 'C', "chdir").is_some();
    // Clearing the environment (or a variable that changes what runs) changes how the command
    // runs: an allow rule for the command alone does not vouch for that.
    let clears = rest
        .iter()
        .take_while(|w| w.known().is_some_and(|t| t.starts_with('-')))
        .any(|w| matches!(w.known(), Some("-i" | "--ignore-environment" | "-")))
        || option_value(rest, spec.short, 'u', "unset")
            .is_some_and(|name| name.known().is_none_or(crate::shell::is_risky_variable));
    let mut readings = Vec::new();
    for start in starts {
        let mut assignments = Vec::new();
        let mut words = rest[start.min(rest.len())..].iter().peekable();
        while let Some(word) = words.peek() {
            match word {
                Word::Known(text) => match assignment(text) {
                    Some(found) => assignments.push(found),
                    None => break,
                },
                Word::Unknown(_) => return unknown_command(wrapper.into()),
            }
            words.next();
        }
        let words: Vec<Word> = words.cloned().collect();
        if words.is_empty() {
            continue;
        }
        let mut command = SimpleCommand::of_words(words);
        command.assignments = assignments;
        readings.push(command);
    }
    if readings.is_empty() {
        return Runs::Nothing;
    }
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent: !elsewhere && !clears,
        readings,
    }
}

/// `NAME=VALUE` as env reads it.
fn assignment(text: &str) -> Option<Assignment> {
    let (name, value) = text.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| Assignment {
        name: name.to_string(),
        value: Word::Known(value.to_string()),
        append: false,
    })
}

/// The options of GNU `xargs` that take a value, short and long: where its command starts
/// depends on them, for the parser, the classifier and the scratch-only policy alike.
pub(crate) const XARGS_VALUE_SHORT: &str = "adEILnPs";
pub(crate) const XARGS_VALUE_LONG: &[&str] = &[
    "arg-file",
    "delimiter",
    "max-args",
    "max-procs",
    "max-chars",
    "process-slot-var",
];

/// `xargs [OPTION]… [COMMAND [ARG]…]`: COMMAND (default `echo`) gets words read from its
/// input, which are unknown; with `-I R` they replace `R` inside its words instead.
fn xargs(wrapper: &str, rest: &[Word]) -> Runs {
    let spec = spec(XARGS_VALUE_SHORT, XARGS_VALUE_LONG);
    let starts = match options_end(rest, &spec) {
        Ok(starts) => starts,
        Err(why) => {
            return Runs::Unknown {
                wrapper: wrapper.into(),
                why: why.to_string(),
            }
        }
    };
    let replace = replace_string(rest);
    let input = Word::anything("{xargs input}");
    let readings = starts
        .into_iter()
        .map(|start| {
            let mut words: Vec<Word> = rest[start.min(rest.len())..].to_vec();
            if words.is_empty() {
                words.push(Word::Known("echo".into()));
            }
            match &replace {
                Some(marker) => {
                    for word in words.iter_mut().skip(1) {
                        if word.known().is_some_and(|t| t.contains(marker.as_str())) {
                            *word = Word::anything(word.shown());
                        }
                    }
                    if words[0]
                        .known()
                        .is_some_and(|t| t.contains(marker.as_str()))
                    {
                        words[0] = Word::anything(words[0].shown());
                    }
                }
                None => words.push(input.clone()),
            }
            SimpleCommand::of_words(words)
        })
        .collect();
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent: false,
        readings,
    }
}

/// The replace string of `xargs -I R` / `-i[R]` / `--replace[=R]`.
fn replace_string(words: &[Word]) -> Option<String> {
    for (i, word) in words.iter().enumerate() {
        let text = word.known()?;
        if !text.starts_with('-') || text == "--" {
            return None;
        }
        if let Some(value) = text.strip_prefix("--replace") {
            return Some(value.strip_prefix('=').unwrap_or("{}").to_string());
        }
        if let Some(value) = text.strip_prefix("-I") {
            return Some(if value.is_empty() {
                words.get(i + 1).map_or("{}", Word::shown).to_string()
            } else {
                value.to_string()
            });
        }
        if let Some(value) = text.strip_prefix("-i") {
            return Some(if value.is_empty() { "{}" } else { value }.to_string());
        }
    }
    None
}

/// `bash [OPTION]… -c STRING [NAME [ARG]…]`; without `-c` the shell runs a script file or
/// its input, which is not visible here (the program itself is then what is judged).
fn shell(wrapper: &str, rest: &[Word]) -> Runs {
    let mut command_string = false;
    // Options that read startup files or change more than error handling (`-l`, `-i`,
    // `--rcfile`) make the shell more than a way to run its string.
    let mut plain = true;
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        let text = match word {
            Word::Known(text) => text.as_str(),
            Word::Unknown(_) if command_string => break,
            Word::Unknown(_) => {
                return Runs::Unknown {
                    wrapper: wrapper.into(),
                    why: format!("`{}` may be an option of {wrapper}", word.shown()),
                }
            }
        };
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            plain &= matches!(long, "norc" | "noprofile" | "posix");
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
            command_string |= text.starts_with('-') && text[1..].contains('c');
            plain &= text[1..].chars().all(|c| "ceuxvfCno".contains(c));
            i += 1 + usize::from(text[1..].contains(['o', 'O']));
            continue;
        }
        break;
    }
    if !command_string {
        return Runs::Nothing;
    }
    match rest.get(i) {
        Some(Word::Known(line)) => Runs::Line {
            wrapper: wrapper.into(),
            line: line.clone(),
            transparent: plain,
        },
        Some(Word::Unknown(_)) => Runs::Unknown {
            wrapper: wrapper.into(),
            why: format!("{wrapper} -c runs text only known when it runs"),
        },
        None => Runs::Nothing,
    }
}

/// `su [OPTION]… [-c COMMAND] [USER]`.
fn su(wrapper: &str, rest: &[Word]) -> Runs {
    match option_value(rest, "csgGw", 'c', "command") {
        Some(Word::Known(line)) => Runs::Line {
            wrapper: wrapper.into(),
            line,
            transparent: false,
        },
        Some(Word::Unknown(_)) => unknown_command(wrapper.into()),
        None if rest.iter().any(|w| w.is_unknown()) => unknown_command(wrapper.into()),
        None => Runs::Nothing,
    }
}

/// `find … -exec CMD {} ;` (and `-execdir`, `-ok`, `-okdir`): CMD runs with the found paths
/// in place of `{}`.
fn find(wrapper: &str, rest: &[Word]) -> Runs {
    if rest.iter().any(|w| w.is_unknown() && w.may_be_option()) {
        return Runs::Unknown {
            wrapper: wrapper.into(),
            why: "find's expression holds a word only known when it runs".into(),
        };
    }
    let mut readings = Vec::new();
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        i += 1;
        if !matches!(word.known(), Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            continue;
        }
        let end = rest[i..]
            .iter()
            .position(|w| matches!(w.known(), Some(";" | "+")))
            .map_or(rest.len(), |n| i + n);
        let words: Vec<Word> = rest[i..end]
            .iter()
            .map(|w| match w.known() {
                Some(text) if text.contains("{}") => Word::anything(text),
                _ => w.clone(),
            })
            .collect();
        if !words.is_empty() {
            readings.push(SimpleCommand::of_words(words));
        }
        i = end + 1;
    }
    if readings.is_empty() {
        return Runs::Nothing;
    }
    Runs::Commands {
        wrapper: wrapper.into(),
        transparent: false,
        readings,
    }
}

/// What a wrapper that runs `lines` (shell lines it found in its options) runs: nothing when
/// there are none, else those lines, never transparently.
pub(crate) fn lines_run(wrapper: &str, lines: &[String]) -> Runs {
    if lines.is_empty() {
        return Runs::Nothing;
    }
    Runs::Line {
        wrapper: wrapper.into(),
        line: lines.join("\n"),
        transparent: false,
    }
}
