//! `fleet -p --coordinator` end to end: two researchers in parallel, the coordinator's own
//! synthesis, an implementer that edits a file in the repository, and a verifier that runs the
//! project's tests — every worker in the background, reporting with task notifications.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const COORDINATOR: &str = "coordinator of a team";
const WORKER: &str = "running as a subagent";
const SESSION: &str = "6f1e7d2a-0c4b-4c1e-9a53-2b7f0e1d9c11";

const TEST_SCRIPT: &str = "#!/bin/sh\n\
grep -q 'hello, world' greet.txt && echo TESTS PASSED || { echo TESTS FAILED; exit 1; }\n";

fn worker(marker: &str, rule: Rule) -> Rule {
    rule.when_system_contains(WORKER).when_marker(marker)
}

fn coordinator(rule: Rule) -> Rule {
    rule.when_system_contains(COORDINATOR)
}

fn scenario(project: &Project, scratchpad: &str) -> Scenario {
    let greet = project.path("greet.txt");
    Scenario::with_rules([
        // Researcher A finds the greeting and leaves a note in the scratchpad.
        worker(
            "RESEARCH-A",
            Rule::text("RESEARCH-A-REPORT: the greeting is line 1 of greet.txt"),
        )
        .when_tool_result_contains("notes.md"),
        worker(
            "RESEARCH-A",
            Rule::tool_use(
                "Write",
                json!({"file_path": format!("{scratchpad}/notes.md"), "content": "greeting: greet.txt:1\n"}),
            ),
        )
        .when_tool_result_contains("hello"),
        worker(
            "RESEARCH-A",
            Rule::tool_use("Grep", json!({"pattern": "hello", "output_mode": "content"})),
        )
        .when_tool_result(false),
        // Researcher B finds how the tests run; it reports last.
        worker(
            "RESEARCH-B",
            Rule::text("RESEARCH-B-REPORT: ./test.sh checks greet.txt").delay_ms(300),
        )
        .when_tool_result(true),
        worker(
            "RESEARCH-B",
            Rule::tool_use("Read", json!({"file_path": project.path("test.sh")})),
        )
        .when_tool_result(false),
        // The implementer reads, edits, reports.
        worker("IMPLEMENT", Rule::text("IMPLEMENTER-REPORT: greet.txt:1 changed"))
            .when_tool_result_contains("has been updated"),
        worker(
            "IMPLEMENT",
            Rule::tool_use(
                "Edit",
                json!({"file_path": greet, "old_string": "hello", "new_string": "hello, world"}),
            ),
        )
        .when_tool_result_contains("hello"),
        worker("IMPLEMENT", Rule::tool_use("Read", json!({"file_path": greet})))
            .when_tool_result(false),
        // The verifier runs the tests.
        worker("VERIFY", Rule::text("Ran ./test.sh: TESTS PASSED.\nVERDICT: PASS"))
            .when_tool_result_contains("TESTS PASSED"),
        worker("VERIFY", Rule::tool_use("Bash", json!({"command": "./test.sh"})))
            .when_tool_result(false),
        // The coordinator: research in parallel, synthesis, implementation, verification.
        coordinator(Rule::text("Done: greet.txt now says hello, world; the tests pass."))
            .when_last_user_contains("VERDICT: PASS"),
        coordinator(Rule::tool_use(
            "Agent",
            json!({"description": "verify the change", "subagent_type": "verification",
                   "prompt": "VERIFY: greet.txt line 1 was changed to say 'hello, world'. Run ./test.sh in the repository root and report."}),
        ))
        .when_last_user_contains("IMPLEMENTER-REPORT"),
        coordinator(Rule::tool_use(
            "Agent",
            json!({"description": "change the greeting", "name": "implementer",
                   "prompt": format!("IMPLEMENT: in {greet}, line 1, replace `hello` with `hello, world`. Change nothing else. Report the line as it reads afterwards.")}),
        ))
        .when_last_user_contains("RESEARCH-B-REPORT"),
        coordinator(Rule::text("Waiting for the second researcher."))
            .when_last_user_contains("RESEARCH-A-REPORT"),
        coordinator(Rule::text("Researchers started.")).when_tool_result(true),
        coordinator(
            Rule::tool_use(
                "Agent",
                json!({"description": "find the greeting", "name": "res-a",
                       "prompt": "RESEARCH-A: find where the greeting text is defined; report file and line."}),
            )
            .then_tool_use(
                "Agent",
                json!({"description": "find the tests", "name": "res-b",
                       "prompt": "RESEARCH-B: find how this project's tests are run; report the command."}),
            ),
        )
        .when_tool_result(false),
    ])
}

#[tokio::test]
async fn a_coordinator_researches_synthesises_implements_and_verifies() {
    let project = Project::new(&[("greet.txt", "hello\n"), ("test.sh", TEST_SCRIPT)]);
    std::fs::set_permissions(
        project.repo.join("test.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let scratchpad = fleet_store::FleetHome::at(&project.fleet_home)
        .project_dir(&project.repo)
        .join(SESSION)
        .join("scratchpad");
    let server = server(scenario(&project, &scratchpad.display().to_string())).await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "Make the greeting say hello, world, and check it.",
                "--coordinator",
                "--session-id",
                SESSION,
                "--allowedTools",
                "Edit,Bash(./test.sh)",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);

    // The change is on disk, made by the implementer, and the verifier's run saw it pass.
    assert_eq!(project.read("greet.txt"), "hello, world\n");
    assert!(project.git(&["diff", "--stat"]).contains("greet.txt"));
    // One result per coordinator run (its prompt, then each batch of notifications); the
    // last is the answer.
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    let last = results.last().unwrap();
    assert!(
        last["result"].as_str().unwrap().contains("the tests pass"),
        "{last}"
    );
    for result in &results {
        assert_eq!(result["permission_denials"], json!([]), "{result}");
    }

    // The scratchpad took the researcher's note without any prompt.
    assert_eq!(
        std::fs::read_to_string(scratchpad.join("notes.md")).unwrap(),
        "greeting: greet.txt:1\n"
    );

    // Both researchers were started before either reported: they ran in parallel.
    let events: Vec<(String, String)> = lines
        .iter()
        .filter_map(|l| match l["subtype"].as_str() {
            Some("task_started") => Some((
                "started".to_string(),
                l["description"].as_str().unwrap().to_string(),
            )),
            Some("task_notification") => Some((
                "notified".to_string(),
                l["summary"].as_str().unwrap_or_default().to_string(),
            )),
            _ => None,
        })
        .collect();
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "started", "started", "notified", "notified", "started", "notified", "started",
            "notified"
        ],
        "{events:?}"
    );
    let started: Vec<&str> = events
        .iter()
        .filter(|(k, _)| k == "started")
        .map(|(_, d)| d.as_str())
        .collect();
    assert_eq!(
        started,
        [
            "find the greeting",
            "find the tests",
            "change the greeting",
            "verify the change"
        ]
    );

    // What the coordinator was offered and told.
    let first = server
        .requests()
        .into_iter()
        .find(|r| r.body["system"].to_string().contains(COORDINATOR))
        .unwrap();
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Agent", "SendMessage", "TaskStop"]);
    let system = first.body["system"].to_string();
    for expected in [
        "based on your findings",
        "Synthesis",
        "Verification",
        "Workers you start with the Agent tool have these tools: Bash, Edit, Glob, Grep, Read, Write.",
        "No MCP servers are connected.",
        &format!("Scratchpad: {}", scratchpad.display()),
    ] {
        assert!(system.contains(expected), "missing {expected:?} in {system}");
    }
    // Workers hold the coding tools and none of the coordinator's.
    let worker_request = server
        .requests()
        .into_iter()
        .find(|r| r.body["system"].to_string().contains(WORKER))
        .unwrap();
    let worker_tools: Vec<Value> = worker_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(worker_tools.contains(&json!("Edit")));
    assert!(!worker_tools.contains(&json!("Agent")));
}

#[tokio::test]
async fn fork_and_coordinator_switches_are_checked() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let mut cmd = project.command(&server, &["-p", "hi"]);
    cmd.env("FLEET_FORK_SUBAGENT", "maybe");
    let out = tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet -p hi")
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("FLEET_FORK_SUBAGENT=\"maybe\""),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.request_count(), 0);
}
