//! `fleet sessions`: the sessions of a folder, newest first, to pick one for `--resume`.

use anyhow::Context;
use fleet_store::{FleetHome, SessionStore};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    /// The folder whose sessions to list (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// One JSON object per line: id, modified (RFC 3339), first_prompt, path.
    #[arg(long)]
    json: bool,
}

pub fn run(args: SessionsArgs) -> anyhow::Result<()> {
    let cwd = match args.cwd {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the working directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("{}: no such folder", cwd.display()))?;
    let store = SessionStore::new(FleetHome::from_env()?);
    let sessions = store.list_sessions(&cwd)?;
    let mut out = std::io::stdout().lock();
    if sessions.is_empty() && !args.json {
        writeln!(out, "no sessions for {} yet", cwd.display())?;
        return Ok(());
    }
    for summary in sessions {
        let modified = humantime::format_rfc3339_seconds(summary.session.modified).to_string();
        let prompt = summary.first_prompt.unwrap_or_default();
        if args.json {
            let line = serde_json::json!({
                "id": summary.session.id,
                "modified": modified,
                "first_prompt": prompt,
                "path": summary.session.path.display().to_string(),
            });
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{}  {modified}  {prompt}", summary.session.id)?;
        }
    }
    Ok(())
}
