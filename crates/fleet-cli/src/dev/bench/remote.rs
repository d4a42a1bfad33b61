//! `fleet dev bench remote`. PLACEHOLDER: written in the bench helper's branch.

#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    /// How many trivial jobs to queue.
    #[arg(long, default_value_t = 1000)]
    jobs: usize,
    /// How many `fleet worker` processes take them.
    #[arg(long, default_value_t = 4)]
    workers: usize,
}

pub async fn remote(_args: RemoteArgs) -> anyhow::Result<()> {
    anyhow::bail!("PLACEHOLDER")
}
