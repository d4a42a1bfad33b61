//! The team bench's figures: a fixed-size latency histogram (so recording 100,000 deliveries
//! costs no more memory than recording 100, and the bench's own bookkeeping cannot make memory
//! grow with M), and the per-phase report and how it is printed.

use super::team::Io;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// The latency the issue asks for at 50 members and 100,000 messages.
pub(super) const TARGET_P99_MS: f64 = 10.0;

/// Bucket width ratio: each bucket is 1% wider than the one below, so a percentile read from
/// the histogram is within 1% of the exact one.
const RATIO: f64 = 1.01;
/// Everything under a microsecond shares bucket 0.
const FLOOR_NS: f64 = 1_000.0;
/// 1 µs · 1.01^2100 ≈ 1,200 s: far beyond any latency the bench can see.
const BUCKETS: usize = 2100;

/// Delivery latencies, in log-spaced buckets, plus the exact maximum and sum.
#[derive(Debug, Clone)]
pub(super) struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
            max_ns: 0,
            sum_ns: 0,
        }
    }
}

impl Histogram {
    pub(super) fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        let index = if (ns as f64) < FLOOR_NS {
            0
        } else {
            1 + ((ns as f64 / FLOOR_NS).ln() / RATIO.ln()) as usize
        };
        self.counts[index.min(BUCKETS - 1)] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
    }

    pub(super) fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.total += other.total;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
    }

    /// The latency below which a share `q` of the deliveries fell, in milliseconds: the upper
    /// edge of the bucket holding that rank (never above the exact maximum).
    fn quantile_ms(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((self.total as f64 * q).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let upper_ns = FLOOR_NS * RATIO.powi(index as i32);
                return upper_ns.min(self.max_ns as f64) / 1e6;
            }
        }
        self.max_ns as f64 / 1e6
    }

    pub(super) fn summary(&self) -> Latency {
        Latency {
            p50_ms: self.quantile_ms(0.50),
            p99_ms: self.quantile_ms(0.99),
            max_ms: self.max_ns as f64 / 1e6,
            mean_ms: match self.total {
                0 => 0.0,
                n => self.sum_ns as f64 / n as f64 / 1e6,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct Latency {
    pub(super) p50_ms: f64,
    pub(super) p99_ms: f64,
    pub(super) max_ms: f64,
    pub(super) mean_ms: f64,
}

/// One run of N members sending M messages each.
#[derive(Debug, Serialize)]
pub(super) struct PhaseFigures {
    /// `unpaced` (every sender as fast as it can) or `paced` (a fixed total rate).
    pub(super) mode: &'static str,
    pub(super) messages_per_member: usize,
    pub(super) messages: u64,
    /// For `paced`: the total rate the senders were held to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) offered_per_s: Option<f64>,
    pub(super) wall_s: f64,
    pub(super) messages_per_s: f64,
    /// From the start of `append` to the receiver holding the entry from `unread()`.
    pub(super) latency: Latency,
    pub(super) p99_under_target: bool,
    /// This process's peak RSS during the phase (the peak is reset before it starts when
    /// the kernel allows; see `peak_reset`).
    pub(super) peak_rss_mb: f64,
    /// Every message arrived once, at its addressee, in its sender's order.
    pub(super) delivered: u64,
    pub(super) exactly_once: bool,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    pub(super) members: usize,
    /// M: messages each member sends (the total is members × M).
    pub(super) messages_per_member: usize,
    pub(super) body_bytes: usize,
    /// Where the mailbox calls ran (`inline` is what the runtime does).
    pub(super) io: Io,
    pub(super) worker_threads: usize,
    /// Whether `/proc/self/clear_refs` reset the peak RSS before each phase; if not, each
    /// phase's peak includes the phases before it.
    pub(super) peak_reset: bool,
    pub(super) baseline_rss_mb: f64,
    /// The same unpaced run at a tenth of M, to show memory does not grow with M.
    pub(super) small: PhaseFigures,
    pub(super) unpaced: PhaseFigures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) paced: Option<PhaseFigures>,
    pub(super) target_p99_ms: f64,
}

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "team: {} in-process members, {} messages each round-robin ({} in all), {} B bodies, mailbox calls {}, {} worker threads",
        report.members,
        report.messages_per_member,
        report.unpaced.messages,
        report.body_bytes,
        match report.io {
            Io::Inline => "inline",
            Io::BlockingPool => "on the blocking pool",
        },
        report.worker_threads,
    );
    let mut phases = vec![&report.unpaced];
    phases.extend(report.paced.as_ref());
    for phase in phases {
        let offered = phase
            .offered_per_s
            .map(|rate| format!(" (held to {rate:.0}/s)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<8} {:>9.0} msg/s{offered}  latency p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  ({} of {} delivered exactly once)",
            phase.mode,
            phase.messages_per_s,
            phase.latency.p50_ms,
            phase.latency.p99_ms,
            phase.latency.max_ms,
            phase.delivered,
            phase.messages,
        );
    }
    let _ = writeln!(
        out,
        "  memory   peak RSS {:.1} MB at M={}, {:.1} MB at M={} (baseline {:.1} MB{})",
        report.small.peak_rss_mb,
        report.small.messages_per_member,
        report.unpaced.peak_rss_mb,
        report.unpaced.messages_per_member,
        report.baseline_rss_mb,
        if report.peak_reset {
            ""
        } else {
            "; peaks are cumulative"
        },
    );
    let verdict = |phase: &PhaseFigures| {
        if phase.p99_under_target {
            "met"
        } else {
            "missed"
        }
    };
    let _ = write!(
        out,
        "  target   p99 under {TARGET_P99_MS} ms: unpaced {}",
        verdict(&report.unpaced)
    );
    if let Some(paced) = &report.paced {
        let _ = write!(out, ", paced {}", verdict(paced));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_percent_and_never_above_the_maximum() {
        let mut histogram = Histogram::default();
        for ms in 1..=100u64 {
            histogram.record(Duration::from_millis(ms));
        }
        let summary = histogram.summary();
        assert!((summary.p50_ms - 50.0).abs() <= 0.5, "{summary:?}");
        assert!((summary.p99_ms - 99.0).abs() <= 1.0, "{summary:?}");
        assert_eq!(summary.max_ms, 100.0);
        assert!((summary.mean_ms - 50.5).abs() < 1e-9);

        let mut merged = Histogram::default();
        merged.merge(&histogram);
        merged.record(Duration::from_nanos(10));
        assert_eq!(merged.total, 101);
        assert_eq!(Histogram::default().summary().p99_ms, 0.0);
    }
}
