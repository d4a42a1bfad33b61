//! awk that only reads and prints: no `system()`, no pipes to or from commands, no `print >
//! file`, no `getline`, no program files or extensions, and a program text that is known.

use super::args::{Args, OptSpec};
use super::operands::is_placeholder;

/// Why an awk command line may do more than read and print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum AwkProblem {
    #[error(
        "awk with a program file or extension (-f, -i inplace, -l, -E) runs code this check \
         cannot see, or edits files"
    )]
    UnseenCode,
    #[error("gawk -o / -p / -d write files (and -D starts a debugger)")]
    WritingOption,
    #[error("awk without a program text")]
    NoProgram,
    #[error("the awk program is only known when it runs")]
    UnknownProgram,
    /// `system`, `getline`, `@load`, `@include`.
    #[error("awk `{0}` runs a command, reads other files or loads code")]
    Reaches(&'static str),
    #[error("awk `|` pipes to or from a shell command")]
    Pipe,
    #[error("awk print > writes a file")]
    PrintToFile,
}

/// Checks the words after `awk` (or `gawk`, `mawk`, `nawk`).
pub(super) fn check(rest: &[String]) -> Result<(), AwkProblem> {
    let spec = OptSpec::short("FfveilE").attached("opdD").long(&[
        "field-separator",
        "assign",
        "file",
        "source",
        "include",
        "load",
        "exec",
    ]);
    let args = Args::parse(rest, &spec);
    const UNSEEN: &[&str] = &[
        "-f",
        "--file",
        "-i",
        "--include",
        "-l",
        "--load",
        "-E",
        "--exec",
    ];
    if args.has(UNSEEN) {
        return Err(AwkProblem::UnseenCode);
    }
    const WRITES: &[&str] = &[
        "-o",
        "--pretty-print",
        "-p",
        "--profile",
        "-d",
        "--dump-variables",
        "-D",
        "--debug",
    ];
    if args.has(WRITES) {
        return Err(AwkProblem::WritingOption);
    }
    let mut programs: Vec<&str> = args.values(&["-e", "--source"]).collect();
    if programs.is_empty() {
        programs.extend(args.operands.first());
    }
    if programs.is_empty() {
        return Err(AwkProblem::NoProgram);
    }
    programs.into_iter().try_for_each(program)
}

/// One program text.
fn program(text: &str) -> Result<(), AwkProblem> {
    if is_placeholder(text) || text.contains(['\u{1}', '\u{2}']) {
        return Err(AwkProblem::UnknownProgram);
    }
    for word in ["system", "getline", "@load", "@include"] {
        if text.contains(word) {
            return Err(AwkProblem::Reaches(word));
        }
    }
    let code = outside_strings(text);
    if code.replace("||", "").contains('|') {
        return Err(AwkProblem::Pipe);
    }
    let prints_to_file = code.match_indices("print").any(|(at, _)| {
        code[at..]
            .split([';', '}', '\n'])
            .next()
            .is_some_and(|statement| statement.contains('>'))
    });
    if prints_to_file {
        return Err(AwkProblem::PrintToFile);
    }
    Ok(())
}

/// The program with the contents of string literals blanked out, so that `print "x;" >
/// "f"` is read as one statement that writes a file.
fn outside_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
                out.push('_');
            }
            (true, '"') => {
                in_string = false;
                out.push('"');
            }
            (true, _) => out.push('_'),
            (false, '"') => {
                in_string = true;
                out.push('"');
            }
            (false, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn awk(args: &[&str]) -> Result<(), AwkProblem> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        check(&args)
    }

    #[test]
    fn printing_programs_pass() {
        for program in [
            "{print $1}",
            "-F: $3 > 1000 {n++} END {print n}",
            "{ if (a || b) print \"x\" }",
            "{print \"a>b\"}",
        ] {
            let args: Vec<&str> = if let Some(rest) = program.strip_prefix("-F: ") {
                vec!["-F:", rest]
            } else {
                vec![program]
            };
            assert_eq!(awk(&args), Ok(()), "{program}");
        }
    }

    #[test]
    fn writing_or_running_programs_are_refused() {
        for program in [
            "BEGIN{print \"x;\" > \"/path\"}",
            "{system(\"rm x\")}",
            "{print | \"sh\"}",
            "{\"date\" | getline d}",
            "{getline line < \"/etc/shadow\"}",
            "{printf \"%s\", $0 > \"out\"}",
            "\u{1}",
        ] {
            assert!(awk(&[program]).is_err(), "{program}");
        }
        assert_eq!(
            awk(&["-i", "inplace", "{print}", "f"]),
            Err(AwkProblem::UnseenCode)
        );
        assert_eq!(awk(&["-f", "prog.awk"]), Err(AwkProblem::UnseenCode));
        assert_eq!(
            awk(&["{system(\"x\")}"]),
            Err(AwkProblem::Reaches("system"))
        );
        assert_eq!(awk(&["{print | \"sh\"}"]), Err(AwkProblem::Pipe));
        assert_eq!(
            awk(&["{print > \"f\"}"]).map_err(|e| e.to_string()),
            Err("awk print > writes a file".to_string())
        );
    }
}
