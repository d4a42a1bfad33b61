//! `fleet dev bench fork`: what a fork saves over a fresh subagent, in billed input tokens.
//!
//! The main agent reads a file of H KiB, then delegates K directives in one reply. In phase
//! "fork" the calls name no agent type, so each child is a fork that inherits the
//! conversation — and, if the fork's request really begins with its parent's bytes, the prompt
//! cache. In phase "fresh" the calls name `general-purpose`, whose children see nothing of the
//! conversation, so each prompt carries the file itself. Each phase runs against its own fake
//! model server (a separate process, so no cache carries over), whose prompt-cache simulation
//! splits every request's input into fresh, cache-written and cache-read tokens as the API
//! would. The figures come from the usage the children's replies report on the event stream,
//! not from any estimate of our own.

use super::fork_report::{
    render, share, ChildFigures, PhaseFigures, Report, Totals, CACHE_READ_FACTOR,
    CACHE_WRITE_FACTOR, TARGET_SHARE,
};
use super::session;
use super::{raise_file_limit, start_server, CHILD_MARK};
use anyhow::{bail, Context};
use fleet_protocol::{EventKind, SubagentLabel, Usage};
use fleet_runtime::subagent::{Features, Orchestration, FORK_TAG, FORK_TYPE};
use fleet_runtime::SpawnLimits;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct ForkArgs {
    /// How many children the main agent starts in its one delegating reply.
    #[arg(long, default_value_t = 4)]
    forks: usize,
    /// Size of the file the main agent reads first, in KiB: the history the children share.
    #[arg(long, default_value_t = 64)]
    history_kb: usize,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// The Read tool shows at most 256 KiB per call, line numbers included; this leaves room
/// for them so the whole file is read in one call.
const MAX_HISTORY_KB: usize = 192;

/// Opens the history file; the rule that makes the delegating reply looks for it in the
/// Read result.
const FILE_MARKER: &str = "fleet-bench-fork history";

/// How the main agent delegates in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// No `subagent_type`: the child inherits the conversation.
    Fork,
    /// `general-purpose`, with the file pasted into each prompt.
    Fresh,
}

impl Phase {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Fork => "fork",
            Self::Fresh => "fresh",
        }
    }

    /// The agent type the runtime must report for this phase's children; anything else
    /// means the calls were not run as intended and the figures would mislead.
    pub(super) fn child_type(self) -> &'static str {
        match self {
            Self::Fork => FORK_TYPE,
            Self::Fresh => "general-purpose",
        }
    }
}

/// The shared file and the directives, the same in both phases.
struct Workload {
    history: String,
    lines: usize,
    directives: Vec<String>,
}

impl Workload {
    fn new(forks: usize, history_kb: usize) -> Self {
        let history = history_text(history_kb * 1024);
        let lines = history.lines().count();
        let directives = (0..forks).map(|i| directive(i, forks)).collect();
        Self {
            history,
            lines,
            directives,
        }
    }

    fn description(i: usize) -> String {
        format!("review part {}", i + 1)
    }

    /// The Agent call of child `i`, as the main agent writes it in `phase`.
    fn agent_call(&self, phase: Phase, i: usize, file: &Path) -> Value {
        let directive = &self.directives[i];
        let input = match phase {
            Phase::Fork => json!({
                "description": Self::description(i),
                "prompt": directive,
            }),
            Phase::Fresh => json!({
                "description": Self::description(i),
                "subagent_type": Phase::Fresh.child_type(),
                "prompt": format!(
                    "{directive}\n\nThe file {}, as it is now:\n\n{}",
                    file.display(),
                    self.history
                ),
            }),
        };
        json!({"tool_use": {"name": "Agent", "input": input}})
    }

    /// The script: the main agent reads the file, delegates, waits, sums up; each child
    /// answers once. Rules match first-come, so the children's rules go first (a fork's
    /// request also holds the file's Read result and tool results of its own).
    fn scenario(&self, phase: Phase, file: &Path) -> Value {
        let calls: Vec<Value> = (0..self.directives.len())
            .map(|i| self.agent_call(phase, i, file))
            .collect();
        json!({
            "request_log": "count_only",
            "cache": {"enabled": true, "min_tokens": 1024},
            "rules": [
                {"name": "fork-child", "when": {"last_user_contains": FORK_TAG},
                 "respond": [{"text": "Fork done: two findings, at lines 12 and 40."}]},
                {"name": "fresh-child", "when": {"system_contains": CHILD_MARK},
                 "respond": [{"text": "Done: two findings, at lines 12 and 40."}]},
                {"name": "sum-up", "when": {"last_user_contains": "<task-notification>"},
                 "respond": [{"text": "The reviews are in."}]},
                {"name": "delegate", "when": {"tool_result_contains": FILE_MARKER},
                 "respond": calls},
                {"name": "wait", "when": {"has_tool_result": true},
                 "respond": [{"text": "Waiting for the reviews."}]},
                {"name": "read", "respond": [{"tool_use": {"name": "Read", "input": {
                    "file_path": file.display().to_string(),
                    "limit": self.lines,
                }}}]},
            ]
        })
    }
}

/// Source-like text of exactly `bytes` bytes (ASCII, ending in a newline): varied enough to
/// look like a real file, deterministic so runs compare.
fn history_text(bytes: usize) -> String {
    const VERBS: [&str; 8] = [
        "parse", "merge", "score", "flush", "index", "render", "verify", "split",
    ];
    const NOUNS: [&str; 7] = [
        "record", "ledger", "batch", "window", "header", "segment", "span",
    ];
    let mut out = format!("//! {FILE_MARKER}: generated source for `fleet dev bench fork`.\n\n");
    let mut i = 0usize;
    while out.len() < bytes {
        let verb = VERBS[i % VERBS.len()];
        let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
        let seed = i.wrapping_mul(2_654_435_761) % 1_000_003;
        let modulus = 1_000 + (i * 7919) % 90_000;
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "/// {verb}s one {noun} (case {i}) and keeps the running total in range.\n\
             pub fn {verb}_{noun}_{i}(input: &[u8], seed: u64) -> u64 {{\n\
             \x20   let mut acc = seed ^ {seed};\n\
             \x20   for (pos, byte) in input.iter().enumerate() {{\n\
             \x20       acc = acc.wrapping_mul(31).wrapping_add(u64::from(*byte) + pos as u64);\n\
             \x20   }}\n\
             \x20   acc % {modulus}\n\
             }}\n\n"
        );
        i += 1;
    }
    out.truncate(bytes - 1);
    out.push('\n');
    out
}

/// A short directive (~110 bytes), distinct for each child.
fn directive(i: usize, forks: usize) -> String {
    const TOPICS: [&str; 6] = [
        "overflow in the accumulators",
        "seeds that are never used",
        "duplicated loop bodies",
        "unexplained magic numbers",
        "doc comments that do not match",
        "names that hide what a function does",
    ];
    format!(
        "Review part {} of {forks} of the file for {}; list each finding with its line and a fix.",
        i + 1,
        TOPICS[i % TOPICS.len()]
    )
}

pub(super) async fn fork(args: ForkArgs) -> anyhow::Result<()> {
    if args.forks == 0 {
        bail!("--forks must be at least 1 (it is how many children the main agent starts)");
    }
    if args.history_kb == 0 || args.history_kb > MAX_HISTORY_KB {
        bail!(
            "--history-kb must be between 1 and {MAX_HISTORY_KB} (got {}): the main agent reads \
             the file in one Read call, which shows at most 256 KiB",
            args.history_kb
        );
    }
    raise_file_limit();
    let work = Workload::new(args.forks, args.history_kb);
    let fork = run_phase(Phase::Fork, &work).await?;
    let fresh = run_phase(Phase::Fresh, &work).await?;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let report = Report {
        forks: args.forks,
        history_kb: args.history_kb,
        history_bytes: work.history.len(),
        multipliers: json!({
            "input": 1.0,
            "cache_write": CACHE_WRITE_FACTOR,
            "cache_read": CACHE_READ_FACTOR,
        }),
        target_share: TARGET_SHARE,
        billed_ratio: ratio(fork.children_total.billed, fresh.children_total.billed),
        session_billed_ratio: ratio(fork.session_total.billed, fresh.session_total.billed),
        every_fork_reached_target: fork
            .children
            .iter()
            .all(|c| c.cache_read_share >= TARGET_SHARE),
        fork,
        fresh,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

/// Runs one phase in its own folder against its own fake server.
async fn run_phase(phase: Phase, work: &Workload) -> anyhow::Result<PhaseFigures> {
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let root = dir
        .path()
        .canonicalize()
        .context("resolving the temporary folder")?;
    let project = root.join("project");
    std::fs::create_dir_all(&project).context("creating the project folder")?;
    let file = project.join("history.rs");
    std::fs::write(&file, &work.history).context("writing the history file")?;
    let scenario = root.join("scenario.json");
    std::fs::write(&scenario, work.scenario(phase, &file).to_string())
        .context("writing the scenario")?;
    let (mut server, base_url) = start_server(&scenario)?;
    let outcome = run_session(phase, work, &project, &base_url).await;
    let _ = server.kill();
    let _ = server.wait();
    outcome.with_context(|| format!("phase {:?}", phase.name()))
}

/// Runs the main agent to its end and reads the children's usage off the event stream.
async fn run_session(
    phase: Phase,
    work: &Workload,
    project: &Path,
    base_url: &str,
) -> anyhow::Result<PhaseFigures> {
    let forks = work.directives.len();
    let system = format!(
        "You are a coding agent working in {}. Delegate reviews to other agents when asked.",
        project.display()
    );
    let prepared = session::prepare(base_url, project, &system, |mut config| {
        // All K children run at once, whatever FLEET_MAX_CONCURRENT_SUBAGENTS says.
        config.limits.spawn = SpawnLimits {
            max_concurrent: forks,
            ..SpawnLimits::default()
        };
        config.children.features = Features {
            orchestration: Orchestration::Fork,
            ..Features::default()
        };
        config
    })?;
    let spawner = prepared.spawner.clone();
    let mut handle = prepared
        .start("Read history.rs, then have it reviewed part by part in parallel.")
        .await?;
    // Each child's label and the usage of its first reply, by agent id.
    let mut first: HashMap<String, (Arc<SubagentLabel>, Usage)> = HashMap::new();
    let mut session_total = Totals::default();
    let mut parent_request_tokens = 0;
    while let Some(event) = handle.recv().await {
        let EventKind::MessageCommitted(committed) = &event.kind else {
            continue;
        };
        let Some(reply) = &committed.reply else {
            continue;
        };
        session_total.add(&reply.usage);
        let delegates = committed.message.tool_uses().any(|c| c.name == "Agent");
        if event.agent.is_main() && delegates {
            parent_request_tokens = reply.usage.total_input();
        }
        if let Some(label) = &event.agent.subagent {
            first
                .entry(event.agent.agent_id.clone())
                .or_insert_with(|| (label.clone(), reply.usage.clone()));
        }
    }
    let stats = spawner.ledger().stats();
    if stats.completed != forks as u64 || first.len() != forks {
        bail!(
            "{} of {forks} children completed and {} replied ({} failed, refused {:?})",
            stats.completed,
            first.len(),
            stats.failed,
            stats.refused
        );
    }
    let mut children = Vec::with_capacity(forks);
    let mut children_total = Totals::default();
    for description in (0..forks).map(Workload::description) {
        let Some((agent_id, (label, usage))) = first
            .iter()
            .find(|(_, (l, _))| l.description == description)
        else {
            bail!("no child reported for {description:?}");
        };
        if label.subagent_type != phase.child_type() {
            bail!(
                "{description:?} ran as {:?}, not {:?}: the Agent call was not run as this \
                 phase intends",
                label.subagent_type,
                phase.child_type()
            );
        }
        let mut tokens = Totals::default();
        tokens.add(usage);
        children_total.add(usage);
        children.push(ChildFigures {
            description,
            agent_id: agent_id.clone(),
            subagent_type: label.subagent_type.clone(),
            tokens,
            cache_read_share: share(usage),
        });
    }
    Ok(PhaseFigures {
        children,
        children_total,
        session_total,
        parent_request_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_has_the_asked_size_and_the_marker() {
        for kb in [1, 7, 64] {
            let text = history_text(kb * 1024);
            assert_eq!(text.len(), kb * 1024);
            assert!(text.ends_with('\n') && text.contains(FILE_MARKER));
        }
    }

    #[test]
    fn directives_are_short_and_distinct() {
        let work = Workload::new(8, 1);
        for (i, d) in work.directives.iter().enumerate() {
            assert!((80..=140).contains(&d.len()), "{d:?} is {} bytes", d.len());
            assert!(!work.directives[..i].contains(d));
        }
    }
}
