//! `fleet dev bench sandbox`: what the OS sandbox adds to one Bash call.
//!
//! The real Bash tool runs a trivial command N times in each of four ways, interleaved so that
//! drift in the machine's load touches them alike: `true` unconfined and under the read-only
//! policy, and `touch src/probe` unconfined and under a writable policy with a few denied
//! paths (protected `.git`, a `Read(./.env)` and an `Edit(./secret)` rule, the default
//! credential stores). It reports the median and 90th percentile of each, and the difference
//! of each sandboxed way from its unconfined twin. The target is under 5 ms.

use anyhow::{bail, Context};
use fleet_tools::builtin::BashTool;
use fleet_tools::permissions::{PermissionMode, Permissions, RuleKind, RuleSet};
use fleet_tools::sandbox::{AgentSandbox, SandboxConfig, SandboxKind};
use fleet_tools::{Tool, ToolContext, Workspace};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// Calls per way of running.
    #[arg(long, default_value_t = 200)]
    runs: usize,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

struct Case {
    name: &'static str,
    command: &'static str,
    ctx: ToolContext,
    millis: Vec<f64>,
}

pub async fn sandbox(args: SandboxArgs) -> anyhow::Result<()> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let root = dir
        .path()
        .canonicalize()
        .context("resolving the temp folder")?;
    let project = root.join("project");
    for sub in ["project/.git", "project/src", "project/secret", "home/.ssh"] {
        std::fs::create_dir_all(root.join(sub)).context("creating the bench project")?;
    }
    std::fs::write(project.join(".env"), "KEY=1\n").context("writing .env")?;
    let permissions = bench_permissions(&project, &root.join("home"))?;
    let config = Arc::new(SandboxConfig {
        enabled: true,
        ..SandboxConfig::default()
    });
    let context = |kind: SandboxKind| {
        let sandbox = AgentSandbox::new(kind, config.clone(), Some(permissions.clone()));
        ToolContext::new(project.clone(), permissions.workspace.clone())
            .with_sandbox(Arc::new(sandbox))
    };
    let unconfined = || {
        ToolContext::new(project.clone(), permissions.workspace.clone())
            .with_sandbox(Arc::new(AgentSandbox::unconfined()))
    };
    let mut cases = [
        Case {
            name: "unsandboxed",
            command: "true",
            ctx: unconfined(),
            millis: Vec::new(),
        },
        Case {
            name: "read_only",
            command: "true",
            ctx: context(SandboxKind::ReadOnly),
            millis: Vec::new(),
        },
        Case {
            name: "unsandboxed_write",
            command: "touch src/probe",
            ctx: unconfined(),
            millis: Vec::new(),
        },
        Case {
            name: "writable",
            command: "touch src/probe",
            ctx: context(SandboxKind::Standard),
            millis: Vec::new(),
        },
    ];
    for case in &cases {
        let plan = case.ctx.sandbox.plan(case.command, &project)?;
        let confined = plan.policy.is_some();
        if confined != (case.name == "read_only" || case.name == "writable") {
            bail!(
                "{}: expected the command {}to be sandboxed; is Landlock available here?",
                case.name,
                if confined { "not " } else { "" }
            );
        }
    }
    let tool = BashTool::default();
    let warmup = 5.min(args.runs);
    for round in 0..warmup + args.runs {
        for case in &mut cases {
            let started = Instant::now();
            let out = tool
                .call(json!({ "command": case.command }), &case.ctx)
                .await
                .with_context(|| format!("{}: the Bash call failed", case.name))?;
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            if out.is_error {
                bail!("{}: `{}` failed: {}", case.name, case.command, out.content);
            }
            if round >= warmup {
                case.millis.push(elapsed);
            }
        }
    }
    let figures = report(&mut cases, args.runs);
    if args.json {
        println!("{figures}");
    } else {
        println!("sandbox: {} Bash calls per way", args.runs);
        for case in &cases {
            let f = &figures[case.name];
            println!(
                "  {:<18} median {:>6.2} ms  p90 {:>6.2} ms",
                case.name,
                f["median_ms"].as_f64().unwrap_or_default(),
                f["p90_ms"].as_f64().unwrap_or_default()
            );
        }
        println!(
            "  added by the sandbox: read-only {:+.2} ms, writable {:+.2} ms (median; target < 5 ms)",
            figures["read_only_overhead_ms"].as_f64().unwrap_or_default(),
            figures["writable_overhead_ms"].as_f64().unwrap_or_default(),
        );
    }
    Ok(())
}

fn bench_permissions(project: &Path, home: &Path) -> anyhow::Result<Arc<Permissions>> {
    let mut rules = RuleSet::default();
    for rule in ["Read(./.env)", "Edit(./secret)"] {
        rules.add(RuleKind::Deny, rule, project.to_path_buf(), "bench")?;
    }
    let mut permissions = Permissions::new(
        PermissionMode::BypassPermissions,
        rules,
        Arc::new(Workspace::new(project)),
    );
    permissions.home = Some(home.to_path_buf());
    Ok(Arc::new(permissions))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn report(cases: &mut [Case], runs: usize) -> Value {
    let mut figures = json!({ "runs": runs });
    for case in cases.iter_mut() {
        case.millis.sort_by(f64::total_cmp);
        figures[case.name] = json!({
            "command": case.command,
            "median_ms": percentile(&case.millis, 0.5),
            "p90_ms": percentile(&case.millis, 0.9),
        });
    }
    let median = |name: &str| figures[name]["median_ms"].as_f64().unwrap_or_default();
    let read_only = median("read_only") - median("unsandboxed");
    let writable = median("writable") - median("unsandboxed_write");
    figures["read_only_overhead_ms"] = json!(read_only);
    figures["writable_overhead_ms"] = json!(writable);
    figures
}
