//! `fleet demo`: a real agent session with no API key.
//!
//! It makes a temporary git repository, starts the fake model server on loopback with a
//! scripted conversation, and runs the same headless path as `fleet -p` against it: real HTTP
//! and SSE (with one scripted 529 that is retried), the real agent loop, the real Read, Edit
//! and Bash tools on real files, and the permission rules deciding each call. With
//! `--coordinator`, the same in coordinator mode ([`coordinator`]).

mod coordinator;

use crate::args::PrintArgs;
use crate::headless::{self, Run};
use crate::model_choice::{parse_provider, Choice};
use crate::settings::Settings;
use anyhow::{bail, Context};
use fleet_model::{
    AnthropicClient, AnthropicConfig, Auth, Catalog, HttpOptions, ModelClient, OpenAiClient,
    OpenAiConfig, Provider, RetryPolicy,
};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Which wire protocol the fake server speaks.
    #[arg(long, default_value = "anthropic", value_parser = parse_provider)]
    provider: Provider,
    /// `text` (a readable trace), `json` or `stream-json` — what `fleet -p` prints.
    #[arg(long, default_value = "text", value_parser = ["text", "json", "stream-json"])]
    output_format: String,
    /// Keep the temporary repository and print where it is.
    #[arg(long)]
    keep: bool,
    /// Coordinator mode: researchers, an implementer and a verifier, directed by the main agent.
    #[arg(long)]
    coordinator: bool,
}

const MODEL: &str = "claude-sonnet-4-5";
const PROMPT: &str =
    "greeting.txt should greet fleet instead of the world. Fix it and show me the change.";

pub async fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let dir = tempfile::Builder::new()
        .prefix("fleet-demo-")
        .tempdir()
        .context("creating a temporary folder")?;
    let repo = dir
        .path()
        .canonicalize()
        .context("resolving the temporary folder")?;
    make_repo(&repo, args.coordinator)?;
    let (scenario, prompt) = if args.coordinator {
        (coordinator::scenario(&repo), coordinator::PROMPT)
    } else {
        (scenario(&repo), PROMPT)
    };
    let server = FakeModelServer::start(scenario)
        .await
        .context("starting the fake model server")?;
    let client = client(args.provider, server.base_url())?;
    let (mode, allowed) = if args.coordinator {
        (None, "Edit Bash(./test.sh)")
    } else {
        (
            Some(fleet_tools::permissions::PermissionMode::AcceptEdits),
            "Bash(git diff *) Bash(cat *)",
        )
    };
    let print = PrintArgs {
        print: true,
        prompt: Some(prompt.into()),
        output_format: args.output_format.clone(),
        input_format: "text".into(),
        // The text trace narrates the run; json stays one result object.
        verbose: args.output_format == "text",
        permission_mode: mode,
        allowed_tools: vec![allowed.into()],
        coordinator: args.coordinator,
        ..PrintArgs::default()
    };
    if args.output_format == "text" {
        println!(
            "fleet demo: a scripted model on {} drives a real session in {}",
            server.base_url(),
            repo.display()
        );
        if args.coordinator {
            println!("coordinator mode, allowed: Edit, Bash(./test.sh)");
            println!("the coordinator starts two researchers at once, writes the change itself, has a worker make it and a fresh one verify it\n");
        } else {
            println!("permission mode acceptEdits, allowed: Bash(git diff *), Bash(cat *)");
            println!(
                "the main agent starts a background Explore agent and answers after its report\n"
            );
        }
        println!("> {prompt}\n");
    }
    let code = headless::execute(Run {
        args: print,
        cwd: repo.clone(),
        settings: Settings::default(),
        choice: Choice {
            client,
            catalog: Catalog::builtin(),
            model: MODEL.into(),
        },
        out: Box::new(std::io::stdout()),
        persist: false,
    })
    .await?;
    let content =
        std::fs::read_to_string(repo.join("greeting.txt")).context("reading the result")?;
    if args.output_format == "text" {
        println!("\ngreeting.txt on disk now: {}", content.trim_end());
        println!(
            "{} requests reached the fake model server",
            server.request_count()
        );
    }
    if args.keep {
        let kept = dir.keep();
        eprintln!("kept the repository at {}", kept.display());
    }
    Ok(code)
}

fn make_repo(repo: &Path, with_test: bool) -> anyhow::Result<()> {
    std::fs::write(repo.join("greeting.txt"), "hello world\n")?;
    std::fs::write(
        repo.join("README.md"),
        "# demo\nA tiny repository for fleet's demo.\n",
    )?;
    if with_test {
        use std::os::unix::fs::PermissionsExt;
        let script = repo.join("test.sh");
        std::fs::write(&script, coordinator::TEST_SCRIPT)?;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=fleet demo",
            "-c",
            "user.email=demo@fleet.invalid",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .context("running git (is it installed?)")?;
        if !status.success() {
            bail!("git {} failed in {}", args.join(" "), repo.display());
        }
    }
    Ok(())
}

/// Every subagent's system prompt says this; the main agent's does not.
const CHILD: &str = "running as a subagent";

/// The scripted model: one overload answered with a retry, then read, edit, a background
/// Explore agent checking the rest of the repository while the change is shown, and an answer
/// once the agent's notification arrives.
fn scenario(repo: &Path) -> Scenario {
    let file = repo.join("greeting.txt").display().to_string();
    Scenario::queue([
        // The Explore agent: one search, then its report (after the main agent's turn).
        Rule::tool_use("Grep", json!({ "pattern": "world", "output_mode": "files_with_matches" }))
            .when_system_contains(CHILD)
            .when_tool_result(false)
            .delay_ms(200),
        Rule::text("No other file mentions \"world\": only greeting.txt had it.")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        Rule::text("unused")
            .fault_status(529)
            .fault_message("Overloaded")
            .retry_after_ms(200),
        Rule::new()
            .then_thinking("I should look at the file before changing it.")
            .then_text("Let me read greeting.txt first.")
            .then_tool_use("Read", json!({ "file_path": file })),
        Rule::text("It says hello to the world; I'll change that.")
            .then_tool_use(
                "Edit",
                json!({ "file_path": file, "old_string": "world", "new_string": "fleet" }),
            )
            .when_tool_result_contains("hello world"),
        Rule::text("I'll have an Explore agent check the rest of the repository meanwhile.")
            .then_tool_use(
                "Agent",
                json!({
                    "description": "Find other greetings",
                    "prompt": "List every file that still says \"world\".",
                    "subagent_type": "Explore",
                    "run_in_background": true
                }),
            )
            .then_tool_use(
                "Bash",
                json!({ "command": "git diff --stat && cat greeting.txt", "description": "Show the change" }),
            ),
        Rule::text("greeting.txt now says \"hello fleet\"; waiting for the Explore agent.")
            .when_tool_result_contains("hello fleet"),
        Rule::text("Done: greeting.txt now says \"hello fleet\" — one line changed, as git diff shows — and the Explore agent found no other file to change.")
            .when_last_user_contains("<task-notification>"),
    ])
    .chunk_size(24)
    .chunk_delay_ms(5)
}

fn client(provider: Provider, base_url: String) -> anyhow::Result<Arc<dyn ModelClient>> {
    let http = HttpOptions {
        retry: RetryPolicy {
            base_delay: Duration::from_millis(100),
            ..RetryPolicy::default()
        },
        ..HttpOptions::default()
    };
    Ok(match provider {
        Provider::Anthropic => {
            let mut config = AnthropicConfig::new(base_url, Auth::ApiKey("demo-key".into()));
            config.http = http;
            Arc::new(AnthropicClient::new(config)?)
        }
        Provider::OpenAi => {
            let mut config = OpenAiConfig::new(base_url, Some("demo-key".into()));
            config.http = http;
            Arc::new(OpenAiClient::new(config)?)
        }
    })
}
