//! `fleet dev ask` picks the provider from flags and environment and reports errors clearly.

use crate::common;

use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `fleet dev ask` in a fresh project folder with an empty fleet home.
async fn fleet(args: &[&str], env: &[(&str, String)]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    fleet_in(dir.path(), args, env).await
}

/// Runs `fleet dev ask` in `dir`, with `dir/home` as the fleet home.
async fn fleet_in(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.arg("dev")
        .arg("ask")
        .args(args)
        .current_dir(dir)
        .env("FLEET_HOME", dir.join("home"))
        .env("FLEET_MAX_RETRIES", "0");
    for var in common::SCRUBBED {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
    })
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
        // The type a 401 implies (authentication_error) is not repeated after "Unauthorized".
        err.contains("401 Unauthorized") && err.contains("invalid x-api-key"),
        "{err}"
    );
}

/// A project whose `.fleet/settings.json` chooses the provider and model.
fn project_with_settings(json: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".git")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join(".fleet")).expect("mkdir");
    std::fs::write(dir.path().join(".fleet/settings.json"), json).expect("write");
    std::fs::create_dir_all(dir.path().join("src/deep")).expect("mkdir");
    dir
}

#[tokio::test]
async fn project_settings_choose_provider_and_model_below_env_and_flags() {
    let server =
        FakeModelServer::start(Scenario::new().require_auth(false).rule(Rule::text("pong")))
            .await
            .expect("server");
    let project = project_with_settings(
        r#"{"provider": "openai", "model": "llama3.1:8b", "permissions": {}}"#,
    );
    let env = [
        ("ANTHROPIC_API_KEY", "k".to_owned()),
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("OPENAI_BASE_URL", server.base_url()),
    ];
    // From a subfolder, the project's settings beat the Anthropic credentials.
    let out = fleet_in(&project.path().join("src/deep"), &["ping"], &env).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = server.last_request().expect("request");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.body["model"], "llama3.1:8b");

    // FLEET_MODEL beats the settings; --provider beats everything.
    let mut env2 = env.to_vec();
    env2.push(("FLEET_MODEL", "haiku".to_owned()));
    let out = fleet_in(project.path(), &["--provider", "anthropic", "ping"], &env2).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = server.last_request().expect("request");
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.body["model"], "claude-haiku-4-5");
}

#[tokio::test]
async fn broken_settings_name_the_file_and_line() {
    let project = project_with_settings("{\n  \"provider\": \"openai\",\n  oops\n}");
    let out = fleet_in(project.path(), &["ping"], &[]).await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains(".fleet/settings.json:3:"), "{err}");

    let project = project_with_settings(r#"{"provider": "gemini"}"#);
    let out = fleet_in(project.path(), &["ping"], &[]).await;
    let err = text(&out.stderr);
    assert!(
        err.contains("settings.json") && err.contains("\"gemini\""),
        "{err}"
    );
}
