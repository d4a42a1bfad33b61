//! The OS sandbox as a user of `fleet -p` meets it: settings and flags, the warning on a
//! kernel without Landlock, secrets kept from Bash, a sandboxed subagent, and no process left
//! behind when fleet is killed.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;

const CHILD: &str = "running as a subagent";

/// The tool results of a stream-json run, in order (a subagent's included).
fn tool_results(out: &std::process::Output) -> Vec<Value> {
    json_lines(out)
        .into_iter()
        .filter(|l| l["type"] == "user")
        .map(|l| l["message"]["content"][0].clone())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

fn text(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn bash_calls(commands: &[&str]) -> Scenario {
    let mut rules: Vec<Rule> = commands
        .iter()
        .map(|c| Rule::tool_use("Bash", json!({ "command": c })))
        .collect();
    rules.push(Rule::text("DONE"));
    Scenario::queue(rules)
}

#[tokio::test]
async fn settings_turn_the_sandbox_on_and_let_sandboxed_commands_run_unasked() {
    let project = Project::new(&[("src/lib.rs", "fn x() {}\n")]).trusting();
    std::fs::create_dir_all(project.repo.join(".claude")).unwrap();
    std::fs::write(
        project.repo.join(".claude/settings.json"),
        json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}}).to_string(),
    )
    .unwrap();
    let outside = project.home.join("outside.txt");
    let escape = format!("touch {}", outside.display());
    let commands = [
        "echo made > src/made.txt",
        escape.as_str(),
        "git config core.fsmonitor evil",
    ];
    let server = server(bash_calls(&commands)).await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--output-format", "stream-json", "--verbose"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let results = tool_results(&out);
    assert_eq!(results.len(), 3, "{results:#?}");
    assert_eq!(results[0]["is_error"], false, "{}", results[0]);
    assert_eq!(project.read("src/made.txt"), "made\n");
    // Allowed without a prompt, then refused by the sandbox, which says so.
    let escaped = text(&results[1]);
    assert!(escaped.contains("denied by the sandbox"), "{escaped}");
    assert!(!outside.exists());
    // A write of git's configuration is a write of a protected file: it asks before the
    // sandbox is even reached (issue 30, item 4).
    assert!(
        text(&results[2]).contains("protected path"),
        "{}",
        results[2]
    );
    assert!(!project.read(".git/config").contains("fsmonitor"));

    // --no-sandbox: the same command is an ordinary Bash call again, which needs approval.
    let server = crate::common::server(bash_calls(&[escape.as_str()])).await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--output-format", "stream-json", "--no-sandbox"],
            "",
        )
        .await;
    let results = tool_results(&out);
    assert!(
        text(&results[0]).contains("needs approval"),
        "{}",
        results[0]
    );
    assert!(!outside.exists());
}

#[tokio::test]
async fn a_kernel_without_landlock_gets_one_warning_and_the_old_behaviour() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(bash_calls(&["touch one", "touch two"])).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "go",
                "--sandbox",
                "--permission-mode",
                "bypassPermissions",
            ],
            &[("FLEET_SANDBOX_UNAVAILABLE", "1")],
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("fleet: warning:").count(), 1, "{err}");
    assert!(err.contains("FLEET_SANDBOX_UNAVAILABLE"), "{err}");
    assert!(project.repo.join("one").exists() && project.repo.join("two").exists());

    std::fs::create_dir_all(project.repo.join(".fleet")).unwrap();
    std::fs::write(
        project.repo.join(".fleet/settings.json"),
        json!({"sandbox": {"enabled": true, "failIfUnavailable": true}}).to_string(),
    )
    .unwrap();
    let server = crate::common::server(bash_calls(&["touch three"])).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypassPermissions",
            ],
            &[("FLEET_SANDBOX_UNAVAILABLE", "1")],
        )
        .await;
    let results = tool_results(&out);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        text(&results[0]).contains("failIfUnavailable"),
        "{}",
        results[0]
    );
    assert!(!project.repo.join("three").exists());
}

#[tokio::test]
async fn bash_does_not_see_the_api_key_or_other_secrets() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(bash_calls(&["printenv"])).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypassPermissions",
            ],
            &[
                ("GITHUB_TOKEN", "ghp-secret-value"),
                ("FLEET_VISIBLE_MARK", "visible"),
            ],
        )
        .await;
    let printed = text(&tool_results(&out)[0]);
    assert!(printed.contains("FLEET_VISIBLE_MARK=visible"), "{printed}");
    for secret in [
        "ANTHROPIC_API_KEY",
        "sk-test",
        "GITHUB_TOKEN",
        "ghp-secret-value",
    ] {
        assert!(
            !printed.contains(secret),
            "{secret} reached Bash: {printed}"
        );
    }
}

#[tokio::test]
async fn an_explore_child_runs_its_commands_in_the_sandbox() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_system_contains(CHILD)
            .when_tool_result_contains("Seccomp"),
        Rule::tool_use(
            "Bash",
            json!({"command": "grep Seccomp: /proc/self/status"}),
        )
        .when_system_contains(CHILD),
        Rule::text("MAIN-DONE").when_tool_result_contains("CHILD-DONE"),
        Rule::tool_use(
            "Agent",
            json!({"description": "look", "prompt": "look", "subagent_type": "Explore"}),
        ),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--output-format", "stream-json", "--verbose"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let seccomp = tool_results(&out)
        .iter()
        .map(text)
        .find(|t| t.contains("Seccomp"))
        .unwrap();
    assert!(seccomp.contains("Seccomp:\t2"), "{seccomp}");
}

/// The pids of `sleep MARK` processes, one per mark found.
fn sleepers(marks: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_mark = |w: &[u8]| marks.iter().any(|m| m.as_bytes() == w);
        if words.len() >= 2 && words[0].ends_with(b"sleep") && is_mark(words[1]) {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            if !zombie {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    found
}

/// Starts a real `fleet -p` whose model asks for background and foreground sleeps, kills it
/// with SIGKILL once they all run, and checks that every one of them goes.
async fn no_orphans_after_kill_9(extra: &[&str]) {
    let project = Project::new(&[("a.txt", "x\n")]);
    let marks: Vec<String> = (1..=4)
        .map(|n| format!("86{}{n}", std::process::id()))
        .collect();
    let detached = format!("nohup sleep {} > /dev/null 2>&1 &", marks[0]);
    let waiting = format!(
        "sleep {} & sleep {} & (setsid sleep {} > /dev/null 2>&1 &); wait",
        marks[1], marks[2], marks[3]
    );
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": detached})),
        Rule::tool_use("Bash", json!({"command": waiting, "timeout": 600000})),
    ]))
    .await;
    let mut args = vec!["-p", "go", "--permission-mode", "bypassPermissions"];
    args.extend(extra);
    let mut cmd = project.command(&server, &args);
    let found = tokio::task::spawn_blocking(move || {
        let mut fleet = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut running = Vec::new();
        for _ in 0..600 {
            running = sleepers(&marks);
            if running.len() == marks.len() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(running.len(), marks.len(), "the sleeps never all started");
        fleet.kill().unwrap();
        let _ = fleet.wait();
        for _ in 0..400 {
            if sleepers(&marks).is_empty() {
                return Vec::new();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = sleepers(&marks);
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-9", pid])
                .status();
        }
        left
    })
    .await
    .unwrap();
    assert!(found.is_empty(), "processes outlived fleet: {found:?}");
}

#[tokio::test]
async fn no_bash_process_survives_kill_9_of_fleet() {
    no_orphans_after_kill_9(&[]).await;
}

#[tokio::test]
async fn no_sandboxed_bash_process_survives_kill_9_of_fleet() {
    no_orphans_after_kill_9(&["--sandbox"]).await;
}

/// `cat`, `ls`, `git status` need no prompt in any mode that asks (Claude Code's behaviour),
/// because they run read-only under the sandbox; a writing command still asks.
#[tokio::test]
async fn read_only_commands_run_without_a_prompt_and_confined() {
    for mode in ["default", "acceptEdits", "dontAsk", "plan"] {
        let project = Project::new(&[("hello.txt", "hello from the file\n")]);
        let server = crate::common::server(bash_calls(&[
            "cat hello.txt && ls && git status --short",
            "grep ^Seccomp: /proc/self/status",
            "touch made.txt",
        ]))
        .await;
        let out = project
            .run(
                &server,
                &[
                    "-p",
                    "go",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--permission-mode",
                    mode,
                ],
                "",
            )
            .await;
        assert!(out.status.success(), "{mode}: {}", stderr(&out));
        let results = tool_results(&out);
        assert_eq!(results.len(), 3, "{mode}: {results:#?}");
        let read = text(&results[0]);
        assert!(
            results[0]["is_error"] != true && read.contains("hello from the file"),
            "{mode}: {read}"
        );
        // The read-only command ran under the seccomp filter, i.e. in the sandbox.
        assert!(
            text(&results[1]).contains("Seccomp:\t2"),
            "{mode}: {}",
            text(&results[1])
        );
        assert_eq!(results[2]["is_error"], true, "{mode}: {:?}", results[2]);
        assert!(!project.repo.join("made.txt").exists(), "{mode}");
    }
}

/// A confined command cannot fish the key out of fleet's own environment either: Landlock
/// forbids reading another domain's `/proc/<pid>/environ` (a ptrace-class access), and the
/// command holds no capability that would override it.
#[tokio::test]
async fn a_confined_command_cannot_read_the_key_from_fleets_process() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(bash_calls(&[
        "cat /proc/$PPID/environ; tr '\\0' '\\n' < /proc/$PPID/environ; grep -a API_KEY /proc/*/environ",
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--output-format", "stream-json", "--verbose"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = text(&tool_results(&out)[0]);
    assert!(!printed.contains("sk-test"), "the key leaked: {printed}");
    assert!(printed.contains("Permission denied"), "{printed}");
}
