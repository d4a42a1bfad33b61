//! The bypass corpus (`tests/data/bash_bypass.txt`): command lines that change files or run
//! programs while looking like reading. Each must be refused by the read-only classifier and
//! by reading allow rules; each with a marker must really create it when run unchecked, so
//! the corpus stays honest. Plus the ordinary reading commands that must stay accepted.
#![allow(clippy::unwrap_used)]

use fleet_tools::permissions::{Behavior, PermissionMode, Permissions, RuleKind};
use fleet_tools::{check_command, Access, CommandPolicy, Workspace};
use std::path::Path;
use std::process::{Command, Stdio};

/// One corpus case: the command line and the file it creates when it runs unchecked.
struct Case {
    command: String,
    marker: Option<String>,
}

/// Reads the corpus: `#` lines are comments, `{NL}` is a newline, a trailing ` #> NAME`
/// names the marker.
fn corpus() -> Vec<Case> {
    let text = include_str!("data/bash_bypass.txt");
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (command, marker) = match line.rsplit_once(" #> ") {
                Some((command, marker)) => (command, Some(marker.trim().to_string())),
                None => (line, None),
            };
            Case {
                command: command.replace("{NL}", "\n"),
                marker,
            }
        })
        .collect()
}

const PROJECT: &str = "/srv/fleet-bypass-test/project";

#[test]
fn the_corpus_is_large_enough_and_names_its_markers_once() {
    let cases = corpus();
    assert!(cases.len() >= 46, "{} cases", cases.len());
    let mut markers: Vec<&str> = cases.iter().filter_map(|c| c.marker.as_deref()).collect();
    let count = markers.len();
    markers.sort_unstable();
    markers.dedup();
    assert_eq!(markers.len(), count, "a marker is named twice");
}

#[test]
fn every_bypass_is_refused_by_the_read_only_classifier() {
    let accepted: Vec<String> = corpus()
        .into_iter()
        .filter(|case| {
            check_command(&case.command, &CommandPolicy::ReadOnly, Path::new(PROJECT)).is_ok()
        })
        .map(|case| case.command)
        .collect();
    assert!(
        accepted.is_empty(),
        "accepted as read-only:\n{}",
        accepted.join("\n")
    );
}

fn reading_rules(project: &Path) -> Permissions {
    let mut builder = Permissions::builder(Workspace::new(project));
    builder.mode(PermissionMode::Default);
    builder
        .rules(
            RuleKind::Allow,
            &[
                "Bash(ls *)",
                "Bash(cat *)",
                "Bash(find *)",
                "Bash(sed -n *)",
                "Bash(git status)",
            ],
            project,
            "test",
        )
        .unwrap();
    builder.build()
}

#[test]
fn no_bypass_is_allowed_by_reading_rules() {
    let project = tempfile::tempdir().unwrap();
    let perms = reading_rules(project.path());
    let allowed: Vec<String> = corpus()
        .into_iter()
        .filter(|case| {
            let access = Access::Command(case.command.clone());
            let decision = perms.check("Bash", false, &access, project.path());
            decision.behavior == Behavior::Allow
        })
        .map(|case| case.command)
        .collect();
    assert!(
        allowed.is_empty(),
        "allowed by a reading rule:\n{}",
        allowed.join("\n")
    );
}

/// Whether `program` is on PATH (the corpus uses a few tools a machine may lack).
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether `path` exists, or comes to within a few seconds: a process substitution or a
/// background job may still be writing it when the shell has exited.
fn appears(path: &std::path::Path) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !path.exists() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

#[test]
fn bypasses_with_a_marker_create_it_when_run_unchecked() {
    let mut missing = Vec::new();
    for case in corpus() {
        let Some(marker) = &case.marker else {
            continue;
        };
        let line = fleet_tools::shell::parse(&case.command);
        let program = line
            .commands
            .iter()
            .find_map(|c| c.words.first().and_then(|w| w.known()))
            .unwrap_or_default()
            .to_string();
        if ["rg", "tree", "fd"].contains(&program.as_str()) && !installed(&program) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
        Command::new("bash")
            .args(["-c", &case.command])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        if !appears(&dir.path().join(marker)) {
            missing.push(format!("{marker}: {}", case.command));
        }
    }
    assert!(
        missing.is_empty(),
        "markers not created:\n{}",
        missing.join("\n")
    );
}

/// Ordinary reading commands that must stay read-only.
const READING: &[&str] = &[
    "cat a.txt",
    "ls -la src",
    "git status",
    "git log --oneline -5",
    "rg -n foo src",
    "grep -r x .",
    "head -n 5 f | wc -l",
    "find . -name '*.rs' -type f",
    "sed -n '1,5p' f",
    // Arithmetic on literal numbers evaluates nothing hidden.
    "echo \"$((1+2))\"",
    // A glob for a program without acting options.
    "wc -l *.rs",
    "ls *.md 2>/dev/null",
    "cat ./*.txt | sort | uniq -c",
    "sed -n 1p ./*.rs",
    "sed -n 1p -- \"$f\"",
    "for f in *.md; do head -n 1 \"$f\"; done",
    "while read -r line; do echo \"$line\"; done < list.txt",
    "git diff --stat HEAD~1",
    "git show HEAD:README.md",
    "git branch -a",
    "jq .name package.json",
    "diff <(sort a) <(sort b)",
    "echo \"$(git rev-parse HEAD)\"",
    "[[ -f Cargo.toml ]] && cat Cargo.toml",
    "[ -d src ] || echo none",
    "timeout 10 grep -rn TODO src",
    "find . -type f | xargs wc -l",
    "bash -c 'ls -la'",
    "cat <<'EOF'\n$(not run)\nEOF",
    "stat -c %s f && du -sh .",
    "awk '{print $1}' f",
    "tail -n 20 log.txt 2>&1",
    "cd src && ls",
    // printf's only option is a first `-v`; IFS before one command changes only its splitting.
    "printf '%s\\n' *",
    "while IFS= read -r line; do echo \"$line\"; done < list.txt",
    "a=1; echo \"$a\"",
];

#[test]
fn ordinary_reading_commands_stay_read_only() {
    let refused: Vec<String> = READING
        .iter()
        .filter_map(|command| {
            check_command(command, &CommandPolicy::ReadOnly, Path::new(PROJECT))
                .err()
                .map(|refusal| format!("{command:?}: {refusal}"))
        })
        .collect();
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
}

#[test]
fn refusals_never_print_raw_control_characters() {
    for command in [
        "touch \u{1b}[2Kx",
        "ls > $'\\e[2Kout'",
        "sed $'\\x1b' -i f",
        "rm -rf x\n\u{7}",
    ] {
        let refusal = check_command(command, &CommandPolicy::ReadOnly, Path::new(PROJECT))
            .unwrap_err()
            .to_string();
        assert!(
            !refusal.chars().any(|c| c.is_control()),
            "{command:?}: {refusal:?}"
        );
    }
}
