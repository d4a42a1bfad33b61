//! The Bash tool against real processes in temporary directories.
#![allow(clippy::unwrap_used)]

use fleet_tools::builtin::BashTool;
use fleet_tools::{Access, Tool, ToolContext, ToolError, ToolOutput, Workspace};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

fn context(dir: &Path) -> ToolContext {
    ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)))
}

fn tool() -> BashTool {
    BashTool::with_max_output(30_000)
}

async fn run(dir: &TempDir, input: Value) -> ToolOutput {
    tool().call(input, &context(dir.path())).await.unwrap()
}

async fn run_command(dir: &TempDir, command: &str) -> ToolOutput {
    run(dir, json!({ "command": command })).await
}

fn structured(output: &ToolOutput) -> &Value {
    output.structured.as_ref().unwrap()
}

/// Whether `pid` is a live process; a zombie counts as dead (nobody may reap it in a container).
fn alive(pid: i32) -> bool {
    if Path::new("/proc/self").exists() {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X'))
            }
            Err(_) => false,
        }
    } else {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
    }
}

/// Polls for a few seconds, since a killed process takes a moment to go.
async fn wait_dead(pid: i32) -> bool {
    for _ in 0..250 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Waits until the command has written each of `names` (one pid per file) and returns the pids.
async fn read_pids(dir: &Path, names: &[&str]) -> Vec<i32> {
    for _ in 0..500 {
        let pids: Vec<Option<i32>> = names
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(dir.join(name)).ok()?;
                text.strip_suffix('\n')?.parse().ok()
            })
            .collect();
        if pids.iter().all(Option::is_some) {
            return pids.into_iter().flatten().collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command never wrote {names:?}");
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[tokio::test]
async fn echo_returns_its_output_and_succeeds() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "echo hello; echo world").await;
    assert_eq!(output.content, "hello\nworld");
    assert!(!output.is_error);
    let structured = structured(&output);
    assert_eq!(structured["stdout"], "hello\nworld");
    assert_eq!(structured["stderr"], "");
    assert_eq!(structured["exitCode"], 0);
    assert_eq!(structured["interrupted"], false);
    assert_eq!(structured["isImage"], false);
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_naming_the_code() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "echo partial; exit 3").await;
    assert!(output.is_error);
    assert_eq!(output.content, "partial\nExit code 3");
    assert_eq!(structured(&output)["exitCode"], 3);
}

#[tokio::test]
async fn a_command_killed_by_a_signal_says_which() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "kill -KILL $$").await;
    assert!(output.is_error);
    assert_eq!(output.content, "Killed by signal SIGKILL");
    assert_eq!(structured(&output)["exitCode"], 128 + 9);
}

#[tokio::test]
async fn stderr_follows_stdout() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "echo to-err >&2; echo to-out").await;
    assert_eq!(output.content, "to-out\nto-err");
    assert!(!output.is_error);
    assert_eq!(structured(&output)["stderr"], "to-err");
}

#[tokio::test]
async fn a_silent_success_says_there_was_no_output() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "true").await;
    assert_eq!(output.content, "(no output)");
    assert!(!output.is_error);
    assert_eq!(structured(&output)["stdout"], "");
}

#[tokio::test]
async fn runs_in_the_context_cwd() {
    let dir = TempDir::new().unwrap();
    let cwd = dir.path().join("a dir with spaces");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::write(cwd.join("marker.txt"), "").unwrap();
    let output = tool()
        .call(json!({"command": "pwd; ls"}), &context(&cwd))
        .await
        .unwrap();
    let (pwd, listing) = output.content.split_once('\n').unwrap();
    assert_eq!(
        PathBuf::from(pwd).canonicalize().unwrap(),
        cwd.canonicalize().unwrap()
    );
    assert_eq!(listing, "marker.txt");
}

#[tokio::test]
async fn stdin_is_empty_so_reads_do_not_wait() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "read line; echo \"status=$? line=[$line]\"").await;
    assert_eq!(output.content, "status=1 line=[]");
}

#[tokio::test]
async fn the_environment_disables_editors_and_pagers() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "echo \"$GIT_EDITOR $PAGER $GIT_PAGER $FLEET_AGENT\"").await;
    assert_eq!(output.content, "true cat cat 1");
}

#[tokio::test]
async fn git_commit_amend_does_not_open_an_editor() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("git is not installed; skipping");
        return;
    }
    let dir = TempDir::new().unwrap();
    let command = "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; \
        git init -q . && \
        git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m first && \
        git -c user.name=t -c user.email=t@example.com commit -q --amend --allow-empty && \
        git log --format=%s";
    let output = run(&dir, json!({"command": command, "timeout": 30_000})).await;
    assert!(!output.is_error, "{}", output.content);
    assert_eq!(output.content, "first");
}

#[tokio::test]
async fn a_timeout_stops_the_command_and_reports_what_it_printed() {
    let dir = TempDir::new().unwrap();
    let output = run(
        &dir,
        json!({"command": "echo $$ > shell.pid; echo started; sleep 30", "timeout": 300}),
    )
    .await;
    let shell = read_pids(dir.path(), &["shell.pid"]).await[0];
    let dead = wait_dead(shell).await;
    kill(shell);
    assert!(dead, "the timed-out shell should be stopped");
    assert!(output.is_error);
    assert!(
        output.content.starts_with("started\n"),
        "{}",
        output.content
    );
    assert!(
        output.content.contains("timed out after 300 ms"),
        "{}",
        output.content
    );
    let structured = structured(&output);
    assert_eq!(structured["interrupted"], true);
    assert_eq!(structured["stdout"], "started");
}

#[tokio::test]
async fn cancelling_kills_the_shell_its_jobs_and_nested_shells() {
    let dir = TempDir::new().unwrap();
    let ctx = context(dir.path());
    let command = "echo $$ > shell.pid; sleep 100 & echo $! > job.pid; \
        bash -c 'echo $$ > nested.pid; sleep 30; true'";
    let bash = tool();
    let call = bash.call(json!({ "command": command }), &ctx);
    let cancel = async {
        let pids = read_pids(dir.path(), &["shell.pid", "job.pid", "nested.pid"]).await;
        for &pid in &pids {
            assert!(
                alive(pid),
                "process {pid} should be running before the cancel"
            );
        }
        ctx.cancel.cancel();
        pids
    };
    let (result, pids) = tokio::join!(call, cancel);
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    for pid in pids {
        let dead = wait_dead(pid).await;
        kill(pid);
        assert!(dead, "process {pid} survived the cancel");
    }
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_runs_nothing() {
    let dir = TempDir::new().unwrap();
    let ctx = context(dir.path());
    ctx.cancel.cancel();
    let result = tool().call(json!({"command": "touch ran"}), &ctx).await;
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn dropping_the_call_kills_the_process_group() {
    let dir = TempDir::new().unwrap();
    let ctx = context(dir.path());
    let command = "echo $$ > shell.pid; sleep 100 & echo $! > job.pid; sleep 30";
    let bash = tool();
    let mut call = bash.call(json!({ "command": command }), &ctx);
    let pids = tokio::select! {
        result = &mut call => panic!("the call finished early: {result:?}"),
        pids = read_pids(dir.path(), &["shell.pid", "job.pid"]) => pids,
    };
    drop(call);
    for pid in pids {
        let dead = wait_dead(pid).await;
        kill(pid);
        assert!(dead, "process {pid} survived the dropped call");
    }
}

#[tokio::test]
async fn a_background_job_with_redirected_output_keeps_running() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "sleep 30 > /dev/null 2>&1 & echo $!").await;
    assert!(!output.is_error, "{}", output.content);
    let pid: i32 = output.content.parse().unwrap();
    let still_running = alive(pid);
    kill(pid);
    assert!(
        still_running,
        "a redirected background job should outlive the call"
    );
}

#[tokio::test]
async fn a_background_job_holding_the_output_open_is_stopped_and_explained() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "sleep 30 & echo $! > job.pid; echo done").await;
    let pid = read_pids(dir.path(), &["job.pid"]).await[0];
    let dead = wait_dead(pid).await;
    kill(pid);
    assert!(
        dead,
        "the background job holding the output should be stopped"
    );
    assert!(!output.is_error, "{}", output.content);
    assert!(output.content.starts_with("done\n"), "{}", output.content);
    assert!(
        output.content.contains("cmd > file.log 2>&1 &"),
        "{}",
        output.content
    );
}

#[tokio::test]
async fn large_output_keeps_head_and_tail_within_the_cap() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "seq 1 200000").await;
    assert!(!output.is_error);
    let content = &output.content;
    assert!(content.starts_with("1\n2\n3\n"), "{}", &content[..50]);
    assert!(content.ends_with("\n199999\n200000"));
    assert!(content.contains(" lines / "), "no truncation marker");
    assert!(content.contains(" bytes truncated"), "no truncation marker");
    assert!(
        !content.contains("\n100000\n"),
        "the middle should be dropped"
    );
    // The cap plus the marker line.
    assert!(content.len() <= 30_000 + 200, "{} bytes", content.len());
}

#[tokio::test]
async fn both_streams_together_stay_within_the_cap() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, "seq 1 100000; seq 1 100000 >&2").await;
    let content = &output.content;
    assert_eq!(content.matches(" bytes truncated").count(), 2);
    assert!(content.len() <= 30_000 + 400, "{} bytes", content.len());
    let stderr = structured(&output)["stderr"].as_str().unwrap();
    assert!(stderr.starts_with("1\n2\n") && stderr.ends_with("\n100000"));
}

#[tokio::test]
async fn the_env_variable_sets_the_default_cap() {
    // `Default` reads BASH_MAX_OUTPUT_LENGTH; without it, the cap is 30000.
    let expected = std::env::var("BASH_MAX_OUTPUT_LENGTH")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .map_or(30_000, |n| n.min(150_000));
    assert_eq!(BashTool::default().max_output(), expected);
    let description = Tool::description(&BashTool::default());
    assert!(description.contains(&format!("At most {expected} bytes")));
}

#[tokio::test]
async fn invalid_utf8_is_replaced_not_refused() {
    let dir = TempDir::new().unwrap();
    let output = run_command(&dir, r"printf 'ok \xff\xfe done\n'").await;
    assert!(!output.is_error);
    assert_eq!(output.content, "ok \u{FFFD}\u{FFFD} done");
}

async fn input_error(input: Value) -> String {
    let dir = TempDir::new().unwrap();
    match tool().call(input, &context(dir.path())).await {
        Err(ToolError::InvalidInput { tool, message }) => {
            assert_eq!(tool, "Bash");
            message
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[tokio::test]
async fn bad_input_names_the_field() {
    let missing = input_error(json!({"description": "nothing"})).await;
    assert!(missing.contains("command"), "{missing}");
    let wrong_type = input_error(json!({"command": "true", "timeout": "10s"})).await;
    assert!(wrong_type.starts_with("timeout: "), "{wrong_type}");
    let zero = input_error(json!({"command": "true", "timeout": 0})).await;
    assert!(zero.starts_with("timeout: must be a positive"), "{zero}");
    let negative = input_error(json!({"command": "true", "timeout": -5})).await;
    assert!(negative.contains("got -5"), "{negative}");
    let empty = input_error(json!({"command": "   "})).await;
    assert!(empty.starts_with("command: is empty"), "{empty}");
}

#[tokio::test]
async fn a_timeout_above_the_maximum_is_lowered_not_refused() {
    let dir = TempDir::new().unwrap();
    let output = run(&dir, json!({"command": "echo ok", "timeout": 99_999_999})).await;
    assert_eq!(output.content, "ok");
}

#[tokio::test]
async fn a_missing_cwd_is_a_clear_error() {
    let dir = TempDir::new().unwrap();
    let gone = dir.path().join("gone");
    let result = tool()
        .call(json!({"command": "true"}), &context(&gone))
        .await;
    match result {
        Err(ToolError::NotFound { path, message }) => {
            assert_eq!(path, gone);
            assert!(message.contains("does not exist"), "{message}");
            assert!(message.contains(&gone.display().to_string()), "{message}");
        }
        other => panic!("expected a not-found error, got {other:?}"),
    }
}

#[test]
fn access_is_the_command_and_the_schema_requires_it() {
    let dir = TempDir::new().unwrap();
    let ctx = context(dir.path());
    let bash = tool();
    assert_eq!(
        bash.access(&json!({"command": "cargo test"}), &ctx),
        Access::Command("cargo test".into())
    );
    assert!(!bash.is_read_only());
    assert_eq!(bash.name(), "Bash");
    let schema = bash.input_schema();
    assert_eq!(schema["required"], json!(["command"]));
    assert!(schema["properties"]["timeout"].is_object());
    assert!(schema["properties"]["description"].is_object());
}
