//! The watchdog: a wait past `FLEET_WATCHDOG_MS` is said while it lasts — a `system`/`waiting`
//! line in stream-json, a line on stderr in text mode — naming what the agent waits for.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};

/// The reply takes well past the watchdog's bound (but far inside every deadline).
fn slow_model() -> Scenario {
    Scenario::with_rules([Rule::text("late but fine").delay_ms(1_500)])
}

#[tokio::test]
async fn a_slow_reply_is_reported_in_stream_json_while_it_is_awaited() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(slow_model()).await;
    let out = project
        .run_with_env(
            &server,
            &["-p", "hi", "--output-format", "stream-json", "--verbose"],
            &[("FLEET_WATCHDOG_MS", "200")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let waiting: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "waiting")
        .collect();
    assert!(!waiting.is_empty(), "no waiting line: {lines:?}");
    assert_eq!(waiting[0]["kind"], "model");
    assert!(
        waiting[0]["waiting_for"]
            .as_str()
            .unwrap()
            .contains("the reply of the model"),
        "{}",
        waiting[0]
    );
    assert!(waiting[0]["waited_ms"].as_u64().unwrap() >= 200);
    // Reported at the bound and at each doubling, not at every tick.
    assert!(waiting.len() <= 4, "{waiting:?}");
    assert_eq!(result_of(&lines)["result"], "late but fine");
}

#[tokio::test]
async fn a_slow_reply_is_said_on_stderr_in_text_mode_and_stdout_stays_the_answer() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(slow_model()).await;
    let out = project
        .run_with_env(&server, &["-p", "hi"], &[("FLEET_WATCHDOG_MS", "200")])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "late but fine\n");
    assert!(
        stderr(&out).contains("still waiting after") && stderr(&out).contains("model"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn without_a_long_wait_nothing_is_reported() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("quick")])).await;
    let out = project
        .run(
            &server,
            &["-p", "hi", "--output-format", "stream-json", "--verbose"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!json_lines(&out).iter().any(|l| l["subtype"] == "waiting"));
}
