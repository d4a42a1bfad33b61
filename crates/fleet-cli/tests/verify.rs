//! `fleet verify` end to end: the verification agent runs the project's test in a throwaway
//! copy of the checkout as it is now (uncommitted work included), and its verdict becomes the
//! exit code. The fake model only reads the test's output; the verdict follows from it.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const TEST_SCRIPT: &str = "#!/bin/sh\n\
grep -q 'hello, world' greet.txt && echo TESTS PASSED || { echo TESTS FAILED; exit 1; }\n";

fn project(greeting: &str) -> Project {
    let project = Project::new(&[("greet.txt", greeting), ("test.sh", TEST_SCRIPT)]);
    let script = project.repo.join("test.sh");
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    project.git(&["add", "."]);
    project.git(&["commit", "-q", "-m", "executable test"]);
    project
}

/// The verifier runs the test, leaves a probe file, and reports what the test said.
fn verifier() -> Scenario {
    Scenario::with_rules([
        Rule::text("Ran ./test.sh: it passed.\nVERDICT: PASS")
            .when_tool_result_contains("TESTS PASSED"),
        Rule::text("Ran ./test.sh: it failed.\nVERDICT: FAIL")
            .when_tool_result_contains("TESTS FAILED"),
        Rule::tool_use("Bash", json!({"command": "./test.sh"})).when_tool_result_contains("probe"),
        Rule::tool_use(
            "Bash",
            json!({"command": "printf 'probe\\n' > probe.txt && cat probe.txt"}),
        )
        .when_tool_result(false),
    ])
}

async fn verify(
    project: &Project,
    scenario: Scenario,
    format: &str,
) -> (std::process::Output, Value) {
    verify_with(project, scenario, format, &[]).await
}

async fn verify_with(
    project: &Project,
    scenario: Scenario,
    format: &str,
    env: &[(&str, &str)],
) -> (std::process::Output, Value) {
    let server = server(scenario).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "verify",
                "greet.txt says hello, world",
                "--output-format",
                format,
            ],
            env,
        )
        .await;
    let json = if format == "json" {
        serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    (out, json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passing_project_exits_0_with_its_checks() {
    let project = project("hello, world\n");
    let (out, report) = verify(&project, verifier(), "json").await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(report["verdict"], "PASS");
    assert!(report["report"].as_str().unwrap().contains("VERDICT: PASS"));
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.last().unwrap()["command"], "./test.sh");
    assert_eq!(checks.last().unwrap()["exit_code"], 0);
    assert!(report["total_cost_usd"].as_f64().unwrap() > 0.0);
    // Its probe file was written in the throwaway copy, never in the checkout.
    assert!(!project.repo.join("probe.txt").exists());
    assert_eq!(project.git(&["status", "--porcelain"]), "");
    assert!(
        project.git(&["worktree", "list"]).lines().count() == 1,
        "the copy is gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_project_exits_1() {
    let project = project("hello\n");
    let (out, report) = verify(&project, verifier(), "json").await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(
        report["checks"].as_array().unwrap().last().unwrap()["exit_code"],
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncommitted_changes_are_what_is_verified_and_stay_untouched() {
    let project = project("hello, world\n");
    // Committed, the test passes; the uncommitted edit breaks it.
    std::fs::write(project.repo.join("greet.txt"), "goodbye\n").unwrap();
    std::fs::write(project.repo.join("untracked.txt"), "mine\n").unwrap();
    let status_before = project.git(&["status", "--porcelain"]);
    let index_before = std::fs::read(project.repo.join(".git/index")).unwrap();
    let (out, _) = verify(&project, verifier(), "text").await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("VERDICT: FAIL"), "{}", stdout(&out));
    assert_eq!(project.read("greet.txt"), "goodbye\n");
    assert_eq!(project.read("untracked.txt"), "mine\n");
    assert!(!project.repo.join("probe.txt").exists());
    assert_eq!(project.git(&["status", "--porcelain"]), status_before);
    assert_eq!(
        std::fs::read(project.repo.join(".git/index")).unwrap(),
        index_before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_verdict_exits_3_and_partial_exits_2() {
    let project = project("hello, world\n");
    let (out, report) = verify(
        &project,
        Scenario::with_rules([Rule::text("I could not decide.")]),
        "json",
    )
    .await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(report["verdict"], "UNKNOWN");
    let (out, _) = verify(
        &project,
        Scenario::with_rules([Rule::text("Half of it works.\nVERDICT: PARTIAL")]),
        "text",
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_keeps_the_verifier_out_of_the_checkout() {
    let project = project("hello, world\n");
    let target = project.path("greet.txt");
    // The command classifier is set aside, so only the sandbox stands in the way.
    let (out, _) = verify_with(
        &project,
        Scenario::with_rules([
            Rule::text("tried.\nVERDICT: PARTIAL").when_tool_result(true),
            Rule::tool_use(
                "Bash",
                json!({"command": format!("printf 'overwritten\\n' > {target}")}),
            )
            .when_tool_result(false),
        ]),
        "text",
        &[("FLEET_TEST_SANDBOX_ONLY", "1")],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(project.read("greet.txt"), "hello, world\n");
    let transcripts = project.transcripts();
    let verifier = transcripts
        .iter()
        .filter(|p| p.is_dir())
        .flat_map(|dir| {
            std::fs::read_dir(dir.join("subagents"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .find(|text| text.contains("overwritten"))
        .expect("the verifier's transcript");
    assert!(verifier.contains("denied by the sandbox"), "{verifier}");
}
