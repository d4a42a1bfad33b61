//! The parser's model of command lines: words, commands, nested lines, and what it refuses
//! to read.

use super::wrappers::{runs, Runs};
use super::*;

/// Each command's words, unknown ones as `?source`.
fn commands(line: &str) -> Vec<Vec<String>> {
    let parsed = parse(line);
    assert_eq!(parsed.unreadable, None, "{line:?}");
    parsed
        .commands
        .iter()
        .map(|c| {
            c.words
                .iter()
                .map(|w| match w {
                    Word::Known(text) => text.clone(),
                    Word::Unknown(u) => format!("?{}", u.source),
                })
                .collect()
        })
        .collect()
}

fn one(line: &str) -> Vec<String> {
    let mut all = commands(line);
    assert_eq!(all.len(), 1, "{line:?}: {all:?}");
    all.remove(0)
}

fn unknown(line: &str, index: usize) -> Unknown {
    let parsed = parse(line);
    match &parsed.commands[0].words[index] {
        Word::Unknown(u) => u.clone(),
        known => panic!("{line:?}: word {index} is {known:?}"),
    }
}

#[test]
fn quotes_escapes_and_ansi_c_strings_are_removed() {
    assert_eq!(one("sed s/hello/X/ $'-i' hello.txt")[2], "-i");
    assert_eq!(
        one("echo $'\\x2di' $'\\055i' $'\\u002di' $'a\\'b'"),
        ["echo", "-i", "-i", "-i", "a'b"]
    );
    assert_eq!(one("\\rm x")[0], "rm");
    assert_eq!(one("'rm' x")[0], "rm");
    assert_eq!(one("r\\m x")[0], "rm");
    assert_eq!(one("\"r\"m x")[0], "rm");
    assert_eq!(
        one("echo \"a\\\"b\\\\c\\d\" 'x'\"y\"z"),
        ["echo", "a\"b\\c\\d", "xyz"]
    );
    assert_eq!(one("echo a\\ b \\$HOME"), ["echo", "a b", "$HOME"]);
    assert_eq!(one("echo $'a\\0b'"), ["echo", "a"], "a NUL ends the string");
    assert_eq!(one("echo {} a,b {x}"), ["echo", "{}", "a,b", "{x}"]);
}

#[test]
fn expansions_globs_braces_and_tildes_are_unknown() {
    for (line, index) in [
        ("find . -${HOME:0:0}exec", 2),
        ("echo $x", 1),
        ("echo \"$x\"", 1),
        ("echo $(id)", 1),
        ("echo *.rs", 1),
        ("echo a[1]", 1),
        ("echo {-i,}", 1),
        ("echo {1..3}", 1),
        ("echo ~/x", 1),
        ("echo ~root", 1),
        ("echo a=~/x", 1),
        ("echo $((1+2))", 1),
        ("echo <(ls)", 1),
    ] {
        unknown(line, index);
    }
    let u = unknown("find . -${HOME:0:0}exec", 2);
    assert!(u.may_be_option);
    let u = unknown("echo \"./$f\"", 1);
    assert!(!u.may_be_option && u.one_field);
    let u = unknown("echo ./$f", 1);
    assert!(u.may_be_option && !u.one_field, "unquoted expansions split");
    let u = unknown("echo ./*.rs", 1);
    assert!(!u.may_be_option && !u.one_field);
    let u = unknown("echo *.rs", 1);
    assert!(u.may_be_option, "a file named -i.rs would match");
    let u = unknown("echo \"$@\"", 1);
    assert!(!u.one_field);
    let u = unknown("diff <(ls) x", 1);
    assert!(!u.may_be_option && u.one_field);
}

#[test]
fn commands_are_found_through_every_construct() {
    assert_eq!(
        commands(
            "! ls | grep x && { cd a; } || (pwd); if true; then a; elif b; then c; else d; fi; \
             while read -r l; do e; done < f; case $x in a) g;; esac; for i in 1 2; do h $i; done; \
             f() { rm x; }; time ls -l"
        )
        .into_iter()
        .map(|w| w.join(" "))
        .collect::<Vec<_>>(),
        [
            "ls",
            "grep x",
            "cd a",
            "pwd",
            "true",
            "a",
            "b",
            "c",
            "d",
            "read -r l",
            "e",
            "g",
            "h ?$i",
            "rm x",
            "time ls -l"
        ]
    );
    let parsed = parse("f() { rm x; }; for PATH in /x; do ls; done");
    assert_eq!(parsed.functions, ["f"]);
    assert_eq!(parsed.sets, ["PATH"]);
}

#[test]
fn substitutions_are_nested_lines() {
    let parsed = parse("echo \"$(git rev-parse HEAD)\" `date` <(sort a) >(tee b) $(<file)");
    let nested: Vec<String> = parsed.nested.iter().map(|l| l.source.clone()).collect();
    assert_eq!(
        nested,
        [
            "$(git rev-parse HEAD)",
            "`date`",
            "<(sort a)",
            ">(tee b)",
            "$(<file)"
        ]
    );
    assert_eq!(parsed.nested[3].commands[0].text(), "tee b");
    let parsed = parse("cat <<EOF\n$(touch x) ${y}\nEOF");
    assert_eq!(parsed.nested[0].commands[0].text(), "touch x");
    let parsed = parse("cat <<'EOF'\n$(touch x)\nEOF");
    assert!(
        parsed.nested.is_empty(),
        "a quoted delimiter keeps the body literal"
    );
    let parsed = parse("X=$(id) ls > $(echo out)");
    assert_eq!(parsed.nested.len(), 2);
}

#[test]
fn arithmetic_on_anything_but_literals_is_recorded() {
    for line in [
        "[[ 1 -eq 1 ]] && echo $((1 + 2)) ${x:1:2} ${a[1]} ${a[@]} ${!a[@]}",
        "(( 3 > 2 ))",
    ] {
        let parsed = parse(line);
        assert!(
            parsed.arithmetic.is_empty(),
            "{line}: {:?}",
            parsed.arithmetic
        );
    }
    for line in [
        "echo $((x))",
        "echo ${a[$i]}",
        "echo ${s:n}",
        "echo ${s:$n}",
        "echo ${!x}",
        "echo ${x@P}",
        "(( x + 1 ))",
        "for ((i=0;i<3;i++)); do :; done",
        "a[$(id)]=1",
        "echo $[y]",
    ] {
        let parsed = parse(line);
        assert!(
            !parsed.arithmetic.is_empty() || parsed.unreadable.is_some(),
            "{line}"
        );
    }
    // The test command keeps its operands for the classifier.
    assert_eq!(
        one("[[ 'a[$(touch x)]' -eq 0 ]]"),
        ["[[", "a[$(touch x)]", "-eq", "0", "]]"]
    );
}

#[test]
fn redirects_are_read_whatever_the_parser_does_with_them() {
    let parsed = parse("echo >f x 2> g y");
    let c = &parsed.commands[0];
    assert_eq!(
        c.text(),
        "echo x y",
        "words after a redirect target are arguments"
    );
    let targets: Vec<&str> = c.redirects.iter().map(|r| r.target.shown()).collect();
    assert_eq!(targets, ["f", "g"]);
    let parsed = parse("cat 0< f");
    assert_eq!(parsed.commands[0].text(), "cat");
    assert_eq!(parsed.commands[0].redirects[0].fd, Some(0));
    let parsed = parse("ls 2>&1 >&- >| a &>> b 3>c <<< 'x' >& d");
    let written: Vec<&str> = parsed
        .all_redirects()
        .filter_map(|r| r.written_target())
        .map(Word::shown)
        .collect();
    assert_eq!(written, ["a", "b", "c", "d"]);
    let parsed = parse("{ ls; } > out; > created");
    let written: Vec<&str> = parsed
        .all_redirects()
        .filter_map(|r| r.written_target())
        .map(Word::shown)
        .collect();
    assert_eq!(written, ["created", "out"]);
    let parsed = parse("cat <<EOF > out && rm x\nhi\nEOF");
    assert_eq!(parsed.commands.len(), 2);
    assert_eq!(parsed.commands[1].text(), "rm x");
}

#[test]
fn lines_the_parser_reads_differently_from_bash_are_unreadable() {
    for line in [
        "echo 'unterminated",
        "echo $(ls",
        "ls; ; ls",
        "echo }{ { }",
        "echo `echo \\`id\\``",
        "cat <<A <<B\n$(a)\nA\n$(b)\nB",
        "exec 3<>f",
        "cat <<EOF 2>/dev/null | sed -i x f\nhi\nEOF",
        "cat <<E\"O\"F\nx\nEOF\nrm y",
        "cat <<EOF\nx",
    ] {
        assert!(parse(line).unreadable.is_some(), "{line:?}");
    }
    // Here-documents end where bash ends them, whatever the quoting of the delimiter.
    for line in [
        "cat <<\"EOF\"\nx\nEOF\nrm y",
        "cat <<E\\OF\nx\nEOF\nrm y",
        "cat <<-EOF\n\tx\n\tEOF\nrm y",
        "cat <<'E F'\nx\nE F\nrm y",
    ] {
        let parsed = parse(line);
        assert_eq!(parsed.unreadable, None, "{line:?}");
        assert_eq!(
            parsed.commands.last().map(SimpleCommand::text),
            Some("rm y".into())
        );
    }
    // Words the parser splits at a backslash-newline are one word to bash.
    let parsed = parse("ec\\\nho hi");
    assert!(parsed.commands[0].words[0].is_unknown());
    assert_eq!(one("echo ab\\\n  cd"), ["echo", "ab", "cd"]);
    assert_eq!(one("echo \\\n-i"), ["echo", "-i"]);
    // `$"…"` comes out as two nodes; bash reads one word.
    assert!(parse("echo $\"x\"").commands[0].words[1].is_unknown());
}

#[test]
fn deny_rules_still_see_what_an_unreadable_line_runs() {
    let parsed = parse("rm -rf x\necho 'unterminated");
    assert!(parsed.unreadable.is_some());
    assert!(parsed.commands.iter().any(|c| c.text() == "rm -rf x"));
}

fn readings(line: &str) -> Vec<String> {
    match runs(&parse(line).commands[0]) {
        Runs::Commands { readings, .. } => readings.iter().map(SimpleCommand::full_text).collect(),
        Runs::Line { line, .. } => vec![format!("line: {line}")],
        Runs::Unknown { why, .. } => vec![format!("unknown: {why}")],
        Runs::Nothing => Vec::new(),
    }
}

#[test]
fn wrappers_are_unwrapped() {
    for (line, inner) in [
        ("env rm x", "rm x"),
        ("env -i FOO=1 rm x", "FOO=1 rm x"),
        ("command rm x", "rm x"),
        ("builtin cd x", "cd x"),
        ("exec -a name rm x", "rm x"),
        ("timeout 5 rm x", "rm x"),
        ("timeout -s KILL 5 rm x", "rm x"),
        ("nice -n 5 rm x", "rm x"),
        ("nice -5 rm x", "rm x"),
        ("nohup rm x", "rm x"),
        ("time -p rm x", "rm x"),
        ("stdbuf -oL rm x", "rm x"),
        ("ionice -c 3 rm x", "rm x"),
        ("setsid rm x", "rm x"),
        ("sudo -u root rm x", "rm x"),
        ("doas rm x", "rm x"),
        ("/usr/bin/env rm x", "rm x"),
        ("xargs rm", "rm {xargs input}"),
        ("xargs -0 rm", "rm {xargs input}"),
        ("xargs -I{} sh -c 'x {}'", "sh -c x {}"),
        ("find . -exec rm {} ;", "rm {}"),
        ("bash -c 'rm x'", "line: rm x"),
        ("sh -ec \"rm x\"", "line: rm x"),
        ("eval 'rm x'", "line: rm x"),
        ("su -c 'rm x' root", "line: rm x"),
        ("env -S 'rm x'", "line: rm x"),
    ] {
        let got = readings(line);
        assert!(got.iter().any(|r| r == inner), "{line}: {got:?}");
    }
    let Runs::Commands {
        readings: found, ..
    } = runs(&parse("xargs -I{} sh -c 'x {}'").commands[0])
    else {
        panic!("xargs runs a command");
    };
    assert!(found[0].words[2].is_unknown(), "the input replaces {{}}");
    assert!(readings("env").is_empty());
    assert!(readings("command -v rm").is_empty());
    assert!(readings("bash script.sh").is_empty());
    for line in ["eval $x", "sh -c \"$x\"", "env $x rm", "timeout $t rm"] {
        let got = readings(line);
        assert!(got[0].starts_with("unknown"), "{line}: {got:?}");
    }
}

#[test]
fn program_names_resolve_only_system_paths() {
    let word = |t: &str| Word::Known(t.into());
    assert_eq!(program_name(&word("/bin/rm")), Some("rm"));
    assert_eq!(program_name(&word("/usr/local/bin/rg")), Some("rg"));
    assert_eq!(program_name(&word("./ls")), None);
    assert_eq!(program_name(&word("/tmp/ls")), None);
    assert_eq!(program_name(&Word::anything("$x")), None);
}

#[test]
fn deep_nesting_is_unreadable_not_a_crash() {
    for line in [
        format!("{}ls{}", "$(".repeat(5000), ")".repeat(5000)),
        format!("[[ {}1{} ]]", "( ".repeat(5000), " )".repeat(5000)),
        format!("{}ls{}", "( ".repeat(5000), " )".repeat(5000)),
        format!("echo {}", "${x:-".repeat(3000) + &"}".repeat(3000)),
    ] {
        let parsed = parse(&line);
        assert!(parsed.unreadable.is_some(), "{}", &line[..40]);
    }
}

/// A wrapper whose option lacks its value (`watch -n`, `watch --interval`: the value would be
/// past the last word) is read without a crash, whatever the wrapper and the option.
#[test]
fn a_wrapper_option_missing_its_value_is_no_crash() {
    let wrappers = [
        "watch",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "sudo",
        "doas",
        "env",
        "xargs",
        "time",
        "strace",
        "ltrace",
        "flock",
        "chrt",
        "taskset",
        "prlimit",
        "script",
        "unshare",
        "nsenter",
        "setpriv",
        "systemd-run",
        "parallel",
        "ssh",
        "gdb",
        "valgrind",
        "busybox",
        "firejail",
        "su",
        "runuser",
        "numactl",
        "setarch",
        "git",
        "find",
        "exec",
        "command",
        "perf",
        "nohup",
    ];
    let tails = [
        "-n",
        "--interval",
        "-x",
        "--",
        "-",
        "--=",
        "-n5",
        "-c",
        "-u",
        "-o",
        "--output",
        "-s",
        "--signal",
        "-k",
        "-p",
        "-C",
        "-I",
        "-a",
        "-e",
        "-ex",
        "--args",
        "-i",
    ];
    for wrapper in wrappers {
        for tail in tails {
            for line in [
                format!("{wrapper} {tail}"),
                format!("{wrapper} {tail} {tail}"),
            ] {
                // Reading it at all is the point; what it yields is checked elsewhere.
                let _ = readings(&line);
            }
        }
    }
    // Nothing follows the option, so nothing runs; with a command, that command is seen.
    assert!(readings("watch --interval").is_empty());
    assert_eq!(readings("watch -n 2 rm x"), ["line: rm x"]);
}
