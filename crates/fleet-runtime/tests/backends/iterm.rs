//! iTerm2 panes through a fake `it2` that records each call as a JSON line and answers the
//! way the real one does (`Created new pane: <id>`, exit 3 with "not found" for an unknown
//! session, `session list --json`).

use crate::backends::support::{assert_not_pwned, have, received, reporter, HOSTILE};
use fleet_runtime::backends::iterm::ITermBackend;
use fleet_runtime::backends::{BackendError, BackendKind, PaneBackend};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const LEAD: &str = "6C1B1D7A-0000-4000-8000-00000000000A";

const FAKE: &str = r#"#!/usr/bin/env python3
import json, sys, os
here = os.path.dirname(os.path.abspath(__file__))
log, state_path = os.path.join(here, "calls.jsonl"), os.path.join(here, "state.json")
args = sys.argv[1:]
with open(log, "a") as f:
    f.write(json.dumps(args) + "\n")
state = {"next": 1, "live": [LEAD]}
if os.path.exists(state_path):
    state = json.load(open(state_path))
def opt(name):
    return args[args.index(name) + 1] if name in args else None
def known(sid):
    if sid is not None and sid not in state["live"]:
        print("Error: Session '%s' not found" % sid, file=sys.stderr)
        sys.exit(3)
def save():
    json.dump(state, open(state_path, "w"))
cmd = args[:2]
if cmd == ["session", "split"]:
    known(opt("-s"))
    sid = "FAKE-%d" % state["next"]
    state["next"] += 1
    state["live"].append(sid)
    save()
    print("Created new pane: " + sid)
elif cmd == ["session", "set-name"] or cmd == ["session", "run"]:
    known(opt("-s"))
elif cmd == ["session", "close"]:
    sid = opt("-s")
    known(sid)
    state["live"].remove(sid)
    save()
    print("Session closed")
elif cmd == ["session", "list"]:
    print(json.dumps([{"id": s, "name": "", "title": ""} for s in state["live"]], indent=2))
else:
    print("Error: unknown command", file=sys.stderr)
    sys.exit(2)
"#;

/// A folder with the fake `it2` in it; its calls land in `calls.jsonl` beside it.
fn fake_it2() -> Option<(tempfile::TempDir, PathBuf)> {
    if !have("python3") {
        return None;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let it2 = dir.path().join("it2");
    std::fs::write(&it2, FAKE.replace("[LEAD]", &format!("[{LEAD:?}]"))).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&it2, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    Some((dir, it2))
}

fn calls(dir: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Vec<String>>(l).expect("a JSON line"))
        .collect()
}

fn words(call: &[&str]) -> Vec<String> {
    call.iter().map(|w| w.to_string()).collect()
}

/// Runs a typed command line the way a shell in the pane would, from `dir`. (The reporter
/// ends waiting on its terminal, which here is empty, so its exit status says nothing.)
fn run_line(line: &str, dir: &Path) {
    Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .status()
        .expect("sh runs");
}

#[test]
fn panes_are_split_typed_into_listed_and_closed_with_exact_calls() {
    let Some((bin, it2)) = fake_it2() else {
        return;
    };
    let iterm = ITermBackend::with_lead_session(it2, Some(format!("w0t0p0:{LEAD}")));
    assert_eq!(iterm.kind(), BackendKind::ITerm2);
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work it's $(touch pwned)");
    let (out_a, out_b, elsewhere) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    for d in [&work, &out_a, &out_b, &elsewhere] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let alice = reporter("alice", "blue", &work, &out_a, HOSTILE);
    let bob = reporter("bob", "green", &work, &out_b, &["plain"]);
    let a = iterm.spawn(&alice).expect("alice's pane");
    let b = iterm.spawn(&bob).expect("bob's pane");
    assert_eq!((a.id.as_str(), a.pid), ("FAKE-1", None));
    assert_eq!(b.id, "FAKE-2");

    let recorded = calls(bin.path());
    let line_a = recorded[2][4].clone();
    let line_b = recorded[6][4].clone();
    assert_eq!(
        recorded,
        [
            words(&["session", "split", "-v", "-s", LEAD]),
            words(&["session", "set-name", "alice", "-s", "FAKE-1"]),
            words(&["session", "run", "-s", "FAKE-1", &line_a]),
            words(&["session", "list", "--json"]),
            words(&["session", "split", "-s", "FAKE-1"]),
            words(&["session", "set-name", "bob", "-s", "FAKE-2"]),
            words(&["session", "run", "-s", "FAKE-2", &line_b]),
        ]
    );
    assert!(line_a.starts_with("cd '"), "{line_a}");
    assert!(line_a.contains(" && exec env -- 'OUT="), "{line_a}");

    // What the shell in the pane would do with the typed line: the words arrive exactly.
    run_line(&line_a, &elsewhere);
    run_line(&line_b, &elsewhere);
    assert_eq!(received(&out_a), HOSTILE);
    assert_eq!(received(&out_b), ["plain"]);
    assert_eq!(
        crate::backends::support::read(&out_a.join("cwd")),
        work.display().to_string()
    );
    assert_not_pwned(&[&work, &elsewhere, dir.path(), &out_a]);

    assert_eq!(iterm.list().expect("list"), ["FAKE-1", "FAKE-2"]);
    assert!(iterm.is_alive("FAKE-1").expect("is_alive"));
    iterm.kill("FAKE-1").expect("close");
    assert_eq!(iterm.list().expect("list"), ["FAKE-2"]);
    assert!(!iterm.is_alive("FAKE-1").expect("is_alive"));
    iterm
        .kill("FAKE-1")
        .expect("a session already gone is fine");
    let recorded = calls(bin.path());
    assert_eq!(
        recorded[9],
        words(&["session", "close", "-f", "-s", "FAKE-1"])
    );
    assert_eq!(iterm.where_to_look(), None);
    assert_eq!(iterm.last_words("FAKE-2", 10), None);
}

#[test]
fn without_a_lead_session_the_active_one_is_split_and_a_refused_spec_calls_nothing() {
    let Some((bin, it2)) = fake_it2() else {
        return;
    };
    let iterm = ITermBackend::with_lead_session(it2, None);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut spec = reporter("x", "blue", dir.path(), dir.path(), &["ctrl-c \u{3}"]);
    let err = iterm.spawn(&spec).expect_err("refused");
    assert!(matches!(err, BackendError::InvalidSpec(_)), "{err}");
    assert!(calls(bin.path()).is_empty());

    spec.argv.truncate(4);
    iterm.spawn(&spec).expect("pane");
    assert_eq!(calls(bin.path())[0], words(&["session", "split", "-v"]));
}

#[test]
fn a_pane_whose_command_cannot_be_typed_is_closed_again() {
    let Some((bin, it2)) = fake_it2() else {
        return;
    };
    // An it2 whose `run` fails, as when iTerm2's API refuses the connection midway.
    let text = std::fs::read_to_string(&it2).expect("read");
    let text = text.replace(
        "elif cmd == [\"session\", \"set-name\"] or cmd == [\"session\", \"run\"]:",
        "elif cmd == [\"session\", \"run\"]:\n    print(\"Error: API refused\", file=sys.stderr)\n    sys.exit(1)\nelif cmd == [\"session\", \"set-name\"]:",
    );
    std::fs::write(&it2, text).expect("write");
    let iterm = ITermBackend::with_lead_session(it2, Some(LEAD.into()));
    let dir = tempfile::tempdir().expect("temp dir");
    let err = iterm
        .spawn(&reporter("x", "blue", dir.path(), dir.path(), &[]))
        .expect_err("run fails");
    match err {
        BackendError::Failed { command, stderr } => {
            assert!(command.contains("session run -s FAKE-1"), "{command}");
            assert_eq!(stderr, "Error: API refused");
        }
        other => panic!("unexpected {other}"),
    }
    let recorded = calls(bin.path());
    assert_eq!(
        recorded.last().expect("calls"),
        &words(&["session", "close", "-f", "-s", "FAKE-1"])
    );
    assert!(iterm.list().expect("list").is_empty());
    let listed: Value = serde_json::from_str(
        &String::from_utf8(
            Command::new(bin.path().join("it2"))
                .args(["session", "list", "--json"])
                .output()
                .expect("it2")
                .stdout,
        )
        .expect("utf-8"),
    )
    .expect("json");
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(1),
        "only the lead's session is left"
    );
}
