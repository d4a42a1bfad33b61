//! `fleet team list` and `fleet team show`: the teams on this machine and one team in detail.

use super::{
    age, from_epoch_ms, inbox_owners, load_team, pending, print_for_people, print_json, table,
};
use fleet_store::tasklist::{Task, TaskList};
use fleet_store::team::{Member, MemberStatus, TeamConfig, TeamError, TeamStore};
use fleet_store::FleetHome;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::SystemTime;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// One JSON object: `teams` (name, description, createdAt, leadAgentId, leadSessionId,
    /// members: name, agentId, status, pending) and `problems` (broken team files: path,
    /// error).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The team's name (its folder under $FLEET_HOME/teams).
    team: String,
    /// One JSON object: the team's fields as in config.json, each member with `unread`,
    /// `otherInboxes` (inboxes of names not in the team), and `tasks` as stored.
    #[arg(long)]
    json: bool,
}

fn status(status: MemberStatus) -> &'static str {
    match status {
        MemberStatus::Active => "active",
        MemberStatus::Idle => "idle",
        MemberStatus::Stopped => "stopped",
    }
}

/// A member's status as it is, not as the file last said: when the process that leads the
/// team is gone (killed, crashed — a session that ends marks its lead stopped itself), the
/// lead and its in-process teammates, which lived in that process, are stopped.
fn member_status(team: &TeamConfig, member: &Member, lead_gone: bool) -> &'static str {
    let lived_in_lead = member.agent_id == team.lead_agent_id
        || member.backend == fleet_protocol::BackendType::InProcess;
    if lead_gone && lived_in_lead {
        return status(MemberStatus::Stopped);
    }
    status(member.status)
}

/// Whether the lead's process (`leadProcess.pid`, written when a session takes the team up)
/// no longer runs. `false` when the file names none: nothing says it is gone.
fn lead_gone(team: &TeamConfig) -> bool {
    let pid = team
        .extra
        .get("leadProcess")
        .and_then(|lead| lead.get("pid"))
        .and_then(Value::as_u64)
        .and_then(|pid| u32::try_from(pid).ok())
        .filter(|pid| *pid > 0);
    // A lead that ended but was not yet reaped (a zombie) is gone too.
    pid.is_some_and(|pid| !fleet_store::process_alive(pid))
}

pub fn list(store: &TeamStore, args: ListArgs) -> anyhow::Result<()> {
    let (teams, problems) = store.list_with_problems()?;
    let now = SystemTime::now();
    let mut rendered = Vec::with_capacity(teams.len());
    for team in &teams {
        let dir = store.inboxes_dir(&team.name);
        let owners = inbox_owners(&dir)?;
        let mut members = Vec::with_capacity(team.members.len());
        for member in &team.members {
            members.push((member, pending(&dir, &owners, &member.name)?));
        }
        rendered.push((team, members));
    }
    if args.json {
        let teams: Vec<Value> = rendered
            .iter()
            .map(|(team, members)| {
                let gone = lead_gone(team);
                json!({
                    "name": team.name,
                    "description": team.description,
                    "createdAt": team.created_at,
                    "leadAgentId": team.lead_agent_id,
                    "leadSessionId": team.lead_session_id,
                    "members": members.iter().map(|(m, pending)| json!({
                        "name": m.name,
                        "agentId": m.agent_id,
                        "status": member_status(team, m, gone),
                        "pending": pending,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let problems: Vec<Value> = problems.iter().map(problem_json).collect();
        return print_json(&json!({ "teams": teams, "problems": problems }));
    }
    for problem in &problems {
        eprintln!(
            "fleet: warning: {}",
            crate::visible::visible(&problem.to_string())
        );
    }
    if teams.is_empty() {
        return print_for_people(&format!("no teams under {}\n", store.root().display()));
    }
    let mut out = String::new();
    for (i, (team, members)) in rendered.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{}", team.name);
        if let Some(description) = team.description.as_deref().filter(|d| !d.is_empty()) {
            let _ = write!(out, " — {description}");
        }
        let _ = writeln!(
            out,
            "\n  lead {}  session {}  created {}",
            team.lead_agent_id,
            or_dash(&team.lead_session_id),
            age(from_epoch_ms(team.created_at), now)
        );
        let gone = lead_gone(team);
        let rows: Vec<Vec<String>> = members
            .iter()
            .map(|(m, pending)| {
                vec![
                    format!("  {}", m.name),
                    member_status(team, m, gone).to_string(),
                    format!("{pending} pending"),
                ]
            })
            .collect();
        out.push_str(&table(&rows));
    }
    print_for_people(&out)
}

/// A broken team file for `--json`: its path when known, and the error.
fn problem_json(problem: &TeamError) -> Value {
    let path = match problem {
        TeamError::Corrupt { path, .. } | TeamError::NotFound { path, .. } => {
            Some(path.display().to_string())
        }
        _ => None,
    };
    json!({ "path": path, "error": problem.to_string() })
}

fn or_dash(text: &str) -> &str {
    if text.is_empty() {
        "-"
    } else {
        text
    }
}

pub fn show(home: &FleetHome, store: &TeamStore, args: ShowArgs) -> anyhow::Result<()> {
    let config = load_team(store, &args.team)?;
    let dir = store.inboxes_dir(&config.name);
    let owners = inbox_owners(&dir)?;
    let mut unread = Vec::with_capacity(config.members.len());
    for member in &config.members {
        unread.push(pending(&dir, &owners, &member.name)?);
    }
    let members: BTreeSet<&str> = config.members.iter().map(|m| m.name.as_str()).collect();
    let mut others = Vec::new();
    for owner in owners.iter().filter(|o| !members.contains(o.as_str())) {
        others.push((owner.clone(), pending(&dir, &owners, owner)?));
    }
    let tasks = tasks(home, &config.name)?;
    if args.json {
        return print_json(&show_json(&config, &unread, &others, &tasks)?);
    }
    print_for_people(&show_text(&config, &unread, &others, &tasks))
}

/// The team's tasks, or none when it never had a task list (nothing is created to find out).
fn tasks(home: &FleetHome, team: &str) -> anyhow::Result<Vec<Task>> {
    if !home.root().join("tasks").join(team).is_dir() {
        return Ok(Vec::new());
    }
    Ok(TaskList::open(home, team)?.list()?)
}

fn show_json(
    config: &TeamConfig,
    unread: &[usize],
    others: &[(String, usize)],
    tasks: &[Task],
) -> anyhow::Result<Value> {
    let mut value = serde_json::to_value(config)?;
    let gone = lead_gone(config);
    if let Some(members) = value.get_mut("members").and_then(Value::as_array_mut) {
        for ((member, count), stored) in members.iter_mut().zip(unread).zip(&config.members) {
            if let Some(object) = member.as_object_mut() {
                object.insert("unread".into(), json!(count));
                object.insert("status".into(), json!(member_status(config, stored, gone)));
            }
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "otherInboxes".into(),
            others
                .iter()
                .map(|(owner, count)| json!({ "owner": owner, "unread": count }))
                .collect(),
        );
        object.insert("tasks".into(), serde_json::to_value(tasks)?);
    }
    Ok(value)
}

fn show_text(
    config: &TeamConfig,
    unread: &[usize],
    others: &[(String, usize)],
    tasks: &[Task],
) -> String {
    let now = SystemTime::now();
    let mut out = format!("team {}\n", config.name);
    if let Some(description) = config.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "  {description}");
    }
    let _ = writeln!(out, "  lead     {}", config.lead_agent_id);
    let _ = writeln!(out, "  session  {}", or_dash(&config.lead_session_id));
    let _ = writeln!(
        out,
        "  created  {}",
        age(from_epoch_ms(config.created_at), now)
    );
    if let Some(socket) = &config.socket {
        let _ = writeln!(out, "  socket   {socket}");
    }
    let _ = writeln!(out, "\nmembers:");
    let mut rows = vec![[
        "  NAME", "AGENT ID", "TYPE", "MODEL", "COLOR", "STATUS", "JOINED", "UNREAD",
    ]
    .map(String::from)
    .to_vec()];
    let gone = lead_gone(config);
    for (member, count) in config.members.iter().zip(unread) {
        rows.push(vec![
            format!("  {}", member.name),
            member.agent_id.clone(),
            or_dash(&member.agent_type).to_string(),
            member.model.clone().unwrap_or_else(|| "-".into()),
            member.color.clone().unwrap_or_else(|| "-".into()),
            member_status(config, member, gone).to_string(),
            age(from_epoch_ms(member.joined_at), now),
            count.to_string(),
        ]);
    }
    out.push_str(&table(&rows));
    if !others.is_empty() {
        let _ = writeln!(out, "\ninboxes of names not in the team:");
        let rows: Vec<Vec<String>> = others
            .iter()
            .map(|(owner, count)| vec![format!("  {owner}"), format!("{count} unread")])
            .collect();
        out.push_str(&table(&rows));
    }
    let _ = writeln!(out, "\ntasks:");
    if tasks.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for task in tasks {
        let _ = writeln!(out, "  {}", task.list_line());
    }
    out
}
