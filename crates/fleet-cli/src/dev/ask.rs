//! `fleet dev ask "prompt"`: one streamed request to the configured provider, to check a
//! setup (key, base URL, model name) before running agents on it.

use crate::model_choice::{choose, parse_provider, Choice};
use anyhow::Context;
use fleet_model::{ModelEvent, ModelRequest, Provider};
use fleet_protocol::{Message, MessagesRequest, SystemPrompt};
use futures::StreamExt;
use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The prompt to send.
    prompt: String,
    /// `anthropic` or `openai` (default: FLEET_PROVIDER, then settings, then whichever
    /// credentials are set).
    #[arg(long, value_parser = parse_provider)]
    provider: Option<Provider>,
    /// Model id or alias (default: FLEET_MODEL, then settings, else `sonnet` on Anthropic).
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    system: Option<String>,
    #[arg(long, default_value_t = 1024)]
    max_tokens: u64,
    /// Print the assembled reply as JSON instead of streaming its text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: AskArgs) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let settings = crate::settings::load(&cwd)?;
    let Choice {
        client,
        catalog,
        model,
    } = choose(args.provider, args.model, &settings)?;
    let mut body = MessagesRequest::new(
        model.clone(),
        args.max_tokens,
        vec![Message::user_text(args.prompt)],
    );
    body.system = args.system.map(SystemPrompt::Text);
    let mut stream = client.stream(ModelRequest::from(body));
    let mut stdout = std::io::stdout().lock();
    while let Some(event) = stream.next().await {
        match event.with_context(|| format!("asking {model} via {}", client.provider().as_str()))? {
            ModelEvent::Retry {
                attempt,
                max_attempts,
                delay,
                reason,
                ..
            } => {
                eprintln!("retry {attempt}/{max_attempts} in {delay:?}: {reason}");
            }
            ModelEvent::TextDelta { text, .. } if !args.json => {
                stdout.write_all(text.as_bytes())?;
                stdout.flush()?;
            }
            ModelEvent::Completed(done) => {
                if args.json {
                    serde_json::to_writer_pretty(&mut stdout, &done.message)?;
                }
                writeln!(stdout)?;
                let usage = &done.message.usage;
                let figures = if usage.is_reported() {
                    format!(
                        "{} input, {} cache read, {} cache write, {} output tokens; ${:.6}",
                        usage.input_tokens,
                        usage.cache_read(),
                        usage.cache_creation(),
                        usage.output_tokens,
                        catalog.cost(&model, usage),
                    )
                } else {
                    "usage not reported".to_string()
                };
                eprintln!(
                    "{}: {figures}; {} ms",
                    done.message.model,
                    done.duration.as_millis()
                );
            }
            _ => {}
        }
    }
    Ok(())
}
