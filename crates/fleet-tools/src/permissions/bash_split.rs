//! A command line prepared for `Bash(...)` rules, read once per call with the shell parser
//! ([`crate::shell`]).
//!
//! A rule names one simple command (`npm run *`), but the model sends whole command lines
//! (`git status && rm -rf /`). Two views come out of a line:
//! - what deny and ask rules look at: every simple command that runs — in lists, pipelines,
//!   substitutions, function bodies, and after unwrapping programs that run programs
//!   (`env rm x`, `sudo rm x`, `bash -c 'rm x'`, `xargs rm`) — in several spellings, so one
//!   match anywhere is enough;
//! - what allow rules must vouch for: one unit per simple command, each made of known words
//!   only. A line holding an unknown word (`$x`, `$(…)`, a glob), arithmetic on variables, a
//!   program only known when it runs, a `/dev/tcp` redirection, or that cannot be read, is
//!   opaque: no specifier allows it.

use crate::shell::wrappers::{self, Runs};
use crate::shell::{self, is_risky_variable, quote, Line, SimpleCommand as Command, Word};

/// How deep wrappers and nested lines are followed before the line is given up on.
const MAX_DEPTH: usize = 16;

/// One command line, prepared for matching.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParsedCommand {
    /// The whole line, trimmed, spaces outside quotes collapsed, for rules written against a
    /// compound command.
    pub whole: String,
    /// Every simple command that runs, for deny and ask rules.
    pub parts: Vec<SimpleCommand>,
    /// What an allow rule set must vouch for, one unit each.
    pub units: Vec<Unit>,
    /// No set of specifiers can vouch for the line (see the module docs).
    pub opaque: bool,
    /// Files the line (or a line nested in it) redirects output into; an unknown target as
    /// written.
    pub redirects: Vec<String>,
    /// Some output redirect target is only known when the line runs.
    pub unknown_redirect: bool,
    /// The parser could not read the line as bash would.
    pub unterminated: bool,
}

/// One simple command in the spellings a deny or ask rule may be written against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// Words joined by single spaces, unknown ones as written; the same with leading
    /// assignments; the same with unknown words left out; and each with a program path
    /// reduced to its name (`/bin/rm` is `rm`).
    pub spellings: Vec<String>,
    /// The command read from each later word on (`flock /tmp/l rm -rf x` gives `/tmp/l rm -rf
    /// x`, `rm -rf x`, `-rf x`, `x`), a path reduced to its name: a program fleet does not know
    /// may run any of them, so deny rules ask when one matches (see
    /// [`super::rule::RuleSet::denying_later`]).
    pub later: Vec<String>,
    /// The words, unknown ones as written.
    pub words: Vec<String>,
}

/// One simple command an allow rule must vouch for: known words only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub words: Vec<String>,
    pub assignments: Vec<(String, String)>,
    /// An assignment changes what runs (`PATH=…`), or the command is only assignments, so
    /// the assignments must be matched too.
    pub risky: bool,
    /// A program that otherwise only reads is told to write or run something (`find
    /// -delete`, `sed -i`): only an exact rule vouches for it, never a `*`.
    pub hidden_action: bool,
}

impl Unit {
    /// The words joined by single spaces (with the assignments when they must be matched).
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.risky {
            parts.extend(self.assignments.iter().map(|(n, v)| format!("{n}={v}")));
        }
        parts.extend(self.words.iter().cloned());
        parts.join(" ")
    }

    /// An exact rule specifier for this unit, quoted so that it parses back into the same
    /// words.
    pub fn exact_specifier(&self) -> String {
        let mut text = String::new();
        if self.risky {
            for (name, value) in &self.assignments {
                text.push_str(&format!("{name}={} ", quote::word_text(value)));
            }
        }
        text.push_str(&quote::command(&self.words));
        text.trim_end().to_string()
    }
}

/// Prepares `command` for matching.
pub(crate) fn parse(command: &str) -> ParsedCommand {
    let line = shell::parse(command);
    let mut out = ParsedCommand {
        whole: super::bash_match::collapse_spaces(command.trim()),
        unterminated: line.unreadable.is_some(),
        ..ParsedCommand::default()
    };
    out.line(&line, 0);
    out
}

impl ParsedCommand {
    fn line(&mut self, line: &Line, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque = true;
            return;
        }
        if line.unreadable.is_some()
            || !line.arithmetic.is_empty()
            || line.sets.iter().any(|name| is_risky_variable(name))
        {
            self.opaque = true;
        }
        for redirect in line.all_redirects() {
            // bash opens a network connection for these, reading or writing.
            self.opaque |= redirect
                .target
                .known()
                .is_some_and(|t| t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"));
            if let Some(target) = redirect.written_target() {
                self.unknown_redirect |= target.is_unknown();
                self.opaque |= target.is_unknown();
                self.redirects.push(target.shown().to_string());
            }
        }
        for command in &line.commands {
            self.command(command, depth);
        }
        for nested in &line.nested {
            self.line(nested, depth + 1);
        }
    }

    fn command(&mut self, command: &Command, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque = true;
            return;
        }
        self.parts.push(spellings(command));
        self.opaque |= command.has_unknown();
        match wrappers::runs(command) {
            Runs::Nothing => self.unit(command),
            Runs::Commands {
                transparent,
                readings,
                ..
            } => {
                if !transparent {
                    self.unit(command);
                }
                for reading in &readings {
                    self.command(reading, depth + 1);
                }
            }
            Runs::Line {
                line, transparent, ..
            } => {
                if !transparent {
                    self.unit(command);
                }
                let nested = shell::parse(&line);
                self.line(&nested, depth + 1);
            }
            Runs::Unknown { .. } => self.opaque = true,
        }
    }

    fn unit(&mut self, command: &Command) {
        let known = |word: &Word| word.known().map(str::to_string);
        let words: Option<Vec<String>> = command.words.iter().map(known).collect();
        let assignments: Option<Vec<(String, String)>> = command
            .assignments
            .iter()
            .map(|a| {
                let op = if a.append { "+" } else { "" };
                Some((format!("{}{op}", a.name), a.value.known()?.to_string()))
            })
            .collect();
        let (Some(words), Some(assignments)) = (words, assignments) else {
            self.opaque = true;
            return;
        };
        let risky = words.is_empty() || assignments.iter().any(|(name, _)| is_risky_variable(name));
        let hidden_action = crate::builtin::bash::hidden_action(&words);
        self.units.push(Unit {
            words,
            assignments,
            risky,
            hidden_action,
        });
    }
}

fn spellings(command: &Command) -> SimpleCommand {
    let known: Vec<&str> = command.words.iter().filter_map(Word::known).collect();
    let mut spellings = vec![command.text(), command.full_text(), known.join(" ")];
    let renamed = command
        .words
        .first()
        .and_then(Word::known)
        .filter(|program| program.contains('/'))
        .and_then(|program| program.rsplit('/').next());
    if let Some(name) = renamed.filter(|n| !n.is_empty()) {
        let rest: Vec<&str> = command.words[1..].iter().map(Word::shown).collect();
        let mut spelled = vec![name.to_string()];
        spelled.extend(rest.iter().map(|s| s.to_string()));
        spellings.push(spelled.join(" "));
    }
    if let Some(plain) = git_without_global_options(command) {
        spellings.push(plain);
    }
    spellings.dedup();
    let words: Vec<String> = command
        .words
        .iter()
        .map(|w| w.shown().to_string())
        .collect();
    SimpleCommand {
        spellings,
        later: later_spellings(&command.words),
        words,
    }
}

/// `git -C x -c k=v push origin` as `git push origin`, so `Bash(git push *)` sees it.
fn git_without_global_options(command: &Command) -> Option<String> {
    let (program, rest) = command.words.split_first()?;
    if program.known()?.rsplit('/').next() != Some("git") {
        return None;
    }
    let mut i = 0;
    while let Some(text) = rest.get(i).and_then(Word::known) {
        if !text.starts_with('-') || text == "--" {
            break;
        }
        let valued = matches!(
            text,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--super-prefix"
                | "--config-env"
        );
        i += if valued { 2 } else { 1 };
    }
    (i > 0).then(|| {
        let mut spelled = vec!["git"];
        spelled.extend(rest.get(i..).unwrap_or_default().iter().map(Word::shown));
        spelled.join(" ")
    })
}

/// The most later words a command is read from; a longer command is read from its first ones.
const MAX_LATER: usize = 64;

/// The command as read from each known word after the first (see [`SimpleCommand::later`]).
fn later_spellings(words: &[Word]) -> Vec<String> {
    let mut out = Vec::new();
    for start in 1..words.len().min(MAX_LATER + 1) {
        // A word with blanks is text handed to the program (`echo 'rm -rf x'`), not a
        // program name it may run.
        let Some(first) = words[start]
            .known()
            .filter(|w| !w.contains(char::is_whitespace))
        else {
            continue;
        };
        let rest: Vec<&str> = words[start + 1..].iter().map(Word::shown).collect();
        let name = first.rsplit('/').next().unwrap_or(first);
        for program in [first, name] {
            let mut spelled = vec![program];
            spelled.extend(rest.iter().copied());
            out.push(spelled.join(" "));
        }
        out.dedup();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(command: &str) -> Vec<String> {
        parse(command)
            .parts
            .into_iter()
            .map(|p| p.spellings[0].clone())
            .collect()
    }

    #[test]
    fn every_command_that_runs_is_seen() {
        assert_eq!(
            seen("git status && rm -rf / ; echo 'a && b' | wc -l & sleep 1\nls"),
            [
                "git status",
                "rm -rf /",
                "echo a && b",
                "wc -l",
                "sleep 1",
                "ls"
            ]
        );
        assert_eq!(
            seen("env -i rm x; echo $(rm y); bash -c 'rm z'"),
            [
                "env -i rm x",
                "rm x",
                "echo $(rm y)",
                "bash -c rm z",
                "rm z",
                "rm y"
            ]
        );
    }

    #[test]
    fn units_need_known_words() {
        let parsed = parse("git status && git diff");
        assert!(!parsed.opaque);
        let units: Vec<String> = parsed.units.iter().map(Unit::text).collect();
        assert_eq!(units, ["git status", "git diff"]);
        for line in [
            "git $(echo log)",
            "ls *.rs",
            "echo $((x))",
            "echo hi > $f",
            "eval $x",
            "echo 'unterminated",
        ] {
            assert!(parse(line).opaque, "{line}");
        }
        // A transparent wrapper is judged by what it runs; sudo needs both.
        let units: Vec<String> = parse("timeout 5 cargo test; sudo rm x")
            .units
            .iter()
            .map(Unit::text)
            .collect();
        assert_eq!(units, ["cargo test", "sudo rm x", "rm x"]);
    }

    #[test]
    fn exact_specifiers_quote_what_needs_it() {
        let parsed = parse("git commit -m 'a  b' && PATH=/x ls '*'");
        let specs: Vec<String> = parsed.units.iter().map(Unit::exact_specifier).collect();
        assert_eq!(specs, ["git commit -m 'a  b'", "PATH=/x ls '*'"]);
    }
}
