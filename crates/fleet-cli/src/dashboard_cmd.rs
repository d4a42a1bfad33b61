//! `fleet dashboard`: serves the live web dashboard of every session under `$FLEET_HOME` (the
//! store, watched with inotify) and prints its URL, token included, as the first line on
//! stdout; then opens a browser unless `--no-open`. It is a server: it runs until Ctrl+C or
//! SIGTERM and then exits 0 — being stopped is how it is meant to end.
//!
//! - [`actions`]: what the page may do here (message a team member, signed as `fleet team
//!   send` signs) and, for a session started with `--dashboard`, over that session (stop a
//!   task, answer a permission question).
//! - [`live`]: `fleet … --dashboard`: the same server in the session's own process, fed by
//!   its events.
//! - [`approver`]: permission questions of a `--dashboard` session, asked on the page.
//! - [`remote`]: remote jobs' worker, attempt and state from the broker, when one is set.

pub(crate) mod actions;
pub(crate) mod approver;
pub(crate) mod live;
pub(crate) mod remote;
pub(crate) mod tui;

use anyhow::Context;
use fleet_dashboard::{Hub, ServeOptions};
use fleet_store::FleetHome;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};

#[derive(Debug, clap::Args)]
pub struct DashboardArgs {
    /// The port to listen on; 0 (the default) lets the system choose a free one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    port: u16,
    /// The address to listen on. Anything but loopback makes the dashboard (and what it can
    /// do, with its token) reachable from other machines over plain HTTP: a warning says so.
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
    host: String,
    /// Do not open a browser; only print the URL.
    #[arg(long)]
    no_open: bool,
}

pub async fn run(args: DashboardArgs) -> anyhow::Result<ExitCode> {
    let home = FleetHome::from_env()?;
    let hub = Hub::open(home.root().to_path_buf())
        .with_context(|| format!("reading the sessions under {}", home.root().display()))?;
    hub.watch().context("watching the fleet home for changes")?;
    remote::follow_broker(&hub, &std::env::current_dir()?);
    // Installed before the URL is out: whoever reads it may stop the server at once.
    let mut sigint = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut sigterm = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let options = ServeOptions {
        host: args.host,
        port: args.port,
        token: None,
    };
    let actions = Arc::new(actions::StoreActions::new(home));
    let mut serving = fleet_dashboard::serve(hub, actions, options).await?;
    announce(&serving.url())?;
    if let Some(warning) = serving.exposure() {
        eprintln!("fleet: warning: {warning}");
    }
    if !args.no_open {
        open_browser(&serving.url());
    }
    tokio::select! {
        _ = sigint.recv() => {}
        _ = sigterm.recv() => {}
        stopped = serving.wait() => stopped.context("the dashboard server stopped")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The URL as the first line on stdout, at once (a script reads it to connect).
fn announce(url: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{url}").context("writing the dashboard's URL")?;
    out.flush().context("writing the dashboard's URL")
}

/// Opens `url` in the first browser of `$BROWSER` that starts (a `:`-separated list, as
/// xdg-utils reads it; `%s` stands for the URL), else `xdg-open`, not waiting for it. A browser
/// that cannot be started is a note, not an error: the URL is printed already.
pub(crate) fn open_browser(url: &str) {
    let listed = std::env::var("BROWSER").unwrap_or_default();
    let mut tried = Vec::new();
    let candidates = listed
        .split(':')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .chain(listed.trim().is_empty().then_some("xdg-open"));
    for candidate in candidates {
        let words: Vec<String> = match candidate.contains("%s") {
            true => candidate
                .split_whitespace()
                .map(|w| w.replace("%s", url))
                .collect(),
            false => candidate
                .split_whitespace()
                .map(str::to_string)
                .chain([url.to_string()])
                .collect(),
        };
        let Some((program, args)) = words.split_first() else {
            continue;
        };
        let started = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match started {
            // Reaped in the background so it leaves no zombie.
            Ok(mut child) => {
                std::thread::spawn(move || child.wait());
                return;
            }
            Err(err) => tried.push(format!("{program}: {err}")),
        }
    }
    eprintln!(
        "fleet: note: could not open a browser ({}); open the URL above yourself",
        tried.join("; ")
    );
}
