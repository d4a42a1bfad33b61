//! A session started from the library alone, against the fake model server: built from
//! options, started as a queue pair, fed prompts and a model change as `Op`s, ended by
//! dropping the last `OpSender`.
#![allow(clippy::unwrap_used)]

use fleet_model::{AnthropicClient, AnthropicConfig, Auth, Catalog, HttpOptions, RetryPolicy};
use fleet_protocol::{EventKind, Message, ResultSubtype};
use fleet_runtime::controls::{ControlOptions, SessionControls};
use fleet_session::launch::{self, Ready, Running, Steer};
use fleet_session::mcp::McpTools;
use fleet_session::report::Quiet;
use fleet_session::{build, Choice, Conversation, Host, SessionFile, SessionOptions};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::sync::Arc;
use std::time::Duration;

fn client(server: &FakeModelServer) -> Arc<AnthropicClient> {
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("sk-test".into()));
    config.http = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            ..RetryPolicy::default()
        },
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        first_token_timeout: Some(Duration::from_secs(10)),
    };
    Arc::new(AnthropicClient::new(config).unwrap())
}

#[tokio::test]
async fn prompts_and_a_model_change_go_in_as_ops_and_the_results_come_out_in_order() {
    let server = FakeModelServer::start(Scenario::queue([
        Rule::text("first answer"),
        Rule::text("second answer"),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // Nothing of the person running the tests is read: no home folder, no fleet home.
    std::env::set_var("FLEET_HOME", home.path());
    std::env::set_var("HOME", home.path());
    let cwd = project.path().canonicalize().unwrap();
    let options = SessionOptions {
        user_instructions: false,
        ..SessionOptions::new(cwd.clone())
    };
    let mut file = SessionFile::open(&Conversation::default(), &cwd, false, &Quiet).unwrap();
    let catalog = Catalog::from_env();
    let choice = Choice {
        client: client(&server),
        model: catalog.resolve_id("sonnet"),
        catalog: catalog.clone(),
    };
    let controls = SessionControls::new(ControlOptions::default());
    let built = build::agent(
        &options,
        choice,
        file.id(),
        Host {
            controls: Some(controls.clone()),
            ..Host::default()
        },
        &McpTools::default(),
        &Quiet,
    )
    .unwrap();
    let Running {
        ops, mut handle, ..
    } = launch::run(
        Ready {
            agent: built.agent,
            spawner: built.spawner,
            sink: built.sink,
            events: built.events,
            attended: false,
        },
        &mut file,
        Steer {
            controls: Some(controls),
            answers: None,
        },
    )
    .await
    .unwrap();

    let haiku = ops.set_model(Some("haiku".into())).await.unwrap().unwrap();
    assert_eq!(haiku, catalog.resolve_id("haiku"));
    ops.prompt(Message::user_text("one")).await.unwrap();
    ops.prompt(Message::user_text("two")).await.unwrap();
    // The last sender gone, the session ends once both prompts are answered.
    drop(ops);
    let mut results = Vec::new();
    let events = async {
        while let Some(event) = handle.recv().await {
            if let (EventKind::Finished(result), None) =
                (&event.kind, &event.agent.parent_tool_use_id)
            {
                results.push((result.subtype, result.result.clone()));
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), events)
        .await
        .expect("the session ends after its two prompts");
    assert_eq!(
        results,
        [
            (ResultSubtype::Success, "first answer".to_string()),
            (ResultSubtype::Success, "second answer".to_string()),
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.body["model"], serde_json::json!(haiku));
    }
    assert!(handle.finish().await.is_ok());
}
