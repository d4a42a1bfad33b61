//! awk that only reads and prints: no `system()`, no pipes to or from commands, no `print >
//! file`, no `getline`, no program files or extensions, and a program text that is known.

use super::args::{Args, OptSpec};
use super::operands::is_placeholder;

/// Checks the words after `awk` (or `gawk`, `mawk`, `nawk`).
pub(super) fn check(rest: &[String]) -> Result<(), String> {
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
        return Err(
            "awk with a program file or extension (-f, -i inplace, -l, -E) runs code this \
             check cannot see, or edits files"
                .into(),
        );
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
        return Err("gawk -o / -p / -d write files (and -D starts a debugger)".into());
    }
    let mut programs: Vec<&str> = args.values(&["-e", "--source"]).collect();
    if programs.is_empty() {
        programs.extend(args.operands.first());
    }
    if programs.is_empty() {
        return Err("awk without a program text".into());
    }
    programs.into_iter().try_for_each(program)
}

/// One program text.
fn program(text: &str) -> Result<(), String> {
    if is_placeholder(text) || text.contains(['\u{1}', '\u{2}']) {
        return Err("the awk program is only known when it runs".into());
    }
    for word in ["system", "getline", "@load", "@include"] {
        if text.contains(word) {
            return Err(format!(
                "awk `{word}` runs a command, reads other files or loads code"
            ));
        }
    }
    let code = outside_strings(text);
    if code.replace("||", "").contains('|') {
        return Err("awk `|` pipes to or from a shell command".into());
    }
    let prints_to_file = code.match_indices("print").any(|(at, _)| {
        code[at..]
            .split([';', '}', '\n'])
            .next()
            .is_some_and(|statement| statement.contains('>'))
    });
    if prints_to_file {
        return Err("awk print > writes a file".into());
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

    fn awk(args: &[&str]) -> Result<(), String> {
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
        assert!(awk(&["-i", "inplace", "{print}", "f"]).is_err());
        assert!(awk(&["-f", "prog.awk"]).is_err());
    }
}
