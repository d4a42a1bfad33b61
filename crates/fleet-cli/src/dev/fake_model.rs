//! `fleet dev fake-model`: the testkit's fake model server as a process, for trying clients by
//! hand and for tests that drive the `fleet` binary or another language's SDK.
//!
//! It prints exactly one line to stdout, `listening on http://HOST:PORT`, so a parent process
//! can read the URL, then serves until Ctrl-C or SIGTERM.

use anyhow::Context;
use fleet_testkit::{FakeModelServer, Scenario};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct FakeModelArgs {
    /// Scenario file (.yaml, .yml or .json). Without one, every request gets a short text reply.
    #[arg(long, value_name = "PATH")]
    scenario: Option<PathBuf>,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
    /// Append one JSON line per request event (received, first byte, finished and how) to
    /// FILE, to read a hang from the server's side. Overrides the scenario's
    /// `request_log_file`. Off by default.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

/// How long in-flight responses may take to finish after a stop signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

pub async fn run(args: FakeModelArgs) -> anyhow::Result<()> {
    let mut scenario = match &args.scenario {
        Some(path) => Scenario::from_path(path)?,
        None => Scenario::demo(),
    };
    if let Some(log) = args.log {
        scenario = scenario.request_log_file(log);
    }
    let server = FakeModelServer::start_on(SocketAddr::new(args.host, args.port), scenario).await?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", server.base_url()).context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    drop(stdout);

    stop_signal().await?;
    tracing::info!("stopping the fake model server");
    if tokio::time::timeout(DRAIN_TIMEOUT, server.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("responses still in flight after {DRAIN_TIMEOUT:?}; exiting anyway");
    }
    Ok(())
}

/// Resolves on Ctrl-C, or on SIGTERM where there is one.
async fn stop_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(())
}
