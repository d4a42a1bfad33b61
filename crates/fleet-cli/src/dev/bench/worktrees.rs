//! `fleet dev bench worktrees`: what worktree isolation costs. N isolated agents are started in
//! one reply, and then the same N without isolation; the difference is the price of creating
//! and removing N worktrees (and their branches) while they run side by side. Target: N = 50
//! under 5 s on this machine.
//!
//! It measures the real thing from outside: `fleet -p` runs as its own process (so its start-up
//! is in both figures alike and cancels out of the difference) in a temporary git repository
//! with a few files, against the fake model server (also its own process). The main agent's one
//! reply holds N Agent calls, each child answers with plain text and changes nothing, so every
//! isolated worktree must be removed when its child ends: after each isolated run the bench
//! checks that no worktree, no `fleet/agent-*` branch and no worktree record is left, and that
//! the checkout is clean. Runs alternate (plain, isolated, plain, …) so drift in the machine's
//! load touches both alike; medians are reported.

use super::{raise_file_limit, start_server};
use anyhow::{bail, Context};
use fleet_runtime::isolation::WorktreeManager;
use fleet_store::FleetHome;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct WorktreesArgs {
    /// N: agents in the main agent's one reply (each run, with and without isolation).
    #[arg(long, default_value_t = 50)]
    agents: usize,
    /// Runs of each kind, alternating; the medians are reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// The wall-time target for N = 50 isolated agents, from the issue.
const TARGET_S: f64 = 5.0;
/// In every child's prompt (its first user message), and in no main prompt.
const CHILD_MARK: &str = "BENCH-WT-CHILD";
const ISOLATED_MARK: &str = "BENCH-WT-ISOLATED";
const PLAIN_MARK: &str = "BENCH-WT-PLAIN";
/// Variables from the caller's environment that would point fleet elsewhere.
const SCRUBBED: &[&str] = &[
    "FLEET_PROVIDER",
    "FLEET_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FLEET_NO_SESSION_PERSISTENCE",
    "FLEET_MAX_CONCURRENT_SUBAGENTS",
];

/// What one `fleet -p` run did.
struct Run {
    wall_s: f64,
    completed: usize,
}

pub async fn worktrees(args: WorktreesArgs) -> anyhow::Result<()> {
    if args.agents == 0 || args.runs == 0 {
        bail!("--agents and --runs must be at least 1");
    }
    raise_file_limit();
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let root = dir
        .path()
        .canonicalize()
        .context("resolving the temporary folder")?;
    let repo = make_repo(&root)?;
    let scenario = root.join("worktrees.json");
    std::fs::write(&scenario, scenario_json(args.agents).to_string())
        .context("writing the scenario")?;
    let (mut server, base_url) = start_server(&scenario)?;
    let outcome = measure(&args, &root, &repo, &base_url).await;
    let _ = server.kill();
    let _ = server.wait();
    let figures = outcome?;
    if args.json {
        println!("{figures}");
    } else {
        let f = |key: &str| figures[key].as_f64().unwrap_or_default();
        println!(
            "worktrees: {} agents in one reply, median of {} runs each\n  isolated       {:.3} s\n  not isolated   {:.3} s\n  difference     {:+.3} s ({:+.1} ms per agent)\n  left behind    {} worktrees, {} branches, {} records\n  target         N = 50 isolated under {TARGET_S} s{}",
            args.agents,
            args.runs,
            f("isolated_wall_s"),
            f("plain_wall_s"),
            f("difference_s"),
            f("difference_per_agent_ms"),
            figures["left_behind"]["worktrees"],
            figures["left_behind"]["branches"],
            figures["left_behind"]["records"],
            match (args.agents, figures["under_target"].as_bool()) {
                (50, Some(true)) => ": met",
                (50, _) => ": MISSED",
                _ => " (run with --agents 50 to check it)",
            },
        );
    }
    if figures["left_behind"]["clean"] != true {
        bail!("the isolated runs left worktrees, branches, records or changes behind (see above)");
    }
    Ok(())
}

/// The main agent asks for N agents in one reply (isolated or not, by its prompt's mark), each
/// child answers at once, the main agent sums up.
fn scenario_json(agents: usize) -> Value {
    let calls = |isolated: bool| -> Vec<Value> {
        (0..agents)
            .map(|i| {
                let mut input = json!({
                    "description": format!("job {i}"),
                    "prompt": format!("{CHILD_MARK}: do job {i} and report."),
                });
                if isolated {
                    input["isolation"] = json!("worktree");
                }
                json!({"tool_use": {"name": "Agent", "input": input}})
            })
            .collect()
    };
    json!({
        "validate_requests": false,
        "request_log": "count_only",
        "cache": {"enabled": false},
        "rules": [
            {"name": "child", "when": {"marker": CHILD_MARK}, "respond": [{"text": "job done"}]},
            {"name": "summary", "when": {"has_tool_result": true},
             "respond": [{"text": "all jobs done"}]},
            {"name": "isolated", "when": {"marker": ISOLATED_MARK}, "respond": calls(true)},
            {"name": "plain", "when": {"marker": PLAIN_MARK}, "respond": calls(false)},
        ]
    })
}

/// A repository with a few files in one commit, like a small project.
fn make_repo(root: &Path) -> anyhow::Result<PathBuf> {
    let repo = root.join("repo");
    let files = [
        ("README.md", "# bench\n\nA small project.\n"),
        (
            "Cargo.toml",
            "[package]\nname = \"bench\"\nversion = \"0.1.0\"\n",
        ),
        ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        ("docs/notes.txt", "notes\n"),
        (".gitignore", "target/\n"),
    ];
    for (path, text) in files {
        let full = repo.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&full, text).with_context(|| format!("writing {}", full.display()))?;
    }
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "."])?;
    git(
        &repo,
        &[
            "-c",
            "user.name=fleet bench",
            "-c",
            "user.email=bench@fleet.invalid",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    )?;
    Ok(repo)
}

/// Runs git in `dir` without the user's global or system configuration; its stdout.
fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

async fn measure(
    args: &WorktreesArgs,
    root: &Path,
    repo: &Path,
    base_url: &str,
) -> anyhow::Result<Value> {
    let fleet_home = root.join("fleet-home");
    let home = root.join("home");
    std::fs::create_dir_all(&home).context("creating the bench HOME")?;
    let mut isolated = Vec::new();
    let mut plain = Vec::new();
    let mut left = Leftovers::default();
    for _ in 0..args.runs {
        plain.push(run_fleet(args.agents, false, repo, &home, &fleet_home, base_url).await?);
        isolated.push(run_fleet(args.agents, true, repo, &home, &fleet_home, base_url).await?);
        left = leftovers(repo, &fleet_home).await?;
        if !left.is_empty() {
            break;
        }
    }
    for run in plain.iter().chain(&isolated) {
        if run.completed != args.agents {
            bail!(
                "only {} of {} agents completed in a run",
                run.completed,
                args.agents
            );
        }
    }
    let iso = median(isolated.iter().map(|r| r.wall_s).collect());
    let base = median(plain.iter().map(|r| r.wall_s).collect());
    let difference = iso - base;
    Ok(json!({
        "agents": args.agents,
        "runs": args.runs,
        "isolated_wall_s": iso,
        "plain_wall_s": base,
        "difference_s": difference,
        "difference_per_agent_ms": difference * 1000.0 / args.agents as f64,
        "isolated_runs_s": isolated.iter().map(|r| r.wall_s).collect::<Vec<_>>(),
        "plain_runs_s": plain.iter().map(|r| r.wall_s).collect::<Vec<_>>(),
        "completed": isolated.last().map_or(0, |r| r.completed),
        "left_behind": {
            "worktrees": left.worktrees,
            "branches": left.branches,
            "records": left.records,
            "checkout_clean": left.checkout_clean,
            "clean": left.is_empty(),
        },
        "target_s": TARGET_S,
        "under_target": iso < TARGET_S,
    }))
}

/// One `fleet -p` run in `repo`; its wall time and how many children completed.
async fn run_fleet(
    agents: usize,
    isolated: bool,
    repo: &Path,
    home: &Path,
    fleet_home: &Path,
    base_url: &str,
) -> anyhow::Result<Run> {
    let exe = std::env::current_exe().context("finding the fleet binary")?;
    let mark = if isolated { ISOLATED_MARK } else { PLAIN_MARK };
    let mut cmd = Command::new(exe);
    cmd.args(["-p", &format!("{mark}: run the jobs.")])
        .args(["--permission-mode", "bypassPermissions"])
        .args(["--output-format", "stream-json", "--verbose"])
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home)
        .env("FLEET_HOME", fleet_home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("FLEET_MAX_CONCURRENT_SUBAGENTS", agents.to_string());
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .context("waiting for fleet")?
        .context("running fleet")?;
    let wall_s = started.elapsed().as_secs_f64();
    let kind = if isolated { "isolated" } else { "plain" };
    if !out.status.success() {
        bail!(
            "the {kind} run failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let completed = completed_children(&String::from_utf8_lossy(&out.stdout));
    Ok(Run { wall_s, completed })
}

/// How many of the main agent's Agent calls ended `completed`, from the stream-json output.
fn completed_children(stdout: &str) -> usize {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|l| l["type"] == "user" && l["parent_tool_use_id"].is_null())
        .filter(|l| {
            let result = &l["tool_use_result"];
            result.get("agentId").is_some() && result["status"] == "completed"
        })
        .count()
}

#[derive(Debug, Default)]
struct Leftovers {
    worktrees: usize,
    branches: usize,
    records: usize,
    checkout_clean: bool,
}

impl Leftovers {
    fn is_empty(&self) -> bool {
        self.worktrees == 0 && self.branches == 0 && self.records == 0 && self.checkout_clean
    }
}

/// What an isolated run left: worktrees git still lists besides the checkout, `fleet/agent-*`
/// branches, worktree records under the fleet home, and whether the checkout is clean.
async fn leftovers(repo: &Path, fleet_home: &Path) -> anyhow::Result<Leftovers> {
    let worktrees = git(repo, &["worktree", "list", "--porcelain"])?
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
        .saturating_sub(1);
    let branches = git(repo, &["branch", "--list", "fleet/agent-*"])?
        .lines()
        .count();
    let records = WorktreeManager::new(&FleetHome::at(fleet_home))
        .list()
        .await
        .context("listing the fleet worktrees")?
        .len();
    let checkout_clean = git(repo, &["status", "--porcelain"])?.trim().is_empty();
    Ok(Leftovers {
        worktrees,
        branches,
        records,
        checkout_clean,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_isolated_reply_asks_for_worktrees() {
        let scenario = scenario_json(2);
        let rules = scenario["rules"].as_array().unwrap_or_else(|| panic!());
        let inputs = |name: &str| -> Vec<Value> {
            rules
                .iter()
                .find(|r| r["name"] == name)
                .and_then(|r| r["respond"].as_array())
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| c["tool_use"]["input"].clone())
                        .collect()
                })
                .unwrap_or_default()
        };
        assert!(inputs("isolated")
            .iter()
            .all(|i| i["isolation"] == "worktree"));
        assert!(inputs("plain").iter().all(|i| i.get("isolation").is_none()));
        assert_eq!(inputs("plain").len(), 2);
        assert!(!ISOLATED_MARK.contains(CHILD_MARK) && !PLAIN_MARK.contains(CHILD_MARK));
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0]), 2.5);
    }
}
