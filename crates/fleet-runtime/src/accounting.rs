//! Running totals for the result event: usage, cost and API time, per model and overall.

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
}

impl Accounting {
    /// Adds one reply's usage and returns its cost.
    pub fn add(
        &mut self,
        catalog: &Catalog,
        model: &str,
        usage: &Usage,
        api_time: Duration,
    ) -> f64 {
        let cost = catalog.cost(model, usage);
        self.usage += usage;
        self.cost_usd += cost;
        self.api_time += api_time;
        let info = catalog.info(model);
        let entry = self.per_model.entry(model.to_string()).or_default();
        entry.input_tokens += usage.input_tokens;
        entry.output_tokens += usage.output_tokens;
        entry.cache_read_input_tokens += usage.cache_read();
        entry.cache_creation_input_tokens += usage.cache_creation();
        entry.cost_usd += cost;
        entry.context_window = info.context_window;
        entry.max_output_tokens = info.max_output_tokens;
        cost
    }
}
