//! `fleet trust [PATH]`, `fleet trust --list`, `fleet trust --revoke [PATH]`, and the trust
//! question of the terminal UI: the ways a person records that a repository's own settings,
//! hooks, servers and skills may apply.

use super::TrustReport;
use crate::settings::{self, SettingsFlags};
use anyhow::Context;
use fleet_store::trust::{now_rfc3339, TrustRecord, TrustStore};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The repository (default: the one around the current folder).
    pub path: Option<PathBuf>,
    /// List the repositories you trust and what you approved in each.
    #[arg(long, conflicts_with = "revoke")]
    pub list: bool,
    /// Take back the trust (and the approvals given through fleet) of the repository.
    #[arg(long)]
    pub revoke: bool,
}

pub fn run(args: TrustArgs) -> anyhow::Result<ExitCode> {
    let store = TrustStore::from_env()?;
    if args.list {
        return list(&store);
    }
    let folder = match &args.path {
        Some(path) => path.clone(),
        None => std::env::current_dir().context("reading the current folder")?,
    };
    let folder = folder
        .canonicalize()
        .with_context(|| format!("{}: no such folder", folder.display()))?;
    let root = super::repository_of(&folder);
    if args.revoke {
        let had = store.update(&root, |p| {
            let had = p.trusted.is_some() || !p.allow.is_empty() || !p.mcp_servers.is_empty();
            *p = Default::default();
            had
        })?;
        println!(
            "{} {}",
            if had {
                "Revoked trust for"
            } else {
                "Nothing was trusted for"
            },
            root.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let report = assess(&folder)?;
    record(&store, &root, &report)?;
    println!("Trusted {}", root.display());
    if report.items.is_empty() {
        println!("  (it asks for nothing that needs trust now; a change will ask again)");
    }
    for item in &report.items {
        println!("  {}", crate::visible::visible(&item.summary()));
    }
    println!("Recorded in {}", store.path().display());
    Ok(ExitCode::SUCCESS)
}

/// What the repository around `folder` asks for now, as if it were trusted.
pub fn assess(folder: &Path) -> anyhow::Result<TrustReport> {
    let flags = SettingsFlags {
        trust: Some(true),
        ..SettingsFlags::default()
    };
    Ok(settings::load_with(folder, &flags)?.trust)
}

/// Remembers that the user trusts `root` as `report` describes it.
pub fn record(store: &TrustStore, root: &Path, report: &TrustReport) -> anyhow::Result<()> {
    let record = TrustRecord {
        hash: report.hash.clone(),
        items: report.items.iter().map(super::Item::summary).collect(),
        at: now_rfc3339(),
    };
    store.update(root, |p| p.trusted = Some(record))?;
    Ok(())
}

fn list(store: &TrustStore) -> anyhow::Result<ExitCode> {
    let file = store.load()?;
    if file.projects.is_empty() {
        println!("No repository is trusted (fleet trust PATH trusts one).");
    }
    for (path, approval) in &file.projects {
        match &approval.trusted {
            Some(record) => println!("{path}  trusted {}", record.at),
            None => println!("{path}  not trusted"),
        }
        if let Some(record) = &approval.trusted {
            for item in &record.items {
                println!("    {}", crate::visible::visible(item));
            }
        }
        for rule in &approval.allow {
            println!("    allow rule {rule}");
        }
        for name in approval.mcp_servers.keys() {
            println!("    MCP server {name:?}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The terminal UI's question, asked once before the UI opens when the repository asks for
/// something that needs trust. `true` when the person trusted it (and it is recorded).
pub fn ask(report: &TrustReport) -> anyhow::Result<bool> {
    let root = report.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "This repository ({}) asks for things that run code or widen what agents may do:",
        root.display()
    )?;
    for item in &report.items {
        writeln!(err, "  • {}", crate::visible::visible(&item.summary()))?;
    }
    writeln!(
        err,
        "Trust it? Only if you trust whoever wrote it. [y] trust and remember  [N] not now \
         (its settings are ignored this session)"
    )?;
    write!(err, "> ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if yes {
        record(&TrustStore::from_env()?, &root, report)?;
    }
    Ok(yes)
}
