//! `fleet worker`. PLACEHOLDER: written in the worker helper's branch.

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The NATS server (`nats://host:4222`); also FLEET_NATS_URL or the `remote.natsUrl`
    /// setting.
    #[arg(long)]
    pub nats: Option<String>,
    /// How many jobs run at once.
    #[arg(long, default_value_t = 2)]
    pub slots: u32,
    /// Labels jobs may ask for (`--labels gpu,big`).
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
}

pub async fn run(_args: WorkerArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("PLACEHOLDER")
}
