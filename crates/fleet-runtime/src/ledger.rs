//! What the whole agent tree has used: usage and cost per agent and per model, the spawn
//! statistics, and the running total that `--max-budget-usd` is checked against.
//!
//! Every agent of a session (main and subagents, at any depth) reports each reply here, so
//! the budget binds the tree rather than each agent alone, and the final result can say where
//! the money went.

use crate::accounting::{reply_cost, Attribution};
use fleet_model::Catalog;
use fleet_protocol::{
    AgentUsage, KilledBy, ModelUsage, SubagentStats, TaskStatus, TreeReport, Usage,
};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    agents: Vec<AgentUsage>,
    /// Index into `agents` by agent id.
    index: BTreeMap<String, usize>,
    per_model: BTreeMap<String, ModelUsage>,
    total_cost_usd: f64,
    stats: SubagentStats,
    /// Agents resumed after they had ended.
    reopened: std::collections::BTreeSet<String>,
}

/// How an Agent tool call asked to run, for the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestedMode {
    Background,
    Foreground,
    Unset,
}

/// Which limit refused a spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Depth,
    Concurrency,
    Budget,
}

impl Ledger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an agent to the tree. Registering an id twice keeps the first entry.
    pub fn register(
        &self,
        agent_id: &str,
        agent_type: &str,
        parent_agent_id: Option<&str>,
        depth: u32,
        model: &str,
    ) {
        let mut inner = self.lock();
        if inner.index.contains_key(agent_id) {
            return;
        }
        let at = inner.agents.len();
        inner.agents.push(AgentUsage {
            agent_id: agent_id.to_string(),
            agent_type: agent_type.to_string(),
            parent_agent_id: parent_agent_id.map(str::to_string),
            depth,
            model: model.to_string(),
            status: TaskStatus::Running.as_str().to_string(),
            num_turns: 0,
            tool_uses: 0,
            usage: Usage::default(),
            cost_usd: Some(0.0),
            served_model: None,
            usage_unreported_replies: 0,
        });
        inner.index.insert(agent_id.to_string(), at);
    }

    /// Shows `limit`, the output limit an agent asks `requested` with, as the model's
    /// `maxOutputTokens` in the tree's report.
    pub fn show_output_limit(&self, catalog: &Catalog, requested: &str, served: &str, limit: u64) {
        let who = Attribution::of(catalog, requested, served);
        who.show_output_limit(&mut self.lock().per_model, limit);
    }

    /// Records one model reply of `agent_id` and returns its cost. `requested` is the model
    /// the agent asked for, `served` the name the reply carries (see [`Attribution`]).
    pub fn record_reply(
        &self,
        catalog: &Catalog,
        agent_id: &str,
        requested: &str,
        served: &str,
        usage: &Usage,
    ) -> f64 {
        let who = Attribution::of(catalog, requested, served);
        let cost = reply_cost(catalog, &who.model, usage);
        let mut inner = self.lock();
        inner.total_cost_usd += cost;
        who.entry(catalog, &mut inner.per_model)
            .add_reply(usage, cost);
        if let Some(agent) = inner.agent_mut(agent_id) {
            agent.num_turns += 1;
            agent.usage += usage;
            if !usage.is_reported() {
                agent.usage_unreported_replies += 1;
            }
            // Unknown only while every reply so far reported nothing.
            let nothing_reported = agent.usage_unreported_replies == u64::from(agent.num_turns);
            agent.usage.unreported = nothing_reported;
            agent.cost_usd = match agent.cost_usd {
                _ if nothing_reported => None,
                Some(spent) => Some(spent + cost),
                None => Some(cost),
            };
            if served != agent.model && !served.is_empty() {
                agent.served_model = Some(served.to_string());
            }
        }
        cost
    }

    pub fn record_tool_uses(&self, agent_id: &str, count: u64) {
        if let Some(agent) = self.lock().agent_mut(agent_id) {
            agent.tool_uses += count;
        }
    }

    /// A stopped agent runs again (resumed by a message): running until it finishes anew.
    pub fn reopen(&self, agent_id: &str) {
        let mut inner = self.lock();
        if let Some(agent) = inner.agent_mut(agent_id) {
            agent.status = TaskStatus::Running.as_str().to_string();
        }
        inner.reopened.insert(agent_id.to_string());
    }

    /// The agent's final state: completed, failed or killed. The spawn statistics count each
    /// agent's first ending only, so a resumed agent is not counted twice.
    pub fn finish(&self, agent_id: &str, status: TaskStatus, killed_by: Option<KilledBy>) {
        let mut inner = self.lock();
        let reopened = inner.reopened.contains(agent_id);
        let Some(agent) = inner.agent_mut(agent_id) else {
            return;
        };
        agent.status = status.as_str().to_string();
        let is_main = agent.parent_agent_id.is_none();
        if is_main || reopened {
            return;
        }
        let stats = &mut inner.stats;
        match status {
            TaskStatus::Completed => stats.completed += 1,
            TaskStatus::Failed => stats.failed += 1,
            TaskStatus::Killed => match killed_by.unwrap_or(KilledBy::Parent) {
                KilledBy::Parent => stats.killed.parent += 1,
                KilledBy::User => stats.killed.user += 1,
                KilledBy::System => stats.killed.system += 1,
            },
            TaskStatus::Pending | TaskStatus::Running => {}
        }
    }

    /// Counts a spawn that went ahead.
    pub fn spawned(
        &self,
        agent_type: &str,
        depth: u32,
        requested: RequestedMode,
        background: bool,
    ) {
        let mut inner = self.lock();
        let stats = &mut inner.stats;
        stats.spawned += 1;
        match requested {
            RequestedMode::Background => stats.requested.background += 1,
            RequestedMode::Foreground => stats.requested.foreground += 1,
            RequestedMode::Unset => stats.requested.unset += 1,
        }
        if background {
            stats.started_in_background += 1;
        }
        if depth > 1 {
            stats.spawned_by_subagents += 1;
        }
        stats.max_depth = stats.max_depth.max(depth);
        *stats.by_type.entry(agent_type.to_string()).or_default() += 1;
    }

    pub fn refused(&self, why: Refusal) {
        let refused = &mut self.lock().stats.refused;
        match why {
            Refusal::Depth => refused.depth_limit += 1,
            Refusal::Concurrency => refused.concurrency_limit += 1,
            Refusal::Budget => refused.budget += 1,
        }
    }

    pub fn total_cost_usd(&self) -> f64 {
        self.lock().total_cost_usd
    }

    pub fn agent(&self, agent_id: &str) -> Option<AgentUsage> {
        let inner = self.lock();
        inner.index.get(agent_id).map(|&i| inner.agents[i].clone())
    }

    pub fn stats(&self) -> SubagentStats {
        self.lock().stats.clone()
    }

    pub fn report(&self) -> TreeReport {
        let inner = self.lock();
        TreeReport {
            total_cost_usd: inner.total_cost_usd,
            model_usage: inner.per_model.clone(),
            subagent_stats: inner.stats.clone(),
            agents: inner.agents.clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Plain counters: a panic elsewhere cannot leave them inconsistent enough to matter.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    fn agent_mut(&mut self, agent_id: &str) -> Option<&mut AgentUsage> {
        let at = *self.index.get(agent_id)?;
        self.agents.get_mut(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn costs_roll_up_per_agent_per_model_and_in_total() {
        let catalog = Catalog::builtin();
        let ledger = Ledger::new();
        ledger.register("main", "main", None, 0, "claude-sonnet-4-5");
        ledger.register("a1", "Explore", Some("main"), 1, "claude-haiku-4-5");
        let (sonnet, haiku) = ("claude-sonnet-4-5", "claude-haiku-4-5");
        let main_cost = ledger.record_reply(&catalog, "main", sonnet, sonnet, &usage(1000, 100));
        let child_cost = ledger.record_reply(&catalog, "a1", haiku, haiku, &usage(2000, 50));
        assert!(main_cost > 0.0 && child_cost > 0.0);
        let report = ledger.report();
        assert!((report.total_cost_usd - (main_cost + child_cost)).abs() < 1e-12);
        assert_eq!(report.model_usage.len(), 2);
        assert_eq!(report.agents[1].usage.input_tokens, 2000);
        assert_eq!(report.agents[1].num_turns, 1);
        assert!((report.agents[1].cost_usd.unwrap_or(-1.0) - child_cost).abs() < 1e-12);
        assert_eq!(report.agents[1].served_model, None);
    }

    #[test]
    fn an_agent_whose_replies_reported_nothing_has_unknown_usage_and_cost() {
        let catalog = Catalog::builtin();
        let ledger = Ledger::new();
        let (asked, served) = ("qwen2.5-coder", "qwen2.5-coder:7b-instruct-q4_K_M");
        ledger.register("main", "main", None, 0, asked);
        ledger.register("a1", "Explore", Some("main"), 1, asked);
        ledger.register("idle", "Plan", Some("main"), 1, asked);
        for _ in 0..2 {
            ledger.record_reply(&catalog, "main", asked, served, &Usage::unreported());
        }
        ledger.record_reply(&catalog, "a1", asked, served, &Usage::unreported());
        ledger.record_reply(&catalog, "a1", asked, served, &usage(40, 4));
        let report = ledger.report();
        let main = &report.agents[0];
        assert!(!main.usage.is_reported());
        assert_eq!((main.cost_usd, main.usage_unreported_replies), (None, 2));
        assert_eq!(main.served_model.as_deref(), Some(served));
        let child = &report.agents[1];
        assert!(child.usage.is_reported());
        assert_eq!(child.usage.input_tokens, 40);
        assert_eq!(
            (child.cost_usd, child.usage_unreported_replies),
            (Some(0.0), 1)
        );
        // An agent with no reply yet has used nothing, which is known.
        assert_eq!(report.agents[2].cost_usd, Some(0.0));
        assert!(report.agents[2].usage.is_reported());
        assert_eq!(report.model_usage.keys().collect::<Vec<_>>(), [asked]);
        assert_eq!(report.model_usage[asked].unreported_replies, 3);
        assert_eq!(report.unreported_replies(), 3);
        assert_eq!(report.reported_cost_usd(), Some(0.0));
    }

    #[test]
    fn a_tree_where_no_reply_reported_has_no_cost() {
        let catalog = Catalog::builtin();
        let ledger = Ledger::new();
        ledger.register("main", "main", None, 0, "claude-sonnet-4-5");
        assert_eq!(ledger.report().reported_cost_usd(), Some(0.0));
        let m = "claude-sonnet-4-5";
        ledger.record_reply(&catalog, "main", m, m, &Usage::unreported());
        assert_eq!(ledger.report().reported_cost_usd(), None);
    }

    #[test]
    fn statistics_count_spawns_endings_and_refusals() {
        let ledger = Ledger::new();
        ledger.register("a1", "Explore", Some("main"), 1, "m");
        ledger.register("a2", "Plan", Some("a1"), 2, "m");
        ledger.spawned("Explore", 1, RequestedMode::Unset, false);
        ledger.spawned("Plan", 2, RequestedMode::Background, true);
        ledger.finish("a1", TaskStatus::Completed, None);
        ledger.finish("a2", TaskStatus::Killed, Some(KilledBy::User));
        ledger.refused(Refusal::Depth);
        let stats = ledger.stats();
        assert_eq!(stats.spawned, 2);
        assert_eq!(stats.spawned_by_subagents, 1);
        assert_eq!(stats.max_depth, 2);
        assert_eq!(stats.started_in_background, 1);
        assert_eq!((stats.completed, stats.killed.user), (1, 1));
        assert_eq!(stats.refused.depth_limit, 1);
        assert_eq!(stats.by_type.get("Plan"), Some(&1));
    }
}
