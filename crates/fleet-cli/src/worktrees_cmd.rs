//! `fleet worktrees list | clean`: the worktrees isolated agents (and the verifier) left under
//! `$FLEET_HOME/worktrees`, for a person deciding what to keep and for scripts.
//!
//! Everything goes through `fleet_runtime::isolation::WorktreeManager`, which finds worktrees
//! through the record kept beside each one, so a worktree a killed run left behind is listed
//! too; one whose folder was deleted by hand is shown as such and its git registration pruned.
//! `clean` only ever removes what holds nothing (no commits, no modified, staged or untracked
//! files) unless `--force` says otherwise, and it says what it kept and why.

use anyhow::Context;
use fleet_runtime::isolation::{
    CleanReport, CleanTarget, KeepReason, WorktreeInfo, WorktreeManager, WorktreeState,
};
use fleet_store::FleetHome;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::visible::visible;

#[derive(Debug, clap::Subcommand)]
pub enum WorktreesCommand {
    /// Every fleet worktree (all repositories): repo, agent, branch, changed or not, age and
    /// folder. Worktrees whose folder is gone are marked stale and pruned from git's list.
    List(ListArgs),
    /// Remove worktrees that hold nothing (and their `fleet/agent-*` branches): all of them,
    /// or the one named. Changed ones, and ones a running fleet is using, only with --force.
    Clean(CleanArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// A JSON array: kind, agent_id, repo_root, git_dir, branch, path, base_commit,
    /// head_commit, changed, state (present, folder_missing, unregistered, repo_missing),
    /// in_use, created_at, age_secs.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct CleanArgs {
    /// The worktree to clean: an agent id, its first eight characters, the folder name
    /// (`agent-a1b2c3d4`), the branch or the folder's path. Without it: every worktree.
    #[arg(value_name = "ID", conflicts_with = "all")]
    id: Option<String>,
    /// Every worktree (the default when no ID is given; needed with --force and no ID, so a
    /// forced removal of everything is never an accident).
    #[arg(long)]
    all: bool,
    /// Remove changed worktrees too, and ones a running fleet made: their work is lost
    /// (branches with commits included).
    #[arg(long)]
    force: bool,
    /// `{"removed": [worktree…], "kept": [{"worktree": …, "reason": "changed" | "in_use" |
    /// "failed", …}]}`, each worktree as in `list --json`.
    #[arg(long)]
    json: bool,
}

pub async fn run(command: WorktreesCommand) -> anyhow::Result<ExitCode> {
    let home = FleetHome::from_env().context("finding the fleet home")?;
    let manager = WorktreeManager::new(&home);
    match command {
        WorktreesCommand::List(args) => list(&manager, args).await,
        WorktreesCommand::Clean(args) => clean(&manager, args).await,
    }
}

async fn list(manager: &WorktreeManager, args: ListArgs) -> anyhow::Result<ExitCode> {
    let infos = manager
        .list()
        .await
        .context("listing the fleet worktrees")?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&infos)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if infos.is_empty() {
        writeln!(
            out,
            "no fleet worktrees (under {})",
            visible(&manager.root().display().to_string())
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![[
        "REPO".to_string(),
        "AGENT".into(),
        "BRANCH".into(),
        "STATE".into(),
        "AGE".into(),
        "PATH".into(),
    ]];
    rows.extend(infos.iter().map(row));
    write_table(&mut out, &rows)?;
    let stale = infos
        .iter()
        .filter(|i| i.state != WorktreeState::Present)
        .count();
    if stale > 0 {
        writeln!(
            out,
            "\n{stale} stale (folder or registration gone; git's list was pruned): \
             `fleet worktrees clean` drops the unchanged ones"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn clean(manager: &WorktreeManager, args: CleanArgs) -> anyhow::Result<ExitCode> {
    if args.force && args.id.is_none() && !args.all {
        anyhow::bail!(
            "--force removes changed worktrees and their work: name one (`fleet worktrees clean \
             ID --force`) or pass --all to remove every worktree"
        );
    }
    let report = match &args.id {
        None => manager
            .clean(CleanTarget::All, args.force)
            .await
            .context("cleaning the fleet worktrees")?,
        Some(wanted) => clean_one(manager, wanted, args.force).await?,
    };
    let failed = report
        .kept
        .iter()
        .any(|k| matches!(k.reason, KeepReason::Failed { .. }));
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_report(&mut out, &report, args.id.is_some())?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Cleans the worktrees `wanted` names. They are resolved here rather than by the manager so a
/// relative or unresolved path works too, and so an unknown ID can be answered with what exists.
async fn clean_one(
    manager: &WorktreeManager,
    wanted: &str,
    force: bool,
) -> anyhow::Result<CleanReport> {
    let infos = manager
        .list()
        .await
        .context("listing the fleet worktrees")?;
    let chosen: Vec<&WorktreeInfo> = infos.iter().filter(|i| names(i, wanted)).collect();
    if chosen.is_empty() {
        anyhow::bail!("{}", unknown(wanted, &infos));
    }
    let mut report = CleanReport::default();
    for info in chosen {
        // The record's own path names exactly this worktree to the manager.
        let target = match info.path.to_str() {
            Some(path) => path.to_string(),
            None => info.agent_id.clone(),
        };
        let one = manager
            .clean(CleanTarget::One(target), force)
            .await
            .with_context(|| format!("cleaning {}", info.path.display()))?;
        report.removed.extend(one.removed);
        report.kept.extend(one.kept);
    }
    Ok(report)
}

/// Whether `wanted` names this worktree: its agent id, id8, folder name, branch or path (as
/// given, or resolved from the current folder, links followed).
fn names(info: &WorktreeInfo, wanted: &str) -> bool {
    let folder = info.path.file_name().map(|n| n.to_string_lossy());
    if info.agent_id == wanted
        || info.branch.as_deref() == Some(wanted)
        || folder.as_deref() == Some(wanted)
        || folder.as_deref() == Some(&format!("agent-{wanted}"))
    {
        return true;
    }
    let given = Path::new(wanted);
    let absolute = match std::env::current_dir() {
        Ok(cwd) if given.is_relative() => cwd.join(given),
        _ => given.to_path_buf(),
    };
    info.path == given || info.path == absolute || same_file(&info.path, &absolute)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The error for an ID nothing matches, naming what does exist.
fn unknown(wanted: &str, infos: &[WorktreeInfo]) -> String {
    let wanted = visible(wanted);
    if infos.is_empty() {
        return format!("no fleet worktree matches `{wanted}`: there are none");
    }
    let known: Vec<String> = infos
        .iter()
        .map(|i| {
            let folder = i
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(
                "{} (agent {}{})",
                visible(&folder),
                visible(&i.agent_id),
                match &i.branch {
                    Some(b) => format!(", branch {}", visible(b)),
                    None => String::new(),
                }
            )
        })
        .collect();
    format!(
        "no fleet worktree matches `{wanted}`; there are: {}",
        known.join(", ")
    )
}

fn print_report(out: &mut impl Write, report: &CleanReport, named: bool) -> anyhow::Result<()> {
    if report.removed.is_empty() && report.kept.is_empty() {
        writeln!(out, "no fleet worktrees to clean")?;
        return Ok(());
    }
    for info in &report.removed {
        writeln!(out, "removed  {}", describe(info))?;
    }
    for kept in &report.kept {
        let why = match &kept.reason {
            KeepReason::Changed => {
                "it holds work (commits, or modified or untracked files); --force removes it"
                    .to_string()
            }
            KeepReason::InUse { pid } if *pid != 0 => {
                format!("a running fleet (pid {pid}) made it and may be working in it; --force removes it")
            }
            KeepReason::InUse { .. } => {
                "a running fleet may be working in it; --force removes it".to_string()
            }
            KeepReason::Failed { error } => format!("removing it failed: {}", visible(error)),
        };
        writeln!(out, "kept     {}\n         {why}", describe(&kept.worktree))?;
    }
    if !named || report.removed.len() + report.kept.len() > 1 {
        writeln!(
            out,
            "{} removed, {} kept",
            report.removed.len(),
            report.kept.len()
        )?;
    }
    Ok(())
}

/// One worktree on one line: folder, branch, repository.
fn describe(info: &WorktreeInfo) -> String {
    format!(
        "{}  {}  (repo {})",
        visible(&info.path.display().to_string()),
        visible(info.branch.as_deref().unwrap_or("detached")),
        visible(&info.repo_root.display().to_string()),
    )
}

fn row(info: &WorktreeInfo) -> [String; 6] {
    let mut state = vec![if info.changed { "changed" } else { "unchanged" }];
    match info.state {
        WorktreeState::Present => {}
        WorktreeState::FolderMissing => state.push("stale: folder gone"),
        WorktreeState::Unregistered => state.push("stale: unknown to git"),
        WorktreeState::RepoMissing => state.push("stale: repo gone"),
    }
    if info.in_use {
        state.push("in use");
    }
    [
        visible(&info.repo_root.display().to_string()).into_owned(),
        visible(&info.agent_id).into_owned(),
        visible(info.branch.as_deref().unwrap_or("(snapshot)")).into_owned(),
        state.join(", "),
        age(info.age_secs),
        visible(&info.path.display().to_string()).into_owned(),
    ]
}

/// `42s`, `5m`, `3h`, `2d`: enough to tell an old leftover from this morning's run.
fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

/// Columns padded to their widest cell; the last column is not padded.
fn write_table<const N: usize>(out: &mut impl Write, rows: &[[String; N]]) -> anyhow::Result<()> {
    let widths: Vec<usize> = (0..N)
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for cells in rows {
        let mut line = String::new();
        for (col, cell) in cells.iter().enumerate() {
            if col + 1 < N {
                line.push_str(&format!("{cell:<width$}  ", width = widths[col]));
            } else {
                line.push_str(cell);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn info_at(path: &str, agent: &str, branch: Option<&str>) -> WorktreeInfo {
        WorktreeInfo {
            kind: fleet_runtime::isolation::WorktreeKind::Agent,
            agent_id: agent.into(),
            repo_root: PathBuf::from("/repo"),
            git_dir: PathBuf::from("/repo/.git"),
            branch: branch.map(str::to_string),
            path: PathBuf::from(path),
            base_commit: "abc".into(),
            head_commit: None,
            changed: false,
            state: WorktreeState::Present,
            in_use: false,
            created_at: "2025-01-01T00:00:00Z".into(),
            age_secs: 0,
        }
    }

    #[test]
    fn an_id_names_a_worktree_by_agent_short_id_folder_branch_or_path() {
        let info = info_at(
            "/h/worktrees/r/agent-a1b2c3d4",
            "a1b2c3d4e5f6",
            Some("fleet/agent-a1b2c3d4"),
        );
        for wanted in [
            "a1b2c3d4e5f6",
            "a1b2c3d4",
            "agent-a1b2c3d4",
            "fleet/agent-a1b2c3d4",
            "/h/worktrees/r/agent-a1b2c3d4",
            "/h/worktrees/r/agent-a1b2c3d4/",
        ] {
            assert!(names(&info, wanted), "{wanted}");
        }
        for wanted in ["a1b2", "agent-", "/h/worktrees/r", "e5f6"] {
            assert!(!names(&info, wanted), "{wanted}");
        }
    }

    #[test]
    fn an_unknown_id_is_answered_with_what_exists() {
        assert!(unknown("zz", &[]).contains("there are none"));
        let info = info_at(
            "/w/agent-a1b2c3d4",
            "a1b2c3d4e5",
            Some("fleet/agent-a1b2c3d4"),
        );
        let text = unknown("zz", &[info]);
        assert!(text.contains("agent-a1b2c3d4 (agent a1b2c3d4e5, branch fleet/agent-a1b2c3d4)"));
    }

    #[test]
    fn ages_are_short() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(300), "5m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(3 * 86400 + 5), "3d");
    }
}
