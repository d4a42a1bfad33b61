//! `fleet remote status|logs`. PLACEHOLDER: written in the client helper's branch.

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// Workers (slots, labels, last heartbeat) and jobs (queued, running, finished).
    Status,
    /// What a remote task's agent did, from the start.
    Logs { task: String },
}

pub async fn run(_cmd: RemoteCommand) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("PLACEHOLDER")
}
