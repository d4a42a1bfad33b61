//! `fleet worker`: runs a remote worker here until SIGINT or SIGTERM, then gives its running
//! jobs back to the queue and exits 0. It runs only jobs signed by a key it trusts, in at
//! most its own maximum permission mode (see `fleet_remote::signing` and docs/remote-workers.md).

use anyhow::{bail, Context};
use fleet_remote::signing::TrustedKeys;
use fleet_remote::worker::{self, WorkerConfig};
use fleet_tools::permissions::PermissionMode;
use std::process::ExitCode;
use tokio::signal::unix::{signal, SignalKind};
use tokio_util::sync::CancellationToken;

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
    /// The widest permission mode a job may ask for (plan < dontAsk < default < acceptEdits <
    /// bypassPermissions); a job asking for more fails with the reason in its record.
    #[arg(long, default_value = "acceptEdits", value_parser = parse_mode)]
    pub max_mode: PermissionMode,
    /// A submitter's public key (`ed25519:…`, what `fleet remote key` prints) whose signed
    /// jobs run here; repeat for more. Adds to `remote.trustedKeys` in
    /// $FLEET_HOME/settings.json. With neither, only this user's own key is trusted.
    #[arg(long = "trust-key", value_name = "KEY")]
    pub trust_keys: Vec<String>,
}

fn parse_mode(text: &str) -> Result<PermissionMode, String> {
    text.parse()
}

pub async fn run(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let url = crate::remote_cmd::resolve_url(args.nats.as_deref(), &cwd)?;
    if args.slots == 0 {
        bail!("--slots must be at least 1");
    }
    let labels: Vec<String> = args
        .labels
        .iter()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let home = fleet_store::FleetHome::from_env().context("finding $FLEET_HOME")?;
    let trusted = TrustedKeys::for_worker(home.root(), &args.trust_keys)
        .context("reading the keys this worker trusts")?;
    let program = std::env::current_exe().context("finding the fleet binary")?;
    let work_root = tempfile::Builder::new()
        .prefix("fleet-worker-")
        .tempdir()
        .context("making the worker's folder for checkouts")?;
    let config = WorkerConfig {
        url: url.clone(),
        slots: args.slots,
        labels: labels.clone(),
        program,
        work_root: work_root.path().to_path_buf(),
        id: None,
        trusted,
        max_mode: args.max_mode,
    };
    let shutdown = CancellationToken::new();
    let mut sigint = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut sigterm = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let stop = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = sigint.recv() => {}
            _ = sigterm.recv() => {}
        }
        stop.cancel();
    });
    eprintln!(
        "fleet worker {}: {} slot{}, labels [{}], max mode {}, on {url}",
        config.worker_id(),
        args.slots,
        if args.slots == 1 { "" } else { "s" },
        labels.join(", "),
        config.max_mode,
    );
    eprintln!(
        "fleet worker {}: {}",
        config.worker_id(),
        config.trusted.describe()
    );
    worker::run(config, shutdown).await?;
    drop(work_root);
    Ok(ExitCode::SUCCESS)
}
