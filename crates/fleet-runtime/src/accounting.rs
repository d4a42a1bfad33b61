//! Running totals for the result event: usage, cost and API time, per model and overall.
//!
//! A reply whose server reported no usage (a local OpenAI-compatible server without usage
//! chunks) is counted as such: it adds no tokens and no cost, and when no reply of the run
//! reported anything, the run's usage is itself unreported rather than "zero tokens, $0".

use fleet_model::Catalog;
use fleet_protocol::{ModelUsage, Usage};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Default)]
pub(crate) struct Accounting {
    pub usage: Usage,
    pub cost_usd: f64,
    pub api_time: Duration,
    pub per_model: BTreeMap<String, ModelUsage>,
    replies: u64,
    unreported_replies: u64,
}

impl Accounting {
    /// Adds one reply's usage and returns its cost. `requested` is the model the agent asked
    /// for, `served` the name the reply carries.
    pub fn add(
        &mut self,
        catalog: &Catalog,
        requested: &str,
        served: &str,
        usage: &Usage,
        api_time: Duration,
    ) -> f64 {
        let who = Attribution::of(catalog, requested, served);
        let cost = reply_cost(catalog, &who.model, usage);
        self.replies += 1;
        if !usage.is_reported() {
            self.unreported_replies += 1;
        }
        self.usage += usage;
        self.usage.unreported = self.unreported_replies == self.replies;
        self.cost_usd += cost;
        self.api_time += api_time;
        who.entry(catalog, &mut self.per_model)
            .add_reply(usage, cost);
        cost
    }
}

impl Accounting {
    /// Shows `limit`, the output limit the agent asks with, as the model's `maxOutputTokens`
    /// (see [`Attribution::show_output_limit`]).
    pub fn show_output_limit(
        &mut self,
        catalog: &Catalog,
        requested: &str,
        served: &str,
        limit: u64,
    ) {
        Attribution::of(catalog, requested, served).show_output_limit(&mut self.per_model, limit);
    }
}

/// The cost of one reply, nothing when its server reported no usage: fleet never makes a
/// cost up.
pub(crate) fn reply_cost(catalog: &Catalog, model: &str, usage: &Usage) -> f64 {
    if usage.is_reported() {
        catalog.cost(model, usage)
    } else {
        0.0
    }
}

/// Which model a reply is counted under, and the server's name for it when that differs.
///
/// Reports key by the model that was asked for (what `init.model` and the agent's entry say),
/// since a local server answers with names of its own (a file path, a quantisation tag) and a
/// dated snapshot is still the model asked for. One exception: a server that answered with a
/// different model the catalogue prices differently (the `--fallback-model` switch rewrote
/// the request) is counted under that model, since that is what the reply costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attribution {
    pub model: String,
    pub served: Option<String>,
}

impl Attribution {
    pub fn of(catalog: &Catalog, requested: &str, served: &str) -> Self {
        if served.is_empty() || served == requested {
            return Self {
                model: requested.to_string(),
                served: None,
            };
        }
        let answered = catalog.info(served);
        if answered.known && answered.pricing != catalog.info(requested).pricing {
            return Self {
                model: served.to_string(),
                served: None,
            };
        }
        Self {
            model: requested.to_string(),
            served: Some(served.to_string()),
        }
    }

    /// Makes the entry's `maxOutputTokens` `limit`, the output limit the agent really asks
    /// with (the user's, or the model's own fitted to its window), rather than the
    /// catalogue's most the model can write. A model with no entry yet is left alone.
    pub fn show_output_limit(&self, per_model: &mut BTreeMap<String, ModelUsage>, limit: u64) {
        if let Some(entry) = per_model.get_mut(&self.model) {
            entry.max_output_tokens = limit;
        }
    }

    /// The entry of `per_model` this reply goes to, created with the model's figures.
    pub fn entry<'a>(
        &self,
        catalog: &Catalog,
        per_model: &'a mut BTreeMap<String, ModelUsage>,
    ) -> &'a mut ModelUsage {
        let entry = per_model.entry(self.model.clone()).or_default();
        let info = catalog.info(&self.model);
        entry.context_window = info.context_window;
        entry.max_output_tokens = info.max_output_tokens;
        if self.served.is_some() {
            entry.served_model.clone_from(&self.served);
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(input: u64, output: u64) -> Usage {
        Usage::of(input, output)
    }

    /// One reply on Sonnet, asked for and served under its own name; its cost.
    fn sonnet_reply(totals: &mut Accounting, usage: &Usage) -> f64 {
        let sonnet = "claude-sonnet-4-5";
        totals.add(&Catalog::builtin(), sonnet, sonnet, usage, Duration::ZERO)
    }

    const LOCAL: &str = "qwen2.5-coder";
    const SERVED: &str = "qwen2.5-coder:7b-instruct-q4_K_M";

    #[test]
    fn a_run_whose_replies_reported_nothing_has_unreported_usage_and_no_cost() {
        let mut totals = Accounting::default();
        let sonnet = "claude-sonnet-4-5";
        // Priced by name if it were reported: the cost must still be nothing.
        let cost = sonnet_reply(&mut totals, &Usage::unreported());
        sonnet_reply(&mut totals, &Usage::unreported());
        assert_eq!(cost, 0.0);
        assert!(!totals.usage.is_reported());
        assert_eq!(totals.cost_usd, 0.0);
        let entry = &totals.per_model[sonnet];
        assert!(entry.is_unreported());
        assert_eq!(entry.unreported_replies, 2);
    }

    #[test]
    fn a_run_with_some_reported_replies_sums_those_and_counts_the_others() {
        let mut totals = Accounting::default();
        let sonnet = "claude-sonnet-4-5";
        sonnet_reply(&mut totals, &Usage::unreported());
        let cost = sonnet_reply(&mut totals, &reported(1000, 10));
        sonnet_reply(&mut totals, &Usage::unreported());
        assert!(totals.usage.is_reported());
        assert_eq!(totals.usage.input_tokens, 1000);
        assert!(cost > 0.0 && (totals.cost_usd - cost).abs() < 1e-12);
        let entry = &totals.per_model[sonnet];
        assert!(!entry.is_unreported());
        assert_eq!((entry.input_tokens, entry.unreported_replies), (1000, 2));
    }

    #[test]
    fn replies_count_under_the_model_asked_for_with_the_served_name_beside_it() {
        let catalog = Catalog::builtin();
        let mut totals = Accounting::default();
        totals.add(&catalog, LOCAL, SERVED, &reported(5, 5), Duration::ZERO);
        assert_eq!(totals.per_model.keys().collect::<Vec<_>>(), [LOCAL]);
        assert_eq!(
            totals.per_model[LOCAL].served_model.as_deref(),
            Some(SERVED)
        );
        // The same name: nothing to carry beside it.
        let mut same = Accounting::default();
        same.add(&catalog, LOCAL, LOCAL, &reported(5, 5), Duration::ZERO);
        assert_eq!(same.per_model[LOCAL].served_model, None);
    }

    #[test]
    fn a_snapshot_is_the_model_asked_for_and_a_fallback_model_counts_as_itself() {
        let catalog = Catalog::builtin();
        let snapshot = Attribution::of(&catalog, "claude-sonnet-4-5", "claude-sonnet-4-5-20250929");
        assert_eq!(snapshot.model, "claude-sonnet-4-5");
        assert_eq!(
            snapshot.served.as_deref(),
            Some("claude-sonnet-4-5-20250929")
        );
        let fallback = Attribution::of(&catalog, "claude-sonnet-4-5", "claude-haiku-4-5");
        assert_eq!(fallback.model, "claude-haiku-4-5");
        assert_eq!(fallback.served, None);
    }
}
