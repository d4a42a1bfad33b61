//! The soak's report: per scenario, runs, failures by kind and the worst time; and each
//! failed run with its problems and its folder.

use super::checks::{Kind, Problem};
use super::run::RunReport;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub(super) struct Report {
    pub seed: u64,
    pub busy: usize,
    pub short: bool,
    pub scenarios: Vec<ScenarioStats>,
    pub failures: Vec<Failure>,
    pub total_s: f64,
    pub out: String,
}

#[derive(Debug, Serialize)]
pub(super) struct ScenarioStats {
    pub name: String,
    pub runs: usize,
    pub failed: usize,
    pub hangs: usize,
    pub silent: usize,
    pub killed: usize,
    pub worst_s: f64,
    pub median_s: f64,
    #[serde(skip)]
    times: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub(super) struct Failure {
    pub scenario: String,
    pub run: usize,
    pub problems: Vec<Problem>,
    pub dir: String,
}

impl Report {
    pub fn new(seed: u64, busy: usize, short: bool) -> Self {
        Self {
            seed,
            busy,
            short,
            scenarios: Vec::new(),
            failures: Vec::new(),
            total_s: 0.0,
            out: String::new(),
        }
    }

    pub fn add(&mut self, name: &str, run: &RunReport) {
        let index = match self.scenarios.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                self.scenarios.push(ScenarioStats {
                    name: name.to_owned(),
                    runs: 0,
                    failed: 0,
                    hangs: 0,
                    silent: 0,
                    killed: 0,
                    worst_s: 0.0,
                    median_s: 0.0,
                    times: Vec::new(),
                });
                self.scenarios.len() - 1
            }
        };
        let s = &mut self.scenarios[index];
        let has = |k: Kind| run.problems.iter().any(|p| p.kind == k);
        s.runs += 1;
        s.failed += usize::from(!run.problems.is_empty());
        s.hangs += usize::from(has(Kind::Hang));
        s.silent += usize::from(has(Kind::SilentFailure));
        s.killed += usize::from(run.killed);
        let t = run.wall.as_secs_f64();
        s.times.push(t);
        s.worst_s = s.worst_s.max(t);
        let mut sorted = s.times.clone();
        sorted.sort_by(f64::total_cmp);
        s.median_s = sorted[sorted.len() / 2];
    }

    pub fn runs(&self) -> usize {
        self.scenarios.iter().map(|s| s.runs).sum()
    }

    pub fn failed(&self) -> usize {
        self.scenarios.iter().map(|s| s.failed).sum()
    }

    /// Failed runs with at least one problem of this kind.
    pub fn count(&self, kind: Kind) -> usize {
        self.failures
            .iter()
            .filter(|f| f.problems.iter().any(|p| p.kind == kind))
            .count()
    }

    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nsoak ({} mode, seed {}, {} busy threads, {:.0} s)",
            if self.short { "short" } else { "full" },
            self.seed,
            self.busy,
            self.total_s
        );
        let _ = writeln!(
            out,
            "{:<18} {:>5} {:>7} {:>6} {:>7} {:>7} {:>9} {:>9}",
            "scenario", "runs", "failed", "hangs", "silent", "killed", "median s", "worst s"
        );
        for s in &self.scenarios {
            let _ = writeln!(
                out,
                "{:<18} {:>5} {:>7} {:>6} {:>7} {:>7} {:>9.1} {:>9.1}",
                s.name, s.runs, s.failed, s.hangs, s.silent, s.killed, s.median_s, s.worst_s
            );
        }
        let _ = writeln!(
            out,
            "{:<18} {:>5} {:>7} {:>6} {:>7}",
            "total",
            self.runs(),
            self.failed(),
            self.count(Kind::Hang),
            self.count(Kind::SilentFailure)
        );
        for f in &self.failures {
            let _ = writeln!(out, "\n{} #{} ({}):", f.scenario, f.run, f.dir);
            for p in &f.problems {
                let _ = writeln!(out, "  {:?}: {}", p.kind, p.detail);
            }
        }
        out
    }
}
