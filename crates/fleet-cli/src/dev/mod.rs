//! `fleet dev …`: tools for working on fleet itself.

mod fake_model;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Run the fake model server (Anthropic and OpenAI wire protocols) on loopback.
    FakeModel(fake_model::FakeModelArgs),
}

pub async fn run(cmd: DevCommand) -> anyhow::Result<()> {
    match cmd {
        DevCommand::FakeModel(args) => fake_model::run(args).await,
    }
}
