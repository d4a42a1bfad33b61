use fleet_protocol::StopReason;
use fleet_testkit::{
    Fault, Protocol, ReplyBlock, Scenario, ScenarioProblem, StatusFault, TestkitError,
};
use serde_json::json;

const FULL: &str = r#"
chunk_size: 16
chunk_delay_ms: 0
model: claude-fake-1
cache: { enabled: true, min_tokens: 0 }
openai: { omit_tool_call_ids: false, arguments_in_one_chunk: false }
rules:
  - name: first-read
    when:
      system_contains: "agent"
      last_user_contains: "read"
      has_tool_result: false
      marker: "[case:abc]"
      call: 2
      protocol: anthropic
    times: 1
    delay_ms: 0
    respond:
      - thinking: "hmm"
        signature: "sig"
      - text: "Reading."
      - tool_use: { name: Read, input: {file_path: /x}, id: toolu_x }
    stop_reason: end_turn
    usage: { output_tokens: 12 }
  - fault: { status: 429, message: "Rate limited", retry_after: 1 }
  - fault: { sse_error: {type: overloaded_error, message: "Overloaded"}, after_events: 3 }
  - fault: { drop_after_events: 2 }
  - respond: [ { tool_use: { name: Bash } } ]
    fault: { malformed_tool_json: true }
"#;

#[test]
fn full_yaml_example_parses() {
    let s = Scenario::from_yaml_str(FULL).expect("parses");
    assert_eq!(s.chunk_size, 16);
    assert_eq!(s.rules.len(), 5);
    let r = &s.rules[0];
    assert_eq!(r.name.as_deref(), Some("first-read"));
    assert_eq!(r.when.call, Some(2));
    assert_eq!(r.when.protocol, Some(Protocol::Anthropic));
    assert_eq!(r.times, Some(1));
    assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(r.usage.output_tokens, Some(12));
    assert_eq!(
        r.respond,
        vec![
            ReplyBlock::thinking_signed("hmm", "sig"),
            ReplyBlock::text("Reading."),
            ReplyBlock::tool_use_with_id("toolu_x", "Read", json!({"file_path": "/x"})),
        ]
    );
    assert_eq!(
        s.rules[1].fault,
        Some(Fault::Status(StatusFault {
            message: Some("Rate limited".into()),
            retry_after: Some(1),
            ..StatusFault::new(429)
        }))
    );
    assert_eq!(
        s.rules[2].fault,
        Some(Fault::sse_error("overloaded_error", "Overloaded", 3))
    );
    assert_eq!(s.rules[3].fault, Some(Fault::DropAfterEvents(2)));
    assert_eq!(
        s.rules[4].respond,
        vec![ReplyBlock::tool_use("Bash", json!({}))]
    );
}

#[test]
fn json_and_files() {
    let s = Scenario::from_json_str(r#"{"rules": [{"respond": [{"text": "hi"}]}]}"#).expect("json");
    assert_eq!(s.rules[0].respond, vec![ReplyBlock::text("hi")]);
    assert_eq!(s.model, "claude-fake-1");
    assert!(s.require_auth);

    let dir = std::env::temp_dir().join(format!("fleet-testkit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let yaml = dir.join("s.yml");
    std::fs::write(&yaml, FULL).expect("write");
    assert_eq!(
        Scenario::from_path(&yaml).expect("yaml file").rules.len(),
        5
    );

    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "rules:\n  - respond:\n      - txt: hi\n").expect("write");
    let err = Scenario::from_path(&bad)
        .expect_err("unknown key")
        .to_string();
    assert!(err.contains("bad.yaml"), "{err}");
    assert!(err.contains("txt"), "{err}");

    let other = dir.join("s.toml");
    std::fs::write(&other, "").expect("write");
    let err = Scenario::from_path(&other)
        .expect_err("extension")
        .to_string();
    assert!(err.contains("s.toml") && err.contains(".yaml"), "{err}");

    let missing = Scenario::from_path(dir.join("missing.json")).expect_err("missing");
    assert!(matches!(missing, TestkitError::ReadScenario { .. }));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn mistakes_are_named() {
    let cases = [
        ("rules: [{when: {cal: 1}}]", "cal"),
        ("rules: [{when: {call: 0}}]", "counts from 1"),
        (
            "rules: [{respond: [{text: a, tool_use: {name: x}}]}]",
            "exactly one",
        ),
        (
            "rules: [{respond: [{tool_use: {name: x, input: [1]}}]}]",
            "must be a map",
        ),
        ("rules: [{fault: {status: 200}}]", "not an HTTP error"),
        ("rules: [{fault: {retry_after: 1}}]", "exactly one"),
        (
            "rules: [{fault: {drop_after_events: 1, message: x}}]",
            "go with `status`",
        ),
        ("rules: [{name: r, times: 0}]", "rule r"),
    ];
    for (yaml, expected) in cases {
        let err = Scenario::from_yaml_str(yaml).expect_err(yaml).to_string();
        assert!(err.contains(expected), "{yaml}: {err}");
        assert!(err.starts_with("scenario <yaml string>"), "{err}");
    }
}

#[test]
fn a_rule_the_checks_refuse_is_named_and_keeps_its_problem() {
    let err = Scenario::from_yaml_str("rules: [{name: r, times: 0}]").expect_err("times: 0");
    let TestkitError::InvalidRule { rule, problem, .. } = &err else {
        panic!("expected an invalid rule, got {err:?}");
    };
    assert_eq!(rule, "r");
    assert_eq!(**problem, ScenarioProblem::TimesZero);
    let err = Scenario::from_yaml_str("rules: [{when: {call: 0}}]").expect_err("call 0");
    assert!(
        matches!(
            &err,
            TestkitError::InvalidRule { problem, .. } if **problem == ScenarioProblem::CallZero
        ),
        "{err:?}"
    );
}

#[test]
fn local_server_options_read_from_yaml_and_reject_unknown_values() {
    let s = Scenario::from_yaml_str(
        "openai:\n  context_window: 4096\n  overflow: truncate\n  omit_usage: true\n  served_model: smol.gguf\nrules:\n  - fault: { empty_stream: true }\n",
    )
    .expect("parses");
    assert_eq!(s.openai.context_window, Some(4096));
    assert_eq!(s.openai.overflow, fleet_testkit::Overflow::Truncate);
    assert!(s.openai.omit_usage);
    assert_eq!(s.openai.served_model.as_deref(), Some("smol.gguf"));
    assert_eq!(s.rules[0].fault, Some(Fault::EmptyStream));
    assert_eq!(
        Scenario::new().openai.overflow,
        fleet_testkit::Overflow::Reject
    );
    for bad in [
        "openai: { overflow: explode }\n",
        "openai: { window: 10 }\n",
        "openai: { context_window: 0 }\n",
        "rules:\n  - fault: { empty_stream: true, status: 500 }\n",
    ] {
        assert!(Scenario::from_yaml_str(bad).is_err(), "{bad}");
    }
}
