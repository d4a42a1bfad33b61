//! The OpenAI-compatible provider's settings reach the server: `openai.toolChoice` in a
//! settings file, below `FLEET_OPENAI_TOOL_CHOICE`, and a bad value names file and key.

use crate::common;

use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::path::Path;
use std::process::{Command, Output};

/// A project whose `.fleet/settings.json` holds `json`.
fn project(json: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".git")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join(".fleet")).expect("mkdir");
    std::fs::write(dir.path().join(".fleet/settings.json"), json).expect("write");
    dir
}

/// `fleet -p ping` in `dir` against `server` as an OpenAI-compatible server.
async fn fleet(dir: &Path, server: &FakeModelServer, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["-p", "ping"])
        .current_dir(dir)
        .env("FLEET_HOME", dir.join("home"))
        .env("FLEET_MAX_RETRIES", "0")
        .env("FLEET_NO_SESSION_PERSISTENCE", "1");
    for var in common::SCRUBBED {
        cmd.env_remove(var);
    }
    cmd.env_remove("FLEET_OPENAI_TOOL_CHOICE")
        .env("OPENAI_BASE_URL", server.base_url());
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
async fn the_tool_choice_setting_reaches_the_server_below_its_variable() {
    let server =
        FakeModelServer::start(Scenario::new().require_auth(false).rule(Rule::text("pong")))
            .await
            .expect("server");
    let dir = project(
        r#"{"provider": "openai", "model": "llama3.1:8b", "openai": {"toolChoice": "required"}}"#,
    );
    let out = fleet(dir.path(), &server, &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = server.last_request().expect("request");
    assert!(req.body.get("tools").is_some(), "{}", req.body);
    assert_eq!(req.body["tool_choice"], "required", "{}", req.body);

    let out = fleet(dir.path(), &server, &[("FLEET_OPENAI_TOOL_CHOICE", "omit")]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let req = server.last_request().expect("request");
    assert!(req.body.get("tool_choice").is_none(), "{}", req.body);
}

#[tokio::test]
async fn a_bad_tool_choice_setting_names_the_file_and_the_key() {
    let server = FakeModelServer::start(Scenario::demo())
        .await
        .expect("server");
    let dir =
        project(r#"{"provider": "openai", "model": "m", "openai": {"toolChoice": "sometimes"}}"#);
    let out = fleet(dir.path(), &server, &[]).await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(".fleet/settings.json")
            && err.contains("`openai.toolChoice`")
            && err.contains("\"sometimes\""),
        "{err}"
    );
    assert_eq!(server.request_count(), 0);
}
