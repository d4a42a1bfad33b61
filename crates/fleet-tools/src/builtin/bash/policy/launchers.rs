//! What launchers change: `time -o FILE`, `strace -o FILE`, `ltrace -o FILE`, `valgrind
//! --log-file=FILE`, `script FILE`, `perf record -o FILE`, `flock FILE` each write a file of
//! their own beside what they run (so does `logsave FILE`) — a visible write, checked like a redirect (so `time -a -o
//! ~/.bashrc npm test` is a write of a protected file). What they run comes from the shell
//! model's reading of them ([`crate::shell::wrappers`]), so deny rules, the classifier and
//! this policy agree on it.

use super::args::{Args, OptSpec};
use super::writes::{paths, Effect};
use crate::shell::wrappers::{self, Runs};
use crate::shell::{SimpleCommand, Word};

/// What the launcher `program` writes and runs, or `None` when it is not one.
pub(super) fn effects(program: &str, rest: &[String]) -> Option<Vec<Effect>> {
    let mut found = match program {
        "time" => {
            let spec = OptSpec::short("fo")
                .long(&["format", "output"])
                .stop_at_operand();
            vec![paths(Args::parse(rest, &spec).values(&["-o", "--output"]))]
        }
        "strace" | "ltrace" => {
            let spec = OptSpec::short("abeEIoOpPsSuUXAFlLnwDx")
                .long(&["output"])
                .stop_at_operand();
            let args = Args::parse(rest, &spec);
            let mut found = Vec::new();
            for output in args.values(&["-o", "--output"]) {
                // `-o '|cmd'` and `-o '!cmd'` pipe the trace into a command.
                match output
                    .strip_prefix('|')
                    .or_else(|| output.strip_prefix('!'))
                {
                    Some(line) => found.push(Effect::Line(line.to_string())),
                    None => found.push(paths([output])),
                }
            }
            found
        }
        "valgrind" => vec![paths(rest.iter().filter_map(|a| {
            a.strip_prefix("--log-file=")
                .or_else(|| a.strip_prefix("--xml-file="))
        }))],
        "script" => {
            let spec = OptSpec::short("cIOBT").attached("t").long(&[
                "command",
                "log-in",
                "log-out",
                "log-io",
                "log-timing",
                "timing",
            ]);
            let args = Args::parse(rest, &spec);
            let mut written: Vec<&str> = args
                .values(&[
                    "-I",
                    "-O",
                    "-B",
                    "-T",
                    "-t",
                    "--log-in",
                    "--log-out",
                    "--log-io",
                ])
                .chain(args.values(&["--log-timing", "--timing"]))
                .collect();
            // Without a file, the session goes to ./typescript.
            written.push(args.operands.first().copied().unwrap_or("typescript"));
            vec![paths(written)]
        }
        "perf" => return Some(perf(rest)),
        "logsave" => {
            let args = Args::parse(rest, &OptSpec::short("").stop_at_operand());
            vec![paths(rest.get(args.rest).map(String::as_str))]
        }
        "flock" => {
            let spec = OptSpec::short("wEc")
                .long(&["timeout", "wait", "conflict-exit-code", "command"])
                .stop_at_operand();
            let args = Args::parse(rest, &spec);
            let lock = rest
                .get(args.rest)
                .filter(|w| !w.chars().all(|c| c.is_ascii_digit()));
            vec![paths(lock.map(String::as_str))]
        }
        _ => Vec::new(),
    };
    if program == "git" {
        // git's own writes are judged by `writes::git`, which adds what `-c` runs.
        return None;
    }
    found.retain(|effect| !matches!(effect, Effect::Paths(p) if p.is_empty()));
    let runs = runs(program, rest);
    if found.is_empty() && runs.is_empty() {
        return None;
    }
    found.extend(runs);
    Some(found)
}

/// What `program REST` runs, as the shell model reads it: commands, a line, or something
/// only known when it runs.
pub(super) fn runs(program: &str, rest: &[String]) -> Vec<Effect> {
    let words: Vec<Word> = std::iter::once(program)
        .chain(rest.iter().map(String::as_str))
        .map(|w| Word::Known(w.to_string()))
        .collect();
    match wrappers::runs(&SimpleCommand::of_words(words)) {
        Runs::Nothing => Vec::new(),
        Runs::Commands { readings, .. } => readings
            .iter()
            .map(|reading| {
                Effect::Runs(
                    reading
                        .words
                        .iter()
                        .map(|w| w.shown().to_string())
                        .collect(),
                )
            })
            .collect(),
        Runs::Line { line, .. } => vec![Effect::Line(line)],
        Runs::Unknown { why, .. } => vec![Effect::Unknowable(why)],
    }
}

/// `perf record|stat|trace|… [OPT]… CMD`: the data file (`-o`, else `perf.data` for record)
/// and the command.
fn perf(rest: &[String]) -> Vec<Effect> {
    let Some((sub, rest)) = rest.split_first() else {
        return Vec::new();
    };
    let spec = OptSpec::short("oeFcCptGmuj")
        .long(&[
            "output",
            "event",
            "freq",
            "count",
            "cpu",
            "pid",
            "tid",
            "call-graph",
        ])
        .stop_at_operand();
    let args = Args::parse(rest, &spec);
    let mut written: Vec<&str> = args.values(&["-o", "--output"]).collect();
    if written.is_empty() && matches!(sub.as_str(), "record" | "mem" | "c2c" | "lock" | "sched") {
        written.push("perf.data");
    }
    let mut found = vec![paths(written)];
    if let Some(command) = rest.get(args.rest..).filter(|c| !c.is_empty()) {
        found.push(Effect::Runs(command.to_vec()));
    }
    found
}
