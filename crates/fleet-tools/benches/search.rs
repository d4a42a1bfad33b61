//! Glob and Grep against ripgrep on a large real tree.
//!
//! Run it with `scripts/bench-search.sh`, which installs `rg` when missing. The tree is
//! `$FLEET_BENCH_TREE`, else `$CARGO_HOME/registry/src` (every crate cargo has downloaded);
//! `FLEET_BENCH_ITERS` sets the timed runs per case (default 7, after one warm-up run),
//! `FLEET_BENCH_RG` the `rg` binary (default: `rg` on PATH), and `FLEET_BENCH_READ_GUARD=1`
//! gives the tools a read guard (two deny rules and the credential stores) to measure its cost.
//!
//! Like is compared with like: `rg` gets `--hidden` (fleet searches hidden files), the tree as
//! an absolute path (fleet prints absolute paths) and writes its whole output to a pipe that
//! the bench reads; fleet's time is a whole tool call, formatting included. `rg` also pays for
//! starting a process (about a millisecond). The tree should hold no `.git` folder, which
//! fleet skips and `rg --hidden` would search.

use fleet_tools::builtin::{GlobTool, GrepTool};
use fleet_tools::permissions::{PermissionMode, Permissions, ReadGuard, RuleKind, RuleSet};
use fleet_tools::{Tool, ToolContext, ToolOutput, Workspace};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Case {
    name: &'static str,
    tool: &'static dyn Tool,
    input: Value,
    rg_args: &'static [&'static str],
    /// How many results fleet found, read from its output, to check both did the same work.
    fleet_count: fn(&ToolOutput) -> u64,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "Glob **/*.rs",
            tool: &GlobTool,
            input: json!({"pattern": "**/*.rs"}),
            rg_args: &["--files", "--hidden", "-g", "**/*.rs"],
            fleet_count: glob_total,
        },
        Case {
            name: "Glob **/Cargo.toml",
            tool: &GlobTool,
            input: json!({"pattern": "**/Cargo.toml"}),
            rg_args: &["--files", "--hidden", "-g", "**/Cargo.toml"],
            fleet_count: glob_total,
        },
        Case {
            name: "Grep files 'fn main'",
            tool: &GrepTool,
            input: json!({"pattern": "fn main"}),
            rg_args: &["-l", "--hidden", "fn main"],
            fleet_count: num_files,
        },
        Case {
            name: "Grep files -i 'todo'",
            tool: &GrepTool,
            input: json!({"pattern": "todo", "-i": true}),
            rg_args: &["-l", "--hidden", "-i", "todo"],
            fleet_count: num_files,
        },
        Case {
            name: "Grep content -n 'unsafe'",
            tool: &GrepTool,
            input: json!({"pattern": "unsafe", "output_mode": "content"}),
            rg_args: &["-n", "--hidden", "unsafe"],
            fleet_count: num_matches,
        },
        Case {
            name: "Grep count 'unsafe'",
            tool: &GrepTool,
            input: json!({"pattern": "unsafe", "output_mode": "count"}),
            rg_args: &["--count", "--hidden", "unsafe"],
            fleet_count: num_files,
        },
        Case {
            name: "Grep content rust -C2 'impl.*Drop for'",
            tool: &GrepTool,
            input: json!({"pattern": "impl.*Drop for", "type": "rust", "-C": 2, "output_mode": "content"}),
            rg_args: &["-n", "--hidden", "-t", "rust", "-C", "2", "impl.*Drop for"],
            fleet_count: num_matches,
        },
    ]
}

/// Glob shows at most 100 paths; its truncation note carries the full count.
fn glob_total(out: &ToolOutput) -> u64 {
    let shown = out.content.lines().filter(|l| l.starts_with('/')).count() as u64;
    out.content
        .split(" of ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(shown)
}

fn num_files(out: &ToolOutput) -> u64 {
    structured_u64(out, "numFiles")
}

fn num_matches(out: &ToolOutput) -> u64 {
    structured_u64(out, "numMatches")
}

fn structured_u64(out: &ToolOutput, key: &str) -> u64 {
    out.structured
        .as_ref()
        .and_then(|s| s[key].as_u64())
        .unwrap_or(0)
}

/// What one rg run prints that corresponds to fleet's count: lines, except in `-n` mode where
/// only match lines (`path:N:`) count, not context lines or `--`.
fn rg_count(args: &[&str], stdout: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(stdout);
    let numbered = args.contains(&"-n");
    text.lines()
        .filter(|line| !numbered || is_match_line(line))
        .count() as u64
}

fn is_match_line(line: &str) -> bool {
    // `/abs/path:12:text` is a match; `/abs/path-12-text` is context.
    line.split(':')
        .nth(1)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn default_tree() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"));
    cargo_home.join("registry").join("src")
}

/// One fleet call: its time and its result count.
fn run_fleet(rt: &tokio::runtime::Runtime, case: &Case, ctx: &ToolContext) -> (Duration, u64) {
    let start = Instant::now();
    let out = rt.block_on(case.tool.call(case.input.clone(), ctx));
    let elapsed = start.elapsed();
    match out {
        Ok(out) => (elapsed, (case.fleet_count)(&out)),
        Err(err) => panic!("{}: {err}", case.name),
    }
}

/// One rg run: its time and its result count, or `None` when rg cannot run.
fn run_rg(rg: &str, case: &Case, tree: &Path) -> Option<(Duration, u64)> {
    let start = Instant::now();
    let out = Command::new(rg)
        .args(case.rg_args)
        .arg(tree)
        .output()
        .ok()?;
    Some((start.elapsed(), rg_count(case.rg_args, &out.stdout)))
}

/// Medians and best times of one case. Fleet and rg runs alternate, so that load from
/// elsewhere on the machine falls on both alike.
struct Timing {
    fleet: Vec<Duration>,
    rg: Vec<Duration>,
    fleet_count: u64,
    rg_count: Option<u64>,
}

fn time_case(
    rt: &tokio::runtime::Runtime,
    rg: Option<&str>,
    case: &Case,
    ctx: &ToolContext,
    tree: &Path,
    iters: usize,
) -> Timing {
    let mut timing = Timing {
        fleet: Vec::with_capacity(iters),
        rg: Vec::with_capacity(iters),
        fleet_count: 0,
        rg_count: None,
    };
    for i in 0..=iters {
        let (fleet, fleet_count) = run_fleet(rt, case, ctx);
        let rg_run = rg.and_then(|rg| run_rg(rg, case, tree));
        timing.fleet_count = fleet_count;
        timing.rg_count = rg_run.map(|(_, n)| n);
        // The first round only warms the page cache.
        if i > 0 {
            timing.fleet.push(fleet);
            timing.rg.extend(rg_run.map(|(t, _)| t));
        }
    }
    timing
}

fn main() {
    let tree = std::env::var_os("FLEET_BENCH_TREE")
        .map(PathBuf::from)
        .unwrap_or_else(default_tree);
    let Ok(tree) = tree.canonicalize() else {
        eprintln!(
            "bench tree {} does not exist; set FLEET_BENCH_TREE",
            tree.display()
        );
        std::process::exit(2);
    };
    let iters: usize = std::env::var("FLEET_BENCH_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(7);
    let rg = std::env::var("FLEET_BENCH_RG").unwrap_or_else(|_| "rg".into());
    let rg_version = Command::new(&rg)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut ctx = ToolContext::new(tree.clone(), Arc::new(Workspace::new(&tree)));
    let guarded = std::env::var("FLEET_BENCH_READ_GUARD").is_ok_and(|v| v == "1");
    if guarded {
        // What an agent with two deny rules pays: every walked entry is checked against the
        // rules and the credential stores.
        let mut rules = RuleSet::default();
        for rule in ["Read(./.env)", "Read(**/*.pem)"] {
            rules
                .add(RuleKind::Deny, rule, tree.clone(), "bench")
                .expect("rule");
        }
        let permissions = Permissions::new(PermissionMode::Default, rules, ctx.workspace.clone());
        ctx = ctx.with_read_guard(Arc::new(ReadGuard::for_agent(&permissions, &tree)));
    }

    println!(
        "tree: {}{}",
        tree.display(),
        if guarded {
            " (read guard: 2 deny rules + credential stores)"
        } else {
            ""
        }
    );
    println!(
        "rg: {}; {iters} timed runs per case after one warm-up; medians",
        rg_version
            .as_deref()
            .unwrap_or("not found (fleet timings only)")
    );
    println!();
    println!(
        "{:<40} {:>9} {:>9} {:>9} {:>9} {:>9} {:>16}",
        "case", "fleet ms", "rg ms", "fleet/rg", "best f/r", "best rg", "results fleet/rg"
    );
    for case in cases() {
        let timing = time_case(
            &rt,
            rg_version.as_ref().map(|_| rg.as_str()),
            &case,
            &ctx,
            &tree,
            iters,
        );
        let fleet_best = timing.fleet.iter().min().copied().unwrap_or_default();
        let fleet = median(timing.fleet);
        match timing.rg_count {
            Some(rg_n) if !timing.rg.is_empty() => {
                let rg_best = timing.rg.iter().min().copied().unwrap_or_default();
                let rg_time = median(timing.rg);
                let fleet_n = timing.fleet_count;
                println!(
                    "{:<40} {:>9.1} {:>9.1} {:>8.2}x {:>8.2}x {:>9.1} {:>16}",
                    case.name,
                    ms(fleet),
                    ms(rg_time),
                    fleet.as_secs_f64() / rg_time.as_secs_f64(),
                    fleet_best.as_secs_f64() / rg_best.as_secs_f64(),
                    ms(rg_best),
                    format!(
                        "{fleet_n}/{rg_n}{}",
                        if fleet_n == rg_n { "" } else { " !" }
                    )
                );
            }
            _ => println!(
                "{:<40} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>16}",
                case.name,
                ms(fleet),
                "-",
                "-",
                "-",
                "-",
                timing.fleet_count
            ),
        }
    }
}
