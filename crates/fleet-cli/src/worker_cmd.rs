//! `fleet worker`: runs a remote worker here until SIGINT or SIGTERM, then gives its running
//! jobs back to the queue and exits 0.

use anyhow::{bail, Context};
use fleet_remote::worker::{self, WorkerConfig};
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
        "fleet worker {}: {} slot{}, labels [{}], on {url}",
        config.worker_id(),
        args.slots,
        if args.slots == 1 { "" } else { "s" },
        labels.join(", ")
    );
    worker::run(config, shutdown).await?;
    drop(work_root);
    Ok(ExitCode::SUCCESS)
}
