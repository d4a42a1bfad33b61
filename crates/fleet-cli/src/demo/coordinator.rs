//! `fleet demo --coordinator`: the scripted model plays a coordinator and its workers — two
//! researchers in parallel, the coordinator's own synthesis, an implementer, and a verifier
//! that runs the repository's test script — through the real coordinator mode.

use super::CHILD;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::path::Path;

pub const PROMPT: &str =
    "greeting.txt should greet fleet instead of the world. Get it changed and checked.";

/// The repository's test: passes once the greeting is fixed.
pub const TEST_SCRIPT: &str = "#!/bin/sh\n\
if grep -q 'hello fleet' greeting.txt; then echo 'test.sh: 1 passed'; else echo 'test.sh: greeting.txt does not greet fleet'; exit 1; fi\n";

/// Recognises the coordinator's requests (its prompt) apart from its workers'.
const COORDINATOR: &str = "coordinator of a team";

fn worker(marker: &str, rule: Rule) -> Rule {
    rule.when_system_contains(CHILD).when_marker(marker)
}

fn coordinator(rule: Rule) -> Rule {
    rule.when_system_contains(COORDINATOR)
}

pub fn scenario(repo: &Path) -> Scenario {
    let greeting = repo.join("greeting.txt").display().to_string();
    let test = repo.join("test.sh").display().to_string();
    Scenario::with_rules([
        // Researcher A: where the greeting is.
        worker("[where]", Rule::text("greeting.txt:1 reads `hello world`; no other file has the greeting."))
            .when_tool_result(true),
        worker("[where]", Rule::tool_use("Grep", json!({"pattern": "world", "output_mode": "content"})))
            .when_tool_result(false),
        // Researcher B: how it is tested (it reports second).
        worker("[tests]", Rule::text("./test.sh checks that greeting.txt contains `hello fleet`; it fails today.").delay_ms(300))
            .when_tool_result(true),
        worker("[tests]", Rule::tool_use("Read", json!({"file_path": test})))
            .when_tool_result(false),
        // The implementer.
        worker("[change]", Rule::text("greeting.txt:1 now reads `hello fleet`."))
            .when_tool_result_contains("has been updated"),
        worker("[change]", Rule::tool_use("Edit", json!({"file_path": greeting, "old_string": "hello world", "new_string": "hello fleet"})))
            .when_tool_result_contains("hello world"),
        worker("[change]", Rule::tool_use("Read", json!({"file_path": greeting})))
            .when_tool_result(false),
        // The verifier.
        worker("[check]", Rule::text("./test.sh: 1 passed.\nVERDICT: PASS"))
            .when_tool_result_contains("1 passed"),
        worker("[check]", Rule::tool_use("Bash", json!({"command": "./test.sh", "description": "Run the tests"})))
            .when_tool_result(false),
        // The coordinator.
        coordinator(Rule::text("Done: greeting.txt:1 now says `hello fleet`, and a separate verifier ran ./test.sh: it passes."))
            .when_last_user_contains("VERDICT: PASS"),
        coordinator(
            Rule::text("The change is in. A fresh worker checks it.").then_tool_use(
                "Agent",
                json!({"description": "Verify the greeting", "subagent_type": "verification",
                       "prompt": "[check] greeting.txt line 1 was changed from `hello world` to `hello fleet`. Run ./test.sh from the repository root and report its output and your verdict."}),
            ),
        )
        .when_last_user_contains("now reads"),
        coordinator(
            Rule::text("Both reports are in: the greeting is greeting.txt:1, and ./test.sh expects `hello fleet`. Handing over the exact change.")
                .then_tool_use(
                    "Agent",
                    json!({"description": "Change the greeting", "name": "implementer",
                           "prompt": format!("[change] In {greeting}, line 1, replace `hello world` with `hello fleet`. Change nothing else. Report the line as it reads afterwards.")}),
                ),
        )
        .when_last_user_contains("./test.sh checks"),
        coordinator(Rule::text("One report in; waiting for the other researcher."))
            .when_last_user_contains("greeting.txt:1 reads"),
        coordinator(Rule::text("Workers are on it.")).when_tool_result(true),
        coordinator(
            Rule::text("Two questions first, in parallel: where the greeting lives, and how it is tested.")
                .then_tool_use(
                    "Agent",
                    json!({"description": "Find the greeting", "name": "where",
                           "prompt": "[where] Find every file that holds the greeting `hello world`; report file and line."}),
                )
                .then_tool_use(
                    "Agent",
                    json!({"description": "Find the tests", "name": "tests",
                           "prompt": "[tests] Find how this repository's tests are run and what they check; report the command."}),
                ),
        )
        .when_tool_result(false),
    ])
    .chunk_size(24)
    .chunk_delay_ms(5)
}
