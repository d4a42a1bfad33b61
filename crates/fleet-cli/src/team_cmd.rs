//! `fleet team`: watch a team and message its members from another terminal or a script.
//!
//! Everything here goes through the same files a running session uses (`fleet_store::team`,
//! `fleet_store::Mailbox`, `fleet_store::tasklist`), so what it shows is what the session
//! sees, and a message it sends is delivered exactly like one from a teammate: the session
//! that runs the member is woken by the append (inotify) and hands it over at the member's
//! next turn. The views never consume mail and never create files for inboxes or task lists
//! that do not exist yet.
//!
//! - [`view`]: `list` and `show`.
//! - [`send`]: `send` itself ([`delivery`]: whether someone takes the message now, and the
//!   recipient's receipt).
//! - [`inbox`]: `inbox`, and how an entry (prose or protocol frame) is shown to a person.

mod delivery;
mod inbox;
pub(crate) mod send;
mod view;

use anyhow::Context;
use fleet_store::team::{validate_member_name, TeamConfig, TeamError, TeamStore};
use fleet_store::{FleetHome, Mailbox, Member};
use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// The lead's member name and inbox, as the runtime writes them (`fleet_runtime::teams::
/// LEAD_NAME`); `main` is another name for it.
const LEAD_NAME: &str = "team-lead";

/// `fleet team --help`: the usage of every subcommand in one place.
pub const LONG_ABOUT: &str = "\
Watch a team and message its members from another terminal or a script.

Teams live under $FLEET_HOME/teams/<team>/ (config.json and one inbox per member); a team's
task list under $FLEET_HOME/tasks/<team>/. These commands read and write the same files a
running session does, so a message sent here reaches a live teammate at its next turn.

  fleet team list [--json]
      Every team: name, lead, members with their status and how many messages wait in each
      inbox. Broken team files are reported on stderr (in --json, under \"problems\").

  fleet team show <team> [--json]
      The team's config (members: name, agent id, type, model, color, status, when they
      joined), unread messages per inbox, and the shared task list.

  fleet team send <team> <member> <text> [--from NAME] [--summary TEXT] [--wait SECS]
      Appends a message to the member's inbox (durably: it is on disk when this returns) and
      prints its msg_id. `team-lead` and `main` address the lead. The sender defaults to
      `user`, signed with your team-mail key ($FLEET_HOME/keys/team-mail.ed25519, made
      owner-only on first use; refused if others can read it). A running pane teammate
      checks the message: this waits (up to --wait, 30s) for it to take it, and fails with
      its reason if it refuses. A member that is not running gets it when the team's session
      resumes (\"queued: ...\" on stderr). A text of `-` is read from stdin.

  fleet team inbox <team> <member> [--json] [--unread]
      The messages in a member's inbox, oldest first, each marked read or unread (consumed
      messages stay visible until the inbox is compacted). Protocol frames (idle
      notifications, shutdown and plan approval messages, task assignments) are shown by type
      and key fields. This is only a view: nothing is marked read.

--json output is stable for scripts: keys are named as in the team files (camelCase, and a
mail entry exactly as stored). Exit status: 0 on success, 1 on any error (unknown team or
member, invalid name, unreadable files, an unusable key, a message the recipient refused;
the error names what exists), 2 for a mistyped command line.";

#[derive(Debug, clap::Subcommand)]
pub enum TeamCommand {
    /// Every team: lead, members with status, messages waiting per member.
    List(view::ListArgs),
    /// One team: members, unread messages per inbox, the task list.
    Show(view::ShowArgs),
    /// Append a message to a member's inbox and print its msg_id.
    Send(send::SendArgs),
    /// The messages in a member's inbox (a view: nothing is consumed).
    Inbox(inbox::InboxArgs),
}

pub fn run(command: TeamCommand) -> anyhow::Result<ExitCode> {
    let home = FleetHome::from_env()?;
    let store = TeamStore::new(&home);
    match command {
        TeamCommand::List(args) => view::list(&store, args),
        TeamCommand::Show(args) => view::show(&home, &store, args),
        TeamCommand::Send(args) => send::send(&home, &store, args),
        TeamCommand::Inbox(args) => inbox::inbox(&store, args),
    }
    .map(|()| ExitCode::SUCCESS)
}

/// Reads a team's config. An unknown team's error names the teams that do exist.
fn load_team(store: &TeamStore, team: &str) -> anyhow::Result<TeamConfig> {
    match store.load(team) {
        Ok(config) => Ok(config),
        Err(TeamError::NotFound { .. }) => {
            let names: Vec<String> = match store.list_with_problems() {
                Ok((teams, _)) => teams.into_iter().map(|t| t.name).collect(),
                Err(_) => Vec::new(),
            };
            if names.is_empty() {
                anyhow::bail!(
                    "no team {team:?}: there are no teams under {}",
                    store.root().display()
                )
            }
            anyhow::bail!(
                "no team {team:?} under {}; teams: {}",
                store.root().display(),
                names.join(", ")
            )
        }
        Err(err) => Err(err.into()),
    }
}

/// Whose inbox a `<member>` argument names.
pub(crate) struct Addressee<'a> {
    /// The inbox owner (a file name in `inboxes/`).
    owner: String,
    /// The member record, when the team file has one.
    member: Option<&'a Member>,
}

/// Resolves `<member>`: a member's name (any ASCII case) or `name@team`; `team-lead`, `main`
/// or the lead's agent id address the lead. Anything else is refused with the list of members.
pub(crate) fn addressee<'a>(config: &'a TeamConfig, name: &str) -> anyhow::Result<Addressee<'a>> {
    let bare = match name.split_once('@') {
        Some((bare, team)) if team == config.name => bare,
        Some((_, team)) => anyhow::bail!(
            "{name:?} names a member of team {team:?}, but this is team {:?}",
            config.name
        ),
        None => name,
    };
    let lead = config.lead();
    let is_lead = bare.eq_ignore_ascii_case(LEAD_NAME)
        || bare.eq_ignore_ascii_case("main")
        || lead.is_some_and(|m| m.name.eq_ignore_ascii_case(bare));
    if is_lead {
        return Ok(Addressee {
            owner: lead.map_or_else(|| LEAD_NAME.to_string(), |m| m.name.clone()),
            member: lead,
        });
    }
    validate_member_name(bare)?;
    match config.member(bare) {
        Some(member) => Ok(Addressee {
            owner: member.name.clone(),
            member: Some(member),
        }),
        None => anyhow::bail!(
            "team {:?} has no member {bare:?}; members: {}",
            config.name,
            member_names(config)
        ),
    }
}

/// `team-lead (lead), alpha, beta` — for error messages.
fn member_names(config: &TeamConfig) -> String {
    let names: Vec<String> = config
        .members
        .iter()
        .map(|m| {
            if m.agent_id == config.lead_agent_id {
                format!("{} (lead; also \"main\")", m.name)
            } else {
                m.name.clone()
            }
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The owners that have an inbox on disk in `dir` (a segment `<owner>.<n>.jsonl` or a cursor
/// `<owner>.cursor`). A missing folder has none.
fn inbox_owners(dir: &Path) -> anyhow::Result<BTreeSet<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut owners = BTreeSet::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(owner) = inbox_owner_of(name) {
            owners.insert(owner.to_string());
        }
    }
    Ok(owners)
}

/// `alpha.3.jsonl` or `alpha.cursor` → `alpha`.
fn inbox_owner_of(file_name: &str) -> Option<&str> {
    if let Some(owner) = file_name.strip_suffix(".cursor") {
        return (!owner.is_empty() && !owner.contains('.')).then_some(owner);
    }
    let (owner, generation) = file_name.strip_suffix(".jsonl")?.rsplit_once('.')?;
    let plain = !owner.is_empty() && !owner.contains('.');
    let numbered = !generation.is_empty() && generation.bytes().all(|b| b.is_ascii_digit());
    (plain && numbered).then_some(owner)
}

/// The inbox of `owner` if it exists on disk; `None` (and nothing created) otherwise.
fn existing_inbox(
    dir: &Path,
    owners: &BTreeSet<String>,
    owner: &str,
) -> anyhow::Result<Option<Mailbox>> {
    if !owners.contains(owner) {
        return Ok(None);
    }
    Ok(Some(Mailbox::open(dir, owner)?))
}

/// Whole lines waiting in `owner`'s inbox (0 when it has none).
fn pending(dir: &Path, owners: &BTreeSet<String>, owner: &str) -> anyhow::Result<usize> {
    Ok(match existing_inbox(dir, owners, owner)? {
        Some(mailbox) => mailbox.pending()?,
        None => 0,
    })
}

/// `epoch ms` → a time.
fn from_epoch_ms(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

/// How long ago `then` was, for people: `just now`, `42s ago`, `5m ago`, `3h ago`, `2d ago`;
/// `in the future` for a clock that disagrees, `unknown` for a missing time (epoch 0).
fn age(then: SystemTime, now: SystemTime) -> String {
    if then == SystemTime::UNIX_EPOCH {
        return "unknown".into();
    }
    let Ok(elapsed) = now.duration_since(then) else {
        return "in the future".into();
    };
    let secs = elapsed.as_secs();
    match secs {
        0 => "just now".into(),
        1..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            rows.iter()
                .filter_map(|r| r.get(col))
                .map(|c| unicode_width::UnicodeWidthStr::width(c.as_str()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if col + 1 < row.len() {
                let width = unicode_width::UnicodeWidthStr::width(cell.as_str());
                line.push_str(&" ".repeat(widths[col].saturating_sub(width) + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Writes text for people: whatever came from files (names, descriptions, mail) is made safe
/// for the terminal first.
fn print_for_people(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(crate::visible::visible(text).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes one JSON document (pretty, newline-terminated).
fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ago = |secs| age(now - Duration::from_secs(secs), now);
        assert_eq!(ago(0), "just now");
        assert_eq!(ago(42), "42s ago");
        assert_eq!(ago(300), "5m ago");
        assert_eq!(ago(3 * 3600 + 5), "3h ago");
        assert_eq!(ago(2 * 86_400), "2d ago");
        assert_eq!(age(now + Duration::from_secs(5), now), "in the future");
        assert_eq!(age(SystemTime::UNIX_EPOCH, now), "unknown");
    }

    #[test]
    fn inbox_files_name_their_owner() {
        assert_eq!(inbox_owner_of("alpha.0.jsonl"), Some("alpha"));
        assert_eq!(inbox_owner_of("team-lead.12.jsonl"), Some("team-lead"));
        assert_eq!(inbox_owner_of("alpha.cursor"), Some("alpha"));
        assert_eq!(inbox_owner_of("alpha.lock"), None);
        assert_eq!(inbox_owner_of("alpha.cursor.tmp"), None);
        assert_eq!(inbox_owner_of("alpha.x.jsonl"), None);
        assert_eq!(inbox_owner_of("a.b.0.jsonl"), None);
        assert_eq!(inbox_owner_of(".0.jsonl"), None);
    }

    fn team() -> TeamConfig {
        let mut lead = Member::new(LEAD_NAME, "crew", LEAD_NAME, "/src");
        lead.agent_id = "team-lead@crew".into();
        TeamConfig {
            name: "crew".into(),
            description: None,
            created_at: 0,
            lead_agent_id: "team-lead@crew".into(),
            lead_session_id: String::new(),
            socket: None,
            members: vec![
                lead,
                Member::new("Alpha", "crew", "general-purpose", "/src"),
            ],
            extra: Default::default(),
        }
    }

    #[test]
    fn members_are_addressed_by_name_agent_id_or_as_the_lead() {
        let config = team();
        for name in ["main", "team-lead", "MAIN", "team-lead@crew"] {
            assert_eq!(
                addressee(&config, name).map(|a| a.owner).ok().as_deref(),
                Some("team-lead"),
                "{name}"
            );
        }
        for name in ["alpha", "Alpha", "alpha@crew"] {
            assert_eq!(
                addressee(&config, name).map(|a| a.owner).ok().as_deref(),
                Some("Alpha"),
                "{name}"
            );
        }
        let unknown = addressee(&config, "gamma").err().map(|e| e.to_string());
        assert_eq!(
            unknown.as_deref(),
            Some("team \"crew\" has no member \"gamma\"; members: team-lead (lead; also \"main\"), Alpha")
        );
        assert!(addressee(&config, "alpha@other").is_err());
        assert!(addressee(&config, "../x").is_err());
        assert!(addressee(&config, "user").is_err());
    }

    #[test]
    fn tables_line_up() {
        let rows = vec![
            vec!["NAME".to_string(), "STATUS".into(), "X".into()],
            vec!["alpha".into(), "idle".into(), "".into()],
        ];
        assert_eq!(table(&rows), "NAME   STATUS  X\nalpha  idle\n");
    }
}
