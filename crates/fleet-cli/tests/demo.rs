//! The README's run command, `fleet demo`, must work with no API key on both protocols, and
//! show a real session: a file read, edited and shown with a command.

use std::process::Command;

fn demo(args: &[&str]) -> String {
    let out = fleet_testkit::output_within(
        Command::new(env!("CARGO_BIN_EXE_fleet"))
            .arg("demo")
            .args(args)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL"),
        fleet_testkit::WAIT,
        "fleet demo",
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "fleet demo failed: {stdout}\n{stderr}"
    );
    // What a person sees in the terminal: the narrated run, and the retries said on stderr.
    format!("{stdout}{stderr}")
}

#[test]
fn anthropic_demo_reads_edits_and_runs_a_command() {
    let out = demo(&[]);
    assert!(out.contains("Read("), "{out}");
    assert!(out.contains("Edit("), "{out}");
    assert!(out.contains("Bash("), "{out}");
    assert!(
        out.contains("retrying"),
        "the scripted 529 was retried: {out}"
    );
    assert!(
        out.contains("1 file changed"),
        "git diff ran for real: {out}"
    );
    assert!(
        out.contains("greeting.txt on disk now: hello fleet"),
        "{out}"
    );
    assert!(out.contains("Explore"), "the background agent shows: {out}");
    assert!(
        out.contains("found no other file to change"),
        "the main agent answered after the notification: {out}"
    );
}

#[test]
fn openai_demo_runs_the_same_session() {
    let out = demo(&["--provider", "openai"]);
    assert!(
        out.contains("greeting.txt on disk now: hello fleet"),
        "{out}"
    );
}

#[test]
fn demo_can_print_one_json_result() {
    let out = demo(&["--output-format", "json"]);
    let result: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(result["type"], "result");
    // The run that answers the Explore agent's notification.
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["subagent_stats"]["completed"], 1);
    assert_eq!(result["subagent_stats"]["by_type"]["Explore"], 1);
}

#[test]
fn demo_can_print_stream_json() {
    let out = demo(&["--output-format", "stream-json"]);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines[0]["subtype"], "init");
    assert!(lines.iter().any(|l| l["subtype"] == "task_notification"));
    let last = lines.last().expect("lines");
    assert_eq!(last["type"], "result");
    assert_eq!(last["subtype"], "success");
}

#[test]
fn coordinator_demo_researches_implements_and_verifies() {
    let out = demo(&["--coordinator"]);
    for expected in [
        "background task",
        "Grep(world)",
        "Edit(",
        "[verification",
        "Bash(./test.sh)",
        "./test.sh: 1 passed",
        "greeting.txt on disk now: hello fleet",
        "4 subagents",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in {out}");
    }
    // Both researchers were started before the first one reported.
    let second_start = out
        .find("started: Find the tests")
        .expect("second researcher");
    let first_report = out.find("completed").expect("a report");
    assert!(second_start < first_report, "{out}");
}
