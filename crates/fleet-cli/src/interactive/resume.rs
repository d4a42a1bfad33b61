//! `/resume`: this folder's sessions as choices, newest first. The label is the session's
//! first prompt; the detail its date and how many prompts it holds.

use anyhow::Context;
use fleet_protocol::Role;
use fleet_store::{FleetHome, SessionStore, Transcript};
use fleet_tui::port::Choice;
use std::path::Path;

/// At most this many sessions are offered (each is read to count its turns).
const MAX_LISTED: usize = 50;

pub fn choices(cwd: &Path) -> anyhow::Result<Vec<Choice>> {
    let store = SessionStore::new(FleetHome::from_env()?);
    let sessions = store
        .list_sessions(cwd)
        .context("listing this folder's sessions")?;
    Ok(sessions
        .into_iter()
        .take(MAX_LISTED)
        .map(|summary| {
            let date = humantime::format_rfc3339_seconds(summary.session.modified).to_string();
            let turns = turns(&summary.session.path);
            let label = summary
                .first_prompt
                .filter(|p| !p.trim().is_empty())
                .unwrap_or_else(|| "(no prompt)".to_string());
            Choice {
                id: summary.session.id,
                label,
                detail: format!(
                    "{} · {turns} turn{}",
                    date.replace('T', " ").trim_end_matches('Z'),
                    if turns == 1 { "" } else { "s" }
                ),
            }
        })
        .collect())
}

/// How many prompts the person typed in the session (task notifications and tool results
/// are not turns).
fn turns(path: &Path) -> usize {
    let Ok(loaded) = Transcript::load(path) else {
        return 0;
    };
    loaded
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .filter(|t| !t.trim().is_empty() && !t.trim_start().starts_with("<task-notification>"))
        .count()
}
