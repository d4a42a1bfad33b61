//! The fork bench's figures: what each child's first request cost, summed and billed, and
//! how they are printed.

use super::fork::Phase;
use fleet_protocol::Usage;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// What counts as a fork that reused its parent's cache (the target for H ≥ 32).
pub(super) const TARGET_SHARE: f64 = 0.95;

/// Anthropic's price of cache writes and reads relative to fresh input.
pub(super) const CACHE_WRITE_FACTOR: f64 = 1.25;
pub(super) const CACHE_READ_FACTOR: f64 = 0.1;

/// One child's first request, as its reply's usage reports it.
#[derive(Debug, Serialize)]
pub(super) struct ChildFigures {
    pub(super) description: String,
    pub(super) agent_id: String,
    pub(super) subagent_type: String,
    #[serde(flatten)]
    pub(super) tokens: Totals,
    /// cache_read / (input + cache_creation + cache_read).
    pub(super) cache_read_share: f64,
}

/// Input tokens summed over some requests: raw, and billed as token-equivalents.
#[derive(Debug, Default, Serialize)]
pub(super) struct Totals {
    pub(super) requests: u64,
    pub(super) input_tokens: u64,
    pub(super) cache_creation_input_tokens: u64,
    pub(super) cache_read_input_tokens: u64,
    pub(super) billed: f64,
}

impl Totals {
    pub(super) fn add(&mut self, usage: &Usage) {
        self.requests += 1;
        self.input_tokens += usage.input_tokens;
        self.cache_creation_input_tokens += usage.cache_creation();
        self.cache_read_input_tokens += usage.cache_read();
        self.billed += billed(usage);
    }
}

pub(super) fn billed(usage: &Usage) -> f64 {
    usage.input_tokens as f64
        + CACHE_WRITE_FACTOR * usage.cache_creation() as f64
        + CACHE_READ_FACTOR * usage.cache_read() as f64
}

pub(super) fn share(usage: &Usage) -> f64 {
    match usage.total_input() {
        0 => 0.0,
        total => usage.cache_read() as f64 / total as f64,
    }
}

#[derive(Debug, Serialize)]
pub(super) struct PhaseFigures {
    /// Each child's first request, in the order the main agent asked for them.
    pub(super) children: Vec<ChildFigures>,
    /// The children's first requests together: the cost of handing the work over.
    pub(super) children_total: Totals,
    /// Every request of the phase, the main agent's included.
    pub(super) session_total: Totals,
    /// All input of the main agent's request whose reply made the Agent calls: what a fork
    /// whose request begins with its parent's bytes finds in the cache at the least.
    pub(super) parent_request_tokens: u64,
}

#[derive(Debug, Serialize)]
pub(super) struct Report {
    pub(super) forks: usize,
    pub(super) history_kb: usize,
    pub(super) history_bytes: usize,
    pub(super) multipliers: Value,
    pub(super) target_share: f64,
    pub(super) fork: PhaseFigures,
    pub(super) fresh: PhaseFigures,
    /// Billed tokens of the fork children over those of the fresh children.
    pub(super) billed_ratio: f64,
    /// The same over every request of each phase.
    pub(super) session_billed_ratio: f64,
    pub(super) every_fork_reached_target: bool,
}

/// The human-readable report.
pub(super) fn render(r: &Report) -> String {
    let mut out = format!(
        "fork bench: {} children, {} KiB history ({} bytes)\n\
         billed = input x1 + cache writes x{CACHE_WRITE_FACTOR} + cache reads x{CACHE_READ_FACTOR}\n",
        r.forks, r.history_kb, r.history_bytes
    );
    let row = |out: &mut String, label: &str, t: &Totals, share: String, tail: String| {
        let (input, write, read) = (
            t.input_tokens,
            t.cache_creation_input_tokens,
            t.cache_read_input_tokens,
        );
        let billed = t.billed;
        let _ = writeln!(
            out,
            "  {label:<16} {input:>8} {write:>12} {read:>11} {share:>10} {billed:>10.1}{tail}"
        );
    };
    for (phase, figures) in [(Phase::Fork, &r.fork), (Phase::Fresh, &r.fresh)] {
        let _ = writeln!(
            out,
            "\nphase {} ({} children; the delegating request held {} input tokens)\n  \
             {:<16} {:>8} {:>12} {:>11} {:>10} {:>10}",
            phase.name(),
            phase.child_type(),
            figures.parent_request_tokens,
            "child",
            "input",
            "cache write",
            "cache read",
            "read share",
            "billed"
        );
        for c in &figures.children {
            let share = format!("{:.1}%", c.cache_read_share * 100.0);
            row(&mut out, &c.description, &c.tokens, share, String::new());
        }
        for (label, t) in [
            ("children", &figures.children_total),
            ("whole session", &figures.session_total),
        ] {
            let tail = format!("   ({} requests)", t.requests);
            row(&mut out, label, t, String::new(), tail);
        }
    }
    let reached = if r.every_fork_reached_target {
        "yes"
    } else {
        "no"
    };
    let _ = writeln!(
        out,
        "\nbilled fork / fresh: children {:.3}, whole session {:.3}\n\
         every fork read >= {:.0}% from cache: {reached}",
        r.billed_ratio,
        r.session_billed_ratio,
        TARGET_SHARE * 100.0,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billing_weighs_writes_up_and_reads_down() {
        let usage = Usage {
            input_tokens: 10,
            cache_creation_input_tokens: Some(100),
            cache_read_input_tokens: Some(1000),
            output_tokens: 5,
            unreported: false,
        };
        assert!((billed(&usage) - (10.0 + 125.0 + 100.0)).abs() < 1e-9);
        assert!((share(&usage) - 1000.0 / 1110.0).abs() < 1e-9);
        assert_eq!(share(&Usage::default()), 0.0);
    }
}
