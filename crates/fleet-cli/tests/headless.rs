//! `fleet -p` as a real process against the fake model server, in a temporary git repository:
//! the whole loop with the real tools, the output shapes scripts parse, limits, permissions
//! and sessions.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

const LIB: &str = "pub fn greet() -> &'static str {\n    \"hello world\"\n}\n";

fn fix_greeting(project: &Project) -> Scenario {
    let lib = project.path("src/lib.rs");
    Scenario::queue([
        Rule::text("Looking for the greeting.")
            .then_tool_use(
                "Grep",
                json!({"pattern": "hello", "output_mode": "files_with_matches"}),
            )
            .then_tool_use("Read", json!({"file_path": lib})),
        Rule::tool_use(
            "Edit",
            json!({"file_path": lib, "old_string": "hello world", "new_string": "hello fleet"}),
        )
        .when_tool_result_contains("hello world"),
        Rule::tool_use(
            "Bash",
            json!({"command": "git diff --stat && cat src/lib.rs", "description": "show the change"}),
        ),
        Rule::text("DONE: the greeting now says hello fleet.")
            .when_tool_result_contains("hello fleet"),
    ])
}

/// A model that asks for a Glob on every turn and never finishes on its own.
fn endless_glob() -> Scenario {
    Scenario::with_rules([Rule::tool_use("Glob", json!({"pattern": "*.txt"}))])
}

#[tokio::test]
async fn a_session_greps_reads_edits_runs_and_answers_in_stream_json() {
    let project = Project::new(&[("src/lib.rs", LIB), ("README.md", "# app\n")]);
    let server = server(fix_greeting(&project)).await;
    let (_, lines) = project
        .stream_json(
            &server,
            "fix the greeting",
            &[
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash(git diff *)",
                "Bash(cat *)",
            ],
        )
        .await;

    let init = &lines[0];
    assert_eq!(
        (init["type"].as_str(), init["subtype"].as_str()),
        (Some("system"), Some("init"))
    );
    assert_eq!(init["cwd"], path_str(&project.repo));
    assert_eq!(init["permissionMode"], "acceptEdits");
    let tools: Vec<_> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in ["Bash", "Edit", "Glob", "Grep", "Read", "Write"] {
        assert!(tools.contains(&tool), "{tool} offered: {tools:?}");
    }
    let session = init["session_id"].as_str().unwrap().to_string();
    assert!(
        lines.iter().all(|l| l["session_id"] == session.as_str()),
        "one session id throughout"
    );

    let tool_uses: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "assistant")
        .map(|l| &l["message"]["content"][0])
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_uses, ["Grep", "Read", "Edit", "Bash"]);
    let results: Vec<_> = lines.iter().filter(|l| l["type"] == "user").collect();
    assert_eq!(results.len(), 4);
    for r in &results {
        assert!(r["parent_tool_use_id"].is_null());
        assert_eq!(r["message"]["content"][0]["type"], "tool_result");
        assert_eq!(r["message"]["content"][0]["is_error"], false, "{r}");
    }
    assert!(results[1]["message"]["content"][0]["content"]
        .as_str()
        .unwrap()
        .contains("hello world"));
    assert_eq!(
        results[1]["tool_use_result"]["file"]["filePath"],
        project.path("src/lib.rs")
    );
    assert!(results[3]["tool_use_result"]["stdout"]
        .as_str()
        .unwrap()
        .contains("hello fleet"));

    let result = result_of(&lines);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 4);
    assert_eq!(result["result"], "DONE: the greeting now says hello fleet.");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(result["permission_denials"], json!([]));
    assert!(result["usage"]["input_tokens"].is_u64());
    assert!(
        result["usage"]["cache_read_input_tokens"].as_u64().unwrap() > 0,
        "later turns reuse the cached prefix: {}",
        result["usage"]
    );

    assert!(
        project.read("src/lib.rs").contains("hello fleet"),
        "the file changed on disk"
    );
    assert!(project.git(&["diff", "--stat"]).contains("1 file changed"));
    let transcripts = project.transcripts();
    assert_eq!(transcripts.len(), 1);
    assert!(transcripts[0].ends_with(format!("{session}.jsonl")));
    let transcript = std::fs::read_to_string(&transcripts[0]).unwrap();
    assert_eq!(
        transcript.lines().count(),
        8,
        "prompt, 4 replies, 3 messages of results"
    );
    assert!(transcript.contains("fix the greeting"));
}

#[tokio::test]
async fn json_output_is_one_result_object_and_text_is_the_answer() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("The answer is 42.")])).await;
    let out = project
        .run(&server, &["-p", "question", "--output-format", "json"], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "result");
    assert_eq!(lines[0]["result"], "The answer is 42.");
    assert_eq!(lines[0]["num_turns"], 1);

    let out = project.run(&server, &["-p"], "question from stdin").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The answer is 42.\n");
    let last = server.last_request().unwrap();
    let content = &last.body["messages"][0]["content"];
    let prompt = content
        .as_str()
        .or_else(|| content[0]["text"].as_str())
        .unwrap();
    assert_eq!(prompt, "question from stdin");
}

#[tokio::test]
async fn max_turns_ends_with_an_error_result_and_exit_code() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(endless_glob()).await;
    let out = project
        .run(
            &server,
            &["-p", "loop", "--max-turns", "2", "--output-format", "json"],
            "",
        )
        .await;
    assert!(!out.status.success(), "an error result exits non-zero");
    let result = &json_lines(&out)[0];
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn refused_calls_are_error_results_and_listed_in_permission_denials() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let outside = project.repo.parent().unwrap().join("outside.txt");
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "rm -rf build"})),
        Rule::tool_use(
            "Write",
            json!({"file_path": project.path("../outside.txt"), "content": "escaped"}),
        ),
        Rule::text("I could not do either."),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "clean up",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "acceptEdits",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let results: Vec<_> = lines.iter().filter(|l| l["type"] == "user").collect();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r["message"]["content"][0]["is_error"], true, "{r}");
    }
    assert!(!outside.exists(), "nothing was written outside the project");
    let denials = result_of(&lines)["permission_denials"]
        .as_array()
        .unwrap()
        .clone();
    let names: Vec<_> = denials
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Bash", "Write"]);
    assert_eq!(denials[0]["tool_input"]["command"], "rm -rf build");
}

#[tokio::test]
async fn resume_and_continue_carry_the_conversation_on() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("second answer").when_last_user_contains("second"),
        Rule::text("third answer").when_last_user_contains("third"),
        Rule::text("first answer"),
    ]))
    .await;
    let id = "0b6c2f9e-3c1d-4d5e-9f00-1234567890ab";
    let out = project
        .run(&server, &["-p", "first", "--session-id", id], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "first answer\n");

    let out = project
        .run(
            &server,
            &["-p", "second", "--resume", id, "--output-format", "json"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_lines(&out)[0]["session_id"], id);
    let messages = server.last_request().unwrap().body["messages"].clone();
    let texts: Vec<_> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| serde_json::to_string(&m["content"]).unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts[0].contains("first") && texts[1].contains("first answer"));

    let out = project
        .run(&server, &["-p", "third", "--continue"], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "third answer\n");
    assert_eq!(
        server.last_request().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        project.transcripts().len(),
        1,
        "all three runs share one transcript"
    );

    let out = project
        .run(&server, &["-p", "x", "--resume", "no-such-session"], "")
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no-such-session"), "{}", stderr(&out));
}

#[tokio::test]
async fn stream_json_input_runs_each_message_in_turn() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("one").when_last_user_contains("first"),
        Rule::text("two").when_last_user_contains("second"),
    ]))
    .await;
    let stdin = concat!(
        r#"{"type":"user","message":{"role":"user","content":"first"}}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second"}]}}"#,
        "\n"
    );
    let out = project
        .run(
            &server,
            &[
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ],
            stdin,
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let results: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "result")
        .map(|l| l["result"].clone())
        .collect();
    assert_eq!(results, [json!("one"), json!("two")]);
    assert_eq!(lines.iter().filter(|l| l["subtype"] == "init").count(), 1);

    let out = project
        .run(
            &server,
            &["-p", "--input-format", "stream-json"],
            "{\"type\":\"assistant\"}\n",
        )
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("line 1"), "{}", stderr(&out));
}

#[tokio::test]
async fn bad_invocations_say_what_is_wrong() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("unused")])).await;
    for (args, expected) in [
        (
            &["-p", "x", "--permission-mode", "yolo"][..],
            "unknown permission mode",
        ),
        (&["-p", "x", "--allowedTools", "Bash("][..], "Bash("),
        (&["-p", "x", "--cwd", "/no/such/dir"][..], "/no/such/dir"),
        (
            &["-p", "x", "--continue", "--resume", "abc"][..],
            "cannot be used together",
        ),
        (&["-p", "x", "--session-id", "not-a-uuid"][..], "UUID"),
        (&["-p", "x", "--continue"][..], "no earlier session"),
        (&["just a prompt"][..], "fleet -p"),
        (&["-p", "x", "--tools", "Read,Teleport"][..], "Teleport"),
    ] {
        let out = project.run(&server, args, "").await;
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(server.request_count(), 0, "nothing reached the model");
}

#[tokio::test]
async fn settings_files_and_instructions_shape_the_session() {
    let project = Project::new(&[
        ("CLAUDE.md", "Always answer in haiku."),
        ("sub/AGENTS.md", "Sub folder rules."),
        ("sub/notes.txt", "n\n"),
        (
            ".claude/settings.json",
            r#"{"permissions": {"deny": ["Read(/secret/**)"], "allow": ["Bash(ls *)"]}}"#,
        ),
        ("secret/key.txt", "k\n"),
    ]);
    std::fs::create_dir_all(project.home.join(".claude")).unwrap();
    std::fs::write(
        project.home.join(".claude/CLAUDE.md"),
        "User-wide preference.",
    )
    .unwrap();
    let server = server(Scenario::queue([
        Rule::tool_use("Read", json!({"file_path": project.path("secret/key.txt")}))
            .then_tool_use("Bash", json!({"command": "ls -a"})),
        Rule::text("done"),
    ]))
    .await;
    let sub = project.path("sub");
    let out = project
        .run(
            &server,
            &[
                "-p",
                "look",
                "--output-format",
                "stream-json",
                "--cwd",
                &sub,
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let results: Vec<_> = lines.iter().filter(|l| l["type"] == "user").collect();
    let read = &results[0]["message"]["content"][0];
    assert_eq!(
        read["is_error"], true,
        "the deny rule from .claude/settings.json held: {read}"
    );
    assert!(
        read["content"]
            .as_str()
            .unwrap()
            .contains("Read(/secret/**)"),
        "{read}"
    );
    let ls = &results[1]["message"]["content"][0];
    assert_eq!(
        ls["is_error"], false,
        "the allow rule let `ls -a` run: {ls}"
    );
    assert!(
        ls["content"].as_str().unwrap().contains("notes.txt"),
        "ran in --cwd: {ls}"
    );

    let system = server.requests()[0].body["system"].to_string();
    for expected in [
        "Always answer in haiku.",
        "Sub folder rules.",
        "User-wide preference.",
        "Current git branch: main",
        &format!("Working directory: {sub}"),
    ] {
        assert!(
            system.contains(expected),
            "system prompt lacks {expected:?}: {system}"
        );
    }
    let order = [
        "User-wide preference.",
        "Always answer in haiku.",
        "Sub folder rules.",
    ]
    .map(|s| system.find(s).unwrap());
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "user, root, then nearest: {order:?}"
    );
}

#[tokio::test]
async fn the_budget_stops_the_run() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(endless_glob()).await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "spend",
                "--max-budget-usd",
                "0.0000001",
                "--output-format",
                "json",
            ],
            "",
        )
        .await;
    assert!(!out.status.success());
    let result = &json_lines(&out)[0];
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["num_turns"], 1);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0000001);
}

#[tokio::test]
async fn system_prompt_flags_replace_and_append() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--system-prompt",
                "You are a test.",
                "--append-system-prompt",
                "Be brief.",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let system = server.last_request().unwrap().body["system"].clone();
    assert_eq!(system[0]["text"], "You are a test.");
    let context = system[1]["text"].as_str().unwrap();
    assert!(
        context.contains("<env>") && context.ends_with("Be brief."),
        "{context}"
    );
}

/// SDKs pass `--system-prompt ""` to mean "no custom prompt". The fake server refuses an
/// empty system block as the real API does, so sending one fails this run.
#[tokio::test]
async fn an_empty_system_prompt_sends_no_empty_block() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let out = project
        .run(&server, &["-p", "hi", "--system-prompt", ""], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "ok");
    let system = server.last_request().unwrap().body["system"].clone();
    let blocks = system.as_array().unwrap();
    assert_eq!(blocks.len(), 1, "only the context: {system}");
    assert!(blocks[0]["text"].as_str().unwrap().contains("<env>"));
}

#[tokio::test]
async fn tools_flag_chooses_what_the_model_is_offered() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    for (list, expected) in [
        ("Read,Grep", vec!["Grep", "Read"]),
        // `Task` is the Agent tool's old name.
        ("Read,Task", vec!["Read", "Agent"]),
        ("", vec![]),
        (
            "default",
            vec![
                "Bash",
                "Edit",
                "Glob",
                "Grep",
                "Read",
                "Write",
                "Agent",
                "SendMessage",
                "TaskStop",
                "TaskOutput",
                "TeamCreate",
                "TeamDelete",
                "TaskCreate",
                "TaskGet",
                "TaskList",
                "TaskUpdate",
            ],
        ),
    ] {
        let out = project
            .run(
                &server,
                &[
                    "-p",
                    "hi",
                    "--tools",
                    list,
                    "--output-format",
                    "stream-json",
                ],
                "",
            )
            .await;
        assert!(out.status.success(), "{}", stderr(&out));
        // `init` lists the Agent tool as `Task`, as Claude Code does; requests name it `Agent`.
        let listed: Vec<&str> = expected
            .iter()
            .map(|t| if *t == "Agent" { "Task" } else { t })
            .collect();
        let init = &json_lines(&out)[0];
        assert_eq!(init["tools"], json!(listed), "--tools {list:?}");
        let offered: Vec<_> = server.last_request().unwrap().body["tools"]
            .as_array()
            .map(|tools| tools.iter().map(|t| t["name"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(offered, expected, "--tools {list:?}");
    }
}

#[tokio::test]
async fn a_transcript_that_cannot_be_written_stops_the_run_with_a_clear_error() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(endless_glob()).await;
    // The fleet home is a file, so no session folder can be made under it.
    std::fs::write(&project.fleet_home, "not a folder").unwrap();
    let out = project.run(&server, &["-p", "hi"], "").await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&path_str(&project.fleet_home)),
        "names the path: {err}"
    );
    assert!(server.request_count() <= 1, "the run stopped at once");
}
