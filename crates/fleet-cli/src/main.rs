//! The `fleet` binary: parses the command line and hands each subcommand to its module.

mod demo;
mod dev;
mod input;
mod print;
mod settings;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "fleet",
    version,
    about = "A multi-agent harness for LLM coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A short exchange with fleet's built-in fake model server: no API key needed.
    Demo(demo::DemoArgs),
    /// Developer tools: the fake model server and benchmarks.
    #[command(subcommand)]
    Dev(dev::DevCommand),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("FLEET_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => demo::run(args).await,
        Command::Dev(cmd) => dev::run(cmd).await,
    }
}
