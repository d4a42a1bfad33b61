//! Programs that run other programs: `sudo`, `env`, `timeout`, `xargs`, `find -exec`, and
//! those that run a command line given as a string (`sh -c`, `eval`, `trap`, `alias`). What
//! they run is checked in turn, as if written on its own.

use super::args::{command_starts, Args, OptSpec};
use super::writes::{changes_anything, paths, Effect};
use crate::shell::is_risky_variable;
use crate::shell::wrappers::{XARGS_VALUE_LONG, XARGS_VALUE_SHORT};

/// Options that end at the wrapped command, for programs that run another program.
const WRAPPERS: &[(&str, OptSpec)] = &[
    ("sudo", OptSpec::short("CDghpRrtTUu").stop_at_operand()),
    ("doas", OptSpec::short("uC").stop_at_operand()),
    (
        "nice",
        OptSpec::short("n").long(&["adjustment"]).stop_at_operand(),
    ),
    ("nohup", OptSpec::short("").stop_at_operand()),
    ("setsid", OptSpec::short("").stop_at_operand()),
    ("builtin", OptSpec::short("").stop_at_operand()),
    ("coproc", OptSpec::short("").stop_at_operand()),
    ("exec", OptSpec::short("a").stop_at_operand()),
    (
        "stdbuf",
        OptSpec::short("ioe")
            .long(&["input", "output", "error"])
            .stop_at_operand(),
    ),
    (
        "ionice",
        OptSpec::short("cnp")
            .long(&["class", "classdata", "pid"])
            .stop_at_operand(),
    ),
];

/// What the wrapper `program` runs, or `None` when it is not a wrapper.
pub(super) fn effects(program: &str, rest: &[String]) -> Option<Vec<Effect>> {
    if let Some((_, spec)) = WRAPPERS.iter().find(|(name, _)| *name == program) {
        let parsed = Args::parse(rest, spec);
        if program == "sudo" && parsed.has(&["-e", "--edit"]) {
            // sudoedit: the operands are files to edit, not a command.
            return Some(vec![paths(rest[parsed.rest..].iter().map(String::as_str))]);
        }
        return Some(wrapped(rest, spec, 0));
    }
    let found = match program {
        "find" => find(rest),
        "env" => env(rest),
        "timeout" => {
            let spec = OptSpec::short("sk")
                .long(&["signal", "kill-after"])
                .stop_at_operand();
            // The first operand is the duration; the command follows it.
            wrapped(rest, &spec, 1)
        }
        "command" => {
            let spec = OptSpec::short("").stop_at_operand();
            if Args::parse(rest, &spec).has(&["-v", "-V"]) {
                Vec::new()
            } else {
                wrapped(rest, &spec, 0)
            }
        }
        "function" => {
            // `function name { body` : the body's first command follows the brace.
            let body = rest.iter().skip(1).skip_while(|w| *w == "{").cloned();
            vec![Effect::Runs(body.collect())]
        }
        "xargs" => xargs(rest),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "su" => {
            let parsed = Args::parse(rest, &OptSpec::short("oO").stop_at_operand());
            match (parsed.has(&["-c"]), rest.get(parsed.rest)) {
                (true, Some(line)) => vec![Effect::Line(line.clone())],
                _ => Vec::new(),
            }
        }
        "eval" => vec![Effect::Line(rest.join(" "))],
        "watch" => {
            let spec = OptSpec::short("nd").long(&["interval"]).stop_at_operand();
            vec![Effect::Line(
                rest[Args::parse(rest, &spec).rest..].join(" "),
            )]
        }
        "trap" => match rest.first() {
            Some(action) if !action.starts_with('-') => vec![Effect::Line(action.clone())],
            _ => Vec::new(),
        },
        "alias" => rest
            .iter()
            .filter_map(|a| {
                a.split_once('=')
                    .map(|(_, value)| Effect::Line(value.into()))
            })
            .collect(),
        _ => return super::launchers::effects(program, rest),
    };
    Some(found)
}

/// What a wrapper may run: the words from each place its command may start, `skip` operands
/// (such as timeout's duration) after it.
fn wrapped(rest: &[String], spec: &OptSpec, skip: usize) -> Vec<Effect> {
    command_starts(rest, spec)
        .into_iter()
        .map(|start| Effect::Runs(rest[(start + skip).min(rest.len())..].to_vec()))
        .collect()
}

/// `find START… EXPR`: `-delete` changes everything under the start points, `-exec CMD {} ;`
/// runs CMD on them (checked with `{}` standing for a path under each start point), and
/// `-fprint FILE` writes FILE.
fn find(rest: &[String]) -> Vec<Effect> {
    let mut i = 0;
    while let Some(option) = rest.get(i) {
        match option.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let starts_at = i;
    while rest
        .get(i)
        .is_some_and(|a| !a.starts_with('-') && a != "(" && a != "!" && a != ",")
    {
        i += 1;
    }
    let mut starts: Vec<&str> = rest[starts_at..i].iter().map(String::as_str).collect();
    if starts.is_empty() {
        starts.push(".");
    }
    let mut found = Vec::new();
    while let Some(word) = rest.get(i) {
        i += 1;
        match word.as_str() {
            "-delete" => found.push(paths(starts.iter().copied())),
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                found.push(paths(rest.get(i).map(String::as_str)));
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = rest[i..]
                    .iter()
                    .position(|w| w == ";" || w == "+")
                    .map_or(rest.len(), |n| i + n);
                for start in &starts {
                    let stand_in = format!("{}/_", start.trim_end_matches('/'));
                    let argv = rest[i..end]
                        .iter()
                        .map(|w| w.replace("{}", &stand_in))
                        .collect();
                    found.push(Effect::Runs(argv));
                }
                i = end + 1;
            }
            _ => {}
        }
    }
    found
}

/// `env [-i] [-u NAME] [NAME=VALUE…] [CMD…]` runs CMD; `-S` splits a string into one.
fn env(rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short("uCS")
        .long(&["unset", "chdir", "split-string"])
        .stop_at_operand();
    let args = Args::parse(rest, &spec);
    let mut found: Vec<Effect> = args
        .values(&["-S", "--split-string"])
        .map(|line| Effect::Line(line.to_string()))
        .collect();
    for start in command_starts(rest, &spec) {
        let command: Vec<String> = rest[start..]
            .iter()
            .skip_while(|w| w.contains('='))
            .cloned()
            .collect();
        let risky = rest[start..]
            .iter()
            .take_while(|w| w.contains('='))
            .filter_map(|w| w.split_once('='))
            .any(|(name, _)| is_risky_variable(name));
        if risky && changes_anything(&command) {
            found.push(Effect::Unknowable(
                "a variable such as GIT_DIR set for it changes where it writes".into(),
            ));
        }
        if args.has(&["-C", "--chdir"]) && changes_anything(&command) {
            found.push(Effect::Unknowable(
                "env -C runs the command in another folder, where its relative paths cannot be \
                 checked"
                    .into(),
            ));
        }
        found.push(Effect::Runs(command));
    }
    found
}

/// `xargs CMD` appends words read from stdin, which cannot be known before it runs; a CMD
/// that changes files is therefore refused whatever its own operands.
fn xargs(rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short(XARGS_VALUE_SHORT)
        .attached("eil")
        .long(XARGS_VALUE_LONG)
        .stop_at_operand();
    let changing = command_starts(rest, &spec)
        .into_iter()
        .map(|start| &rest[start..])
        .find(|command| changes_anything(command));
    match changing {
        Some(command) => {
            let program = command.first().map_or("", String::as_str);
            vec![Effect::Unknowable(format!(
                "xargs gives {program} operands read from its input, which are only known when \
                 it runs"
            ))]
        }
        None => Vec::new(),
    }
}
