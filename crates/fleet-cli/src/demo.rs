//! `fleet demo`: a short, real exchange with no API key.
//!
//! It starts the fake model server on loopback and talks to it through the same client a real
//! session uses — real HTTP, real SSE split into small chunks, a real retry after a scripted
//! 529, a tool call whose input arrives in fragments and a real file read to answer it, and the
//! simulated prompt cache serving the second request's prefix. When the agent loop lands, this
//! becomes a whole agent session.

use anyhow::Context;
use fleet_model::{
    AnthropicClient, AnthropicConfig, Auth, Catalog, HttpOptions, ModelClient, ModelEvent,
    ModelRequest, OpenAiClient, OpenAiConfig, Provider,
};
use fleet_protocol::{ContentBlock, Message, MessagesRequest, Role, SystemPrompt, ToolDefinition};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use futures::StreamExt;
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Which wire protocol to demonstrate.
    #[arg(long, default_value = "anthropic", value_parser = parse_provider)]
    provider: Provider,
}

fn parse_provider(s: &str) -> Result<Provider, String> {
    s.parse()
        .map_err(|e: fleet_model::ModelError| e.to_string())
}

const MODEL: &str = "claude-sonnet-4-5";

pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("fleet-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("notes.txt");
    std::fs::write(
        &file,
        "fleet runs agents that delegate.\nEach one reports back.\n",
    )
    .with_context(|| format!("writing {}", file.display()))?;
    let result = converse(&file, args.provider).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn scenario(file: &Path) -> Scenario {
    Scenario::queue([
        Rule::text("unused")
            .fault_status(529)
            .fault_message("Overloaded")
            .retry_after_ms(300),
        Rule::new()
            .then_thinking("The user wants a summary; I should read the file first.")
            .then_text("I'll read the notes first.")
            .then_tool_use("Read", json!({ "file_path": file.display().to_string() })),
        Rule::text(
            "The notes say that fleet runs agents that delegate, and that each one reports back.",
        )
        .when_tool_result_contains("delegate"),
    ])
    .chunk_size(9)
    .chunk_delay_ms(15)
}

fn client(provider: Provider, base_url: String) -> anyhow::Result<Box<dyn ModelClient>> {
    let http = HttpOptions::default();
    Ok(match provider {
        Provider::Anthropic => {
            let mut config = AnthropicConfig::new(base_url, Auth::ApiKey("demo-key".into()));
            config.http = http;
            Box::new(AnthropicClient::new(config)?)
        }
        Provider::OpenAi => {
            let mut config = OpenAiConfig::new(base_url, Some("demo-key".into()));
            config.http = http;
            Box::new(OpenAiClient::new(config)?)
        }
    })
}

async fn converse(file: &Path, provider: Provider) -> anyhow::Result<()> {
    let server = FakeModelServer::start(scenario(file)).await?;
    let client = client(provider, server.base_url())?;
    let catalog = Catalog::builtin();
    println!(
        "fleet demo — {} protocol, fake model server at {}\n",
        provider.as_str(),
        server.base_url()
    );

    let prompt = format!("Summarise {} in one sentence.", file.display());
    println!("> {prompt}\n");
    let mut messages = vec![Message::user_text(prompt)];
    let mut total_cost = 0.0;
    let dim = std::io::stdout().is_terminal();
    for turn in 1.. {
        let mut body = MessagesRequest::new(MODEL, 1024, messages.clone());
        body.system = Some(SystemPrompt::Text(
            "You are fleet's demo agent. Be brief.".into(),
        ));
        body.tools = vec![read_tool()];
        let mut stream = client.stream(ModelRequest::from(body));
        let mut printer = BlockPrinter { open: None, dim };
        let mut reply = None;
        while let Some(event) = stream.next().await {
            match event? {
                ModelEvent::Retry {
                    attempt,
                    max_attempts,
                    delay,
                    reason,
                } => {
                    println!("  [retry {attempt}/{max_attempts} in {delay:?}: {reason}]");
                }
                ModelEvent::ThinkingDelta { index, thinking } => {
                    printer.delta(index, Open::Thinking, &thinking)
                }
                ModelEvent::TextDelta { index, text } => printer.delta(index, Open::Text, &text),
                ModelEvent::ToolUseStart { index, name, .. } => {
                    printer.delta(index, Open::Tool(name), "")
                }
                ModelEvent::ToolInputDelta {
                    index,
                    partial_json,
                } => printer.delta(index, Open::Tool(String::new()), &partial_json),
                ModelEvent::Completed(done) => reply = Some(done),
                _ => {}
            }
        }
        printer.close();
        let done = reply.context("the stream ended without a reply")?;
        let usage = &done.message.usage;
        let cost = catalog.cost(MODEL, usage);
        total_cost += cost;
        println!(
            "  [turn {turn}: {} input, {} cache read, {} cache write, {} output tokens; ${cost:.5}; {} attempt(s)]\n",
            usage.input_tokens,
            usage.cache_read(),
            usage.cache_creation(),
            usage.output_tokens,
            done.attempts
        );
        let assistant = done.message.to_message();
        let results = run_tools(&assistant);
        messages.push(assistant);
        if results.is_empty() {
            break;
        }
        messages.push(Message::with_blocks(Role::User, results));
    }
    println!(
        "total ${total_cost:.5} across {} requests",
        server.request_count()
    );
    server.shutdown().await;
    Ok(())
}

fn read_tool() -> ToolDefinition {
    ToolDefinition {
        name: "Read".into(),
        description: Some("Reads a text file.".into()),
        input_schema: json!({
            "type": "object",
            "properties": { "file_path": { "type": "string" } },
            "required": ["file_path"]
        }),
        cache_control: None,
    }
}

/// Answers each tool call; the demo knows only Read, which really reads the file.
fn run_tools(message: &Message) -> Vec<ContentBlock> {
    message
        .tool_uses()
        .map(|call| {
            let path = call
                .input
                .get("file_path")
                .and_then(|p| p.as_str())
                .unwrap_or_default();
            match (call.name, std::fs::read_to_string(path)) {
                ("Read", Ok(text)) => {
                    println!("  ⎿ read {} lines", text.lines().count());
                    ContentBlock::tool_result(call.id, text, false)
                }
                ("Read", Err(e)) => {
                    ContentBlock::tool_result(call.id, format!("cannot read {path}: {e}"), true)
                }
                (other, _) => ContentBlock::tool_result(
                    call.id,
                    format!("the demo has no tool `{other}`"),
                    true,
                ),
            }
        })
        .collect()
}

/// Prints streamed blocks as they arrive, one line each, whatever order the protocol
/// completes them in.
struct BlockPrinter {
    open: Option<(usize, Open)>,
    dim: bool,
}

#[derive(PartialEq)]
enum Open {
    Text,
    Thinking,
    Tool(String),
}

impl BlockPrinter {
    fn delta(&mut self, index: usize, kind: Open, text: &str) {
        if self.open.as_ref().map(|(i, _)| *i) != Some(index) {
            self.close();
            match &kind {
                Open::Tool(name) => print_now(&format!("  ⏺ {name}(")),
                Open::Thinking if self.dim => print_now("\x1b[2m"),
                _ => {}
            }
            self.open = Some((index, kind));
        }
        print_now(text);
    }

    fn close(&mut self) {
        match self.open.take() {
            Some((_, Open::Tool(_))) => println!(")"),
            Some((_, Open::Thinking)) if self.dim => println!("\x1b[0m"),
            Some(_) => println!(),
            None => {}
        }
    }
}

fn print_now(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
