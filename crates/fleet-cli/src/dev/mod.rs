//! `fleet dev …`: tools for working on fleet itself.

mod ask;
mod bench;
mod fake_model;
mod mcp_crash;
mod soak;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Send one prompt to the configured model provider and stream the reply.
    Ask(ask::AskArgs),
    /// Run the fake model server (Anthropic and OpenAI wire protocols) on loopback.
    FakeModel(fake_model::FakeModelArgs),
    /// Benchmarks of the running system (`fleet dev bench fanout --agents 200`).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Start this folder's MCP servers, then panic (checks that none outlives a crash).
    #[command(hide = true)]
    McpCrash(mcp_crash::McpCrashArgs),
    /// Run fleet over and over under load, faults and kill -9, checking that every run ends
    /// and tells the truth (`fleet dev soak --short`; see docs/soak.md).
    Soak(soak::SoakArgs),
}

pub async fn run(cmd: DevCommand) -> anyhow::Result<()> {
    match cmd {
        DevCommand::Ask(args) => ask::run(args).await,
        DevCommand::FakeModel(args) => fake_model::run(args).await,
        DevCommand::Bench(cmd) => bench::run(cmd).await,
        DevCommand::McpCrash(args) => mcp_crash::run(args).await,
        DevCommand::Soak(args) => soak::run(args).await,
    }
}
