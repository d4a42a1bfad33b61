//! `fleet ultraplan`. PLACEHOLDER: written in the Ultraplan helper's branch.

#[derive(Debug, clap::Args)]
pub struct UltraplanArgs {
    /// The task to plan, or a verb: approve | reject | teleport | stop.
    pub words: Vec<String>,
}

pub async fn run(_args: UltraplanArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("PLACEHOLDER")
}
