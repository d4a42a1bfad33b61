//! `fleet dev ask` picks the provider from flags and environment and reports errors clearly.

use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::process::{Command, Output};

const PROVIDER_VARS: &[&str] = &[
    "FLEET_PROVIDER",
    "FLEET_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
];

async fn fleet(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.arg("dev")
        .arg("ask")
        .args(args)
        .env("FLEET_MAX_RETRIES", "0");
    for var in PROVIDER_VARS {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || cmd.output().expect("fleet runs"))
        .await
        .expect("joins")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn anthropic_from_credentials_resolves_the_default_alias() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("pong")))
        .await
        .expect("server");
    let out = fleet(
        &["ping"],
        &[
            ("ANTHROPIC_API_KEY", "sk-secret".into()),
            ("ANTHROPIC_BASE_URL", server.base_url()),
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "pong");
    let req = server.last_request().expect("one request");
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.body["model"], "claude-sonnet-4-5");
    assert_eq!(req.header("x-api-key"), Some("<redacted>"));
}

#[tokio::test]
async fn fleet_provider_selects_an_openai_compatible_server() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("pong")))
        .await
        .expect("server");
    let out = fleet(
        &["--model", "qwen2.5-coder:7b", "ping"],
        &[
            ("FLEET_PROVIDER", "openai".into()),
            ("ANTHROPIC_API_KEY", "ignored".into()),
            ("OPENAI_BASE_URL", format!("{}/v1", server.base_url())),
            ("OPENAI_API_KEY", "sk-local".into()),
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "pong");
    let req = server.last_request().expect("one request");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.body["model"], "qwen2.5-coder:7b");
}

#[tokio::test]
async fn flag_overrides_the_environment() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("pong")))
        .await
        .expect("server");
    let out = fleet(
        &["--provider", "anthropic", "--model", "haiku", "ping"],
        &[
            ("FLEET_PROVIDER", "openai".into()),
            ("ANTHROPIC_AUTH_TOKEN", "tok".into()),
            ("ANTHROPIC_BASE_URL", server.base_url()),
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = server.last_request().expect("one request");
    assert_eq!(req.body["model"], "claude-haiku-4-5");
    assert_eq!(req.header("authorization"), Some("<redacted>"));
}

#[tokio::test]
async fn missing_configuration_says_how_to_fix_it() {
    let out = fleet(&["ping"], &[]).await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("ANTHROPIC_API_KEY")
            && err.contains("OPENAI_BASE_URL")
            && err.contains("FLEET_PROVIDER"),
        "{err}"
    );
}

#[tokio::test]
async fn api_errors_exit_non_zero_with_the_apis_message() {
    let scenario = Scenario::new().rule(
        Rule::text("x")
            .fault_status(401)
            .fault_message("invalid x-api-key"),
    );
    let server = FakeModelServer::start(scenario).await.expect("server");
    let out = fleet(
        &["ping"],
        &[
            ("ANTHROPIC_API_KEY", "bad".into()),
            ("ANTHROPIC_BASE_URL", server.base_url()),
        ],
    )
    .await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("401")
            && err.contains("invalid x-api-key")
            && err.contains("authentication_error"),
        "{err}"
    );
}
