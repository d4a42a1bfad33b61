//! `fleet dev fake-model`: placeholder until the testkit server lands.

#[derive(Debug, clap::Args)]
pub struct FakeModelArgs {}

pub async fn run(_args: FakeModelArgs) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
