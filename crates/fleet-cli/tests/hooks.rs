//! Hooks, end to end: `fleet -p` as a real process against the fake model server, with hooks
//! in the project's `.claude/settings.json` (or an agent file) that are real shell commands.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

/// A project whose `.claude/settings.json` holds `hooks`.
fn project_with_hooks(hooks: Value) -> Project {
    Project::with_settings(&json!({ "hooks": hooks }))
}

fn command_hook(matcher: &str, command: &str) -> Value {
    json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}])
}

fn hook_lines<'a>(lines: &'a [Value], subtype: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == subtype)
        .collect()
}

#[tokio::test]
async fn a_pre_tool_use_hook_that_exits_2_blocks_bash_and_its_stderr_reaches_the_model() {
    let project = project_with_hooks(json!({
        "PreToolUse": command_hook("Bash", "echo 'no files today' >&2; exit 2")
    }));
    let server = server(Scenario::with_rules([
        Rule::text("THE HOOK SAID NO").when_tool_result_contains("no files today"),
        Rule::tool_use("Bash", json!({"command": "touch made.txt"})).when_tool_result(false),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "make a file",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                "--permission-mode",
                "bypassPermissions",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        !project.repo.join("made.txt").exists(),
        "the blocked command ran"
    );
    let lines = json_lines(&out);
    assert_eq!(result_of(&lines)["result"], "THE HOOK SAID NO");
    let started = hook_lines(&lines, "hook_started");
    let responses = hook_lines(&lines, "hook_response");
    assert_eq!(started.len(), 1, "{lines:#?}");
    assert_eq!(started[0]["hook_event"], "PreToolUse");
    assert_eq!(started[0]["hook_name"], "PreToolUse:Bash");
    assert_eq!(responses[0]["hook_id"], started[0]["hook_id"]);
    assert_eq!(responses[0]["exit_code"], 2);
    assert_eq!(responses[0]["outcome"], "error");
    assert_eq!(responses[0]["stderr"], "no files today\n");
    // The refusal is in permission_denials, as any refused call is.
    assert_eq!(
        result_of(&lines)["permission_denials"][0]["tool_name"],
        "Bash"
    );

    // Without the flag, no hook lines.
    let out = project
        .run(
            &server,
            &[
                "-p",
                "make a file",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "bypassPermissions",
            ],
            "",
        )
        .await;
    assert!(hook_lines(&json_lines(&out), "hook_started").is_empty());
}

#[tokio::test]
async fn updated_input_rewrites_a_command_and_allow_skips_the_prompt() {
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "echo rewritten > out.txt"}}});
    let project = project_with_hooks(json!({
        "PreToolUse": command_hook("Bash", &format!("echo '{answer}'"))
    }));
    let server = server(Scenario::with_rules([
        Rule::text("WROTE IT").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo original > out.txt"})),
    ]))
    .await;
    // Default mode, nobody to ask: only the hook's allow lets the write run.
    let out = project
        .run(&server, &["-p", "write", "--output-format", "json"], "")
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(project.read("out.txt").trim(), "rewritten");
    let result = result_of(&json_lines(&out)).clone();
    assert_eq!(result["permission_denials"], json!([]));
}

#[tokio::test]
async fn a_hook_allow_never_lifts_a_deny_rule() {
    let answer = json!({"hookSpecificOutput": {"permissionDecision": "allow"}});
    let settings = json!({
        "hooks": {"PreToolUse": command_hook("Bash", &format!("echo '{answer}'"))},
        "permissions": {"deny": ["Bash(touch *)"]}
    });
    let project = Project::new(&[(".claude/settings.json", &settings.to_string())]);
    let server = server(Scenario::with_rules([
        Rule::text("REFUSED").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "touch denied.txt"})),
    ]))
    .await;
    let out = project
        .run(&server, &["-p", "touch", "--output-format", "json"], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!project.repo.join("denied.txt").exists());
}

#[tokio::test]
async fn a_hook_that_hangs_is_killed_at_its_timeout_and_the_session_goes_on() {
    let project = project_with_hooks(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "sleep 600", "timeout": 1}]}]
    }));
    let server = server(Scenario::with_rules([
        Rule::text("WENT ON").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo ran > ran.txt"})),
    ]))
    .await;
    let (_, lines) = project
        .stream_json(
            &server,
            "run it",
            &[
                "--include-hook-events",
                "--permission-mode",
                "bypassPermissions",
            ],
        )
        .await;
    assert_eq!(result_of(&lines)["result"], "WENT ON");
    // A timeout is a non-blocking error: the call itself ran.
    assert_eq!(project.read("ran.txt").trim(), "ran");
    let response = hook_lines(&lines, "hook_response")[0];
    assert_eq!(response["outcome"], "cancelled");
    assert!(response.get("exit_code").is_none());
}

#[tokio::test]
async fn a_blocking_stop_hook_makes_the_agent_continue_once() {
    // A careless hook that always blocks: fleet still continues only once.
    let project = project_with_hooks(json!({
        "Stop": [{"hooks": [{"type": "command",
            "command": "cat >> stop-inputs.jsonl; echo >> stop-inputs.jsonl; echo 'run the tests first' >&2; exit 2"}]}]
    }));
    let server = server(Scenario::with_rules([
        Rule::text("TESTS RAN").when_last_user_contains("run the tests first"),
        Rule::text("FINISHED"),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "do the work", "--output-format", "json"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let result = result_of(&json_lines(&out)).clone();
    assert_eq!(result["result"], "TESTS RAN");
    assert_eq!(server.requests().len(), 2, "one continuation, then the end");
    let inputs: Vec<Value> = project
        .read("stop-inputs.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0]["hook_event_name"], "Stop");
    assert_eq!(inputs[0]["stop_hook_active"], false);
    assert_eq!(inputs[0]["last_assistant_message"], "FINISHED");
    assert_eq!(inputs[1]["stop_hook_active"], true);
}

#[tokio::test]
async fn agent_scoped_hooks_fire_only_for_that_agent() {
    let agent = "---\nname: guarded\ndescription: Runs commands under a guard\ntools: Bash\n\
hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          \
command: \"echo 'guarded agents may not run commands' >&2; exit 2\"\n---\n\
You are the guarded agent.\n";
    let project = Project::new(&[(".claude/agents/guarded.md", agent)]).trusting();
    let server = server(Scenario::with_rules([
        Rule::text("GUARDED-SAW-REFUSAL")
            .when_system_contains("You are the guarded agent")
            .when_tool_result_contains("guarded agents may not"),
        Rule::tool_use("Bash", json!({"command": "touch child.txt"}))
            .when_system_contains("You are the guarded agent"),
        Rule::text("MAIN-DONE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "touch main.txt"})).then_tool_use(
            "Agent",
            json!({"description": "guarded work", "prompt": "touch a file",
                   "subagent_type": "guarded"}),
        ),
    ]))
    .await;
    let (_, lines) = project
        .stream_json(
            &server,
            "go",
            &[
                "--include-hook-events",
                "--permission-mode",
                "bypassPermissions",
            ],
        )
        .await;
    assert_eq!(result_of(&lines)["result"], "MAIN-DONE");
    assert!(
        project.repo.join("main.txt").exists(),
        "the main agent's call was blocked"
    );
    assert!(
        !project.repo.join("child.txt").exists(),
        "the guarded agent's call ran"
    );
    let started = hook_lines(&lines, "hook_started");
    assert_eq!(started.len(), 1, "{started:#?}");
    assert!(
        started[0]["parent_tool_use_id"].is_string(),
        "the hook ran for the subagent: {:#?}",
        started[0]
    );
}

/// An attacker controls what the model writes into `tool_input`; it must reach the hook as
/// data on stdin, never as part of a command line.
#[tokio::test]
async fn tool_input_reaches_a_hook_only_on_stdin() {
    let project = project_with_hooks(json!({
        "PreToolUse": command_hook("Bash|Read", "cat > hook-input.json; echo stop >&2; exit 2")
    }));
    let hostile = "x'; touch pwned-quote; echo '$(touch pwned-subst)`touch pwned-tick`";
    let server = server(Scenario::with_rules([
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": hostile})),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--permission-mode", "bypassPermissions"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    for name in ["pwned-quote", "pwned-subst", "pwned-tick"] {
        assert!(!project.repo.join(name).exists(), "{name} was created");
    }
    let input: Value = serde_json::from_str(&project.read("hook-input.json")).unwrap();
    assert_eq!(input["tool_input"]["command"], hostile);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["cwd"], path_str(&project.repo));
    assert_eq!(input["permission_mode"], "bypassPermissions");
    assert!(input["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(input["transcript_path"]
        .as_str()
        .is_some_and(|s| s.ends_with(".jsonl")));
    assert!(input["tool_use_id"].as_str().is_some());
}

#[tokio::test]
async fn a_malformed_hooks_entry_is_an_error_naming_the_file() {
    let project = project_with_hooks(json!({"PreToolUse": [{"hooks": [{"type": "command"}]}]}));
    let server = server(Scenario::with_rules([Rule::text("never")])).await;
    let out = project.run(&server, &["-p", "hi"], "").await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(".claude/settings.json: hooks.PreToolUse[0].hooks[0]: has no `command`"),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn user_prompt_submit_adds_context_and_exit_2_blocks_the_prompt() {
    let project = project_with_hooks(json!({
        "UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "cat > prompt-input.json; echo 'today is launch day'"}]}]
    }));
    let server = server(Scenario::with_rules([
        Rule::text("SAW CONTEXT").when_last_user_contains("today is launch day")
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "what day is it", "--output-format", "json"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(result_of(&json_lines(&out))["result"], "SAW CONTEXT");
    let input: Value = serde_json::from_str(&project.read("prompt-input.json")).unwrap();
    assert_eq!(input["prompt"], "what day is it");
    assert_eq!(input["hook_event_name"], "UserPromptSubmit");

    let project = project_with_hooks(json!({
        "UserPromptSubmit": command_hook("", "echo 'no secrets in prompts' >&2; exit 2")
    }));
    let server = common::server(Scenario::with_rules([Rule::text("never")])).await;
    let out = project
        .run(
            &server,
            &["-p", "my password is hunter2", "--output-format", "json"],
            "",
        )
        .await;
    assert!(!out.status.success());
    let result = result_of(&json_lines(&out)).clone();
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("no secrets in prompts"),
        "{result}"
    );
    assert!(
        server.requests().is_empty(),
        "the blocked prompt reached the model"
    );
}

#[tokio::test]
async fn session_start_context_post_tool_use_feedback_and_session_end() {
    let lint = json!({"decision": "block", "reason": "lint failed on line 3"});
    let project = project_with_hooks(json!({
        "SessionStart": command_hook("startup", "echo 'this project indents with tabs'"),
        "PostToolUse": command_hook("Bash", &format!("echo '{lint}'")),
        "SessionEnd": command_hook("", "cat > end-input.json")
    }));
    let server = server(Scenario::with_rules([
        Rule::text("FIXING").when_tool_result_contains("PostToolUse hook feedback: lint failed"),
        Rule::tool_use("Bash", json!({"command": "true"}))
            .when_last_user_contains("this project indents with tabs"),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "go",
                "--output-format",
                "json",
                "--permission-mode",
                "bypassPermissions",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(result_of(&json_lines(&out))["result"], "FIXING");
    let end: Value = serde_json::from_str(&project.read("end-input.json")).unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");
}

#[tokio::test]
async fn a_failing_hook_is_shown_to_the_user_and_does_not_block() {
    let project = project_with_hooks(json!({
        "PreToolUse": command_hook("Bash", "echo 'linter missing' >&2; exit 1")
    }));
    let server = server(Scenario::with_rules([
        Rule::text("RAN").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo ok > ok.txt"})),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &["-p", "go", "--permission-mode", "bypassPermissions"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "RAN");
    assert!(project.repo.join("ok.txt").exists());
    assert!(
        stderr(&out).contains("fleet: PreToolUse:Bash hook: error (exit 1): linter missing"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn task_hooks_can_refuse_a_new_task_and_see_a_completion() {
    let project = project_with_hooks(json!({
        "TaskCreated": command_hook(
            "",
            "input=$(cat); case \"$input\" in *FORBIDDEN*) echo 'no such tasks here' >&2; exit 2;; esac"
        ),
        "TaskCompleted": command_hook("", "cat > task-completed.json")
    }));
    let server = server(Scenario::with_rules([
        Rule::text("TASKS-DONE").when_tool_result_contains("no such tasks here"),
        Rule::tool_use(
            "TaskCreate",
            json!({"subject": "FORBIDDEN work", "description": "refused"}),
        )
        .when_tool_result_contains("Updated task #1"),
        Rule::tool_use("TaskUpdate", json!({"taskId": "1", "status": "completed"}))
            .when_tool_result_contains("created successfully"),
        Rule::tool_use(
            "TaskCreate",
            json!({"subject": "write notes", "description": "fine"}),
        )
        .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "plan tasks",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            "",
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    assert_eq!(result_of(&lines)["result"], "TASKS-DONE", "{lines:#?}");
    let completed: Value = serde_json::from_str(
        &std::fs::read_to_string(project.repo.join("task-completed.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(completed["hook_event_name"], "TaskCompleted");
    assert_eq!(completed["task_id"], "1");
    let tasks = std::fs::read_dir(project.fleet_home.join("tasks"))
        .unwrap()
        .flatten()
        .flat_map(|team| std::fs::read_dir(team.path()).unwrap().flatten())
        .filter(|f| f.path().extension().is_some_and(|e| e == "json"))
        .count();
    assert_eq!(tasks, 1, "the refused task was never written");
}
