//! The README's run command, `fleet demo`, must work with no API key on both protocols.

use std::process::Command;

fn demo(provider: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["demo", "--provider", provider])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("fleet runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fleet demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The figure before `label` on the line that mentions `turn`.
fn figure(stdout: &str, turn: &str, label: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.contains(turn))
        .unwrap_or_else(|| panic!("no `{turn}` line in {stdout}"));
    let before = &line[..line
        .find(label)
        .unwrap_or_else(|| panic!("no `{label}` in {line}"))];
    before
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|s| !s.is_empty())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before `{label}` in {line}"))
}

#[test]
fn anthropic_demo_retries_calls_a_tool_and_reads_the_cache() {
    let out = demo("anthropic");
    assert!(out.contains("[retry 2/"), "{out}");
    assert!(out.contains("⏺ Read({\"file_path\":"), "{out}");
    assert!(
        out.contains("⎿ read 2 lines"),
        "the file was really read: {out}"
    );
    assert!(out.contains("each one reports back."), "{out}");
    assert!(
        figure(&out, "[turn 2:", "cache read") > 0,
        "the second turn reuses the first's prefix: {out}"
    );
    assert!(out.contains("across 3 requests"), "{out}");
}

#[test]
fn openai_demo_runs_the_same_exchange() {
    let out = demo("openai");
    assert!(out.contains("[retry 2/"), "{out}");
    assert!(out.contains("⎿ read 2 lines"), "{out}");
    assert!(figure(&out, "[turn 2:", "output tokens") > 0, "{out}");
}
