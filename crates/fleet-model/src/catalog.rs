//! Which models exist, what their aliases mean, and what they cost.
//!
//! Aliases (`opus`, `sonnet`, `haiku`) resolve to full ids that users can repoint with the
//! same variables Claude Code reads (`ANTHROPIC_DEFAULT_OPUS_MODEL`, …), so a new model
//! release needs no new fleet. Unknown ids still work: they borrow the figures of their family
//! when the name says which, and otherwise cost nothing (local models usually do).

use fleet_protocol::Usage;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pricing {
    pub input: f64,
    pub output: f64,
    /// Writing a prompt-cache entry (five-minute lifetime).
    pub cache_write: f64,
    pub cache_read: f64,
}

impl Pricing {
    /// Anthropic's ratios: cache writes cost 1.25× input, reads 0.1×.
    pub const fn anthropic(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_write: input * 1.25,
            cache_read: input * 0.1,
        }
    }

    /// The dollar cost of one request's usage.
    pub fn cost(&self, usage: &Usage) -> f64 {
        const PER: f64 = 1_000_000.0;
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_creation() as f64 * self.cache_write
            + usage.cache_read() as f64 * self.cache_read)
            / PER
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub id: String,
    pub context_window: u64,
    pub max_output_tokens: u64,
    pub pricing: Pricing,
    /// False when nothing in the catalogue matched and the figures are guesses.
    pub known: bool,
    /// Whether the model takes extended thinking (`thinking.budget_tokens`), which is how
    /// fleet sends an effort setting; for other models the setting is dropped.
    pub thinking: bool,
}

impl ModelInfo {
    /// The window assumed for a model nothing is known of: neither the catalogue nor its
    /// server (one that publishes nothing, or was still loading when asked) says.
    pub const UNKNOWN_CONTEXT_WINDOW: u64 = 128_000;
    /// The output limit assumed for such a model.
    pub const UNKNOWN_MAX_OUTPUT_TOKENS: u64 = 8_192;

    /// A model nothing is known of: modest guesses, no price, no extended thinking.
    pub fn unknown(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            context_window: Self::UNKNOWN_CONTEXT_WINDOW,
            max_output_tokens: Self::UNKNOWN_MAX_OUTPUT_TOKENS,
            pricing: Pricing::default(),
            known: false,
            thinking: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Catalog {
    aliases: BTreeMap<String, String>,
    models: Vec<ModelInfo>,
    /// What a server said of a model during the run (see [`Catalog::learn`]), by the name the
    /// session uses for it. Shared by every clone: the agents hold the catalogue behind an
    /// `Arc`, and a server that answered late (still loading at start) must still reach them.
    learned: Arc<RwLock<BTreeMap<String, ModelInfo>>>,
}

struct Entry {
    /// Matches an id equal to it or starting with it followed by `-` (dated snapshots).
    id: &'static str,
    context: u64,
    max_output: u64,
    pricing: Pricing,
    thinking: bool,
}

const BUILTIN: &[Entry] = &[
    Entry {
        id: "claude-opus-4-5",
        context: 200_000,
        max_output: 64_000,
        pricing: Pricing::anthropic(5.0, 25.0),
        thinking: true,
    },
    Entry {
        id: "claude-opus-4-1",
        context: 200_000,
        max_output: 32_000,
        pricing: Pricing::anthropic(15.0, 75.0),
        thinking: true,
    },
    Entry {
        id: "claude-opus-4",
        context: 200_000,
        max_output: 32_000,
        pricing: Pricing::anthropic(15.0, 75.0),
        thinking: true,
    },
    Entry {
        id: "claude-sonnet-4-5",
        context: 200_000,
        max_output: 64_000,
        pricing: Pricing::anthropic(3.0, 15.0),
        thinking: true,
    },
    Entry {
        id: "claude-sonnet-4",
        context: 200_000,
        max_output: 64_000,
        pricing: Pricing::anthropic(3.0, 15.0),
        thinking: true,
    },
    Entry {
        id: "claude-3-7-sonnet",
        context: 200_000,
        max_output: 64_000,
        pricing: Pricing::anthropic(3.0, 15.0),
        thinking: true,
    },
    Entry {
        id: "claude-haiku-4-5",
        context: 200_000,
        max_output: 64_000,
        pricing: Pricing::anthropic(1.0, 5.0),
        thinking: true,
    },
    Entry {
        id: "claude-3-5-haiku",
        context: 200_000,
        max_output: 8_192,
        pricing: Pricing::anthropic(0.8, 4.0),
        thinking: false,
    },
];

/// Alias, default target, and the variable that overrides it.
const ALIASES: &[(&str, &str, &str)] = &[
    ("opus", "claude-opus-4-5", "ANTHROPIC_DEFAULT_OPUS_MODEL"),
    (
        "sonnet",
        "claude-sonnet-4-5",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
    ),
    ("haiku", "claude-haiku-4-5", "ANTHROPIC_DEFAULT_HAIKU_MODEL"),
];

impl Default for Catalog {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Catalog {
    /// The built-in models and aliases, without reading the environment.
    pub fn builtin() -> Self {
        Self {
            aliases: ALIASES
                .iter()
                .map(|(a, id, _)| ((*a).to_owned(), (*id).to_owned()))
                .collect(),
            models: BUILTIN
                .iter()
                .map(|e| ModelInfo {
                    id: e.id.to_owned(),
                    context_window: e.context,
                    max_output_tokens: e.max_output,
                    pricing: e.pricing,
                    known: true,
                    thinking: e.thinking,
                })
                .collect(),
            learned: Arc::default(),
        }
    }

    /// The built-ins, with aliases repointed by `ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL`.
    pub fn from_env() -> Self {
        let mut catalog = Self::builtin();
        for (alias, _, var) in ALIASES {
            if let Ok(id) = std::env::var(var) {
                if !id.trim().is_empty() {
                    catalog.set_alias(alias, id.trim());
                }
            }
        }
        catalog
    }

    pub fn set_alias(&mut self, alias: &str, id: &str) {
        self.aliases
            .insert(alias.to_ascii_lowercase(), id.to_owned());
    }

    /// Adds or replaces a model's figures (e.g. a local model's context window).
    pub fn insert(&mut self, info: ModelInfo) {
        self.models.retain(|m| m.id != info.id);
        self.models.insert(0, info);
    }

    /// Records what the server serving `name` says of it, for this catalogue and every clone
    /// of it. It wins over everything else the catalogue knows for that exact name, aliases
    /// included: `sonnet` on a local OpenAI-compatible server is whatever that server runs,
    /// with its window and no Anthropic prices.
    pub fn learn(&self, name: &str, info: ModelInfo) {
        let mut learned = self.learned.write().unwrap_or_else(|e| e.into_inner());
        learned.insert(name.trim().to_owned(), info);
    }

    /// What was learned of `name` from its server, if anything.
    pub fn learned(&self, name: &str) -> Option<ModelInfo> {
        let learned = self.learned.read().unwrap_or_else(|e| e.into_inner());
        learned.get(name.trim()).cloned()
    }

    /// The full id for a name: an alias is expanded, anything else is returned as given.
    pub fn resolve_id(&self, name: &str) -> String {
        let name = name.trim();
        self.aliases
            .get(&name.to_ascii_lowercase())
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }

    /// Figures for a model name or alias. The longest catalogue id that the name equals or
    /// extends (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`) wins.
    pub fn info(&self, name: &str) -> ModelInfo {
        if let Some(learned) = self.learned(name) {
            return learned;
        }
        let id = self.resolve_id(name);
        let exact_or_snapshot = |m: &&ModelInfo| {
            id == m.id
                || id
                    .strip_prefix(m.id.as_str())
                    .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('@'))
        };
        if let Some(found) = self
            .models
            .iter()
            .filter(exact_or_snapshot)
            .max_by_key(|m| m.id.len())
        {
            return ModelInfo {
                id,
                ..found.clone()
            };
        }
        let family = ["opus", "sonnet", "haiku"]
            .into_iter()
            .find(|f| id.contains(f));
        match family
            .and_then(|f| self.aliases.get(f))
            .and_then(|target| self.models.iter().find(|m| &m.id == target))
        {
            Some(similar) => ModelInfo {
                id,
                known: false,
                ..similar.clone()
            },
            None => ModelInfo::unknown(id),
        }
    }

    /// The dollar cost of one request's usage on the named model.
    pub fn cost(&self, model: &str, usage: &Usage) -> f64 {
        self.info(model).pricing.cost(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_and_can_be_repointed() {
        let mut c = Catalog::builtin();
        assert_eq!(c.resolve_id("Sonnet"), "claude-sonnet-4-5");
        c.set_alias("sonnet", "claude-sonnet-9");
        assert_eq!(c.resolve_id("sonnet"), "claude-sonnet-9");
        assert_eq!(c.resolve_id("llama3.1:8b"), "llama3.1:8b");
    }

    #[test]
    fn snapshots_match_their_base_model_and_longest_prefix_wins() {
        let c = Catalog::builtin();
        let info = c.info("claude-opus-4-5-20251101");
        assert!(info.known);
        assert_eq!(info.pricing.input, 5.0);
        assert_eq!(c.info("claude-opus-4-20250514").pricing.input, 15.0);
        assert_eq!(c.info("claude-opus-4-1").pricing.output, 75.0);
    }

    #[test]
    fn unknown_models_borrow_family_figures_or_cost_nothing() {
        let c = Catalog::builtin();
        let guess = c.info("claude-haiku-7");
        assert!(!guess.known);
        assert_eq!(guess.pricing.input, 1.0);
        assert_eq!(c.info("qwen2.5-coder").pricing, Pricing::default());
    }

    #[test]
    fn the_catalogue_knows_which_models_think() {
        let c = Catalog::builtin();
        assert!(c.info("sonnet").thinking);
        assert!(c.info("claude-opus-4-1-20250805").thinking);
        assert!(!c.info("claude-3-5-haiku-20241022").thinking);
        assert!(!c.info("llama3.1:8b").thinking);
        // An unknown Claude borrows its family's figures, thinking included.
        assert!(c.info("claude-sonnet-9").thinking);
    }

    #[test]
    fn what_a_server_said_wins_over_aliases_and_reaches_every_clone() {
        let c = Catalog::builtin();
        let shared = c.clone();
        let local = ModelInfo {
            id: "sonnet".into(),
            context_window: 4096,
            max_output_tokens: 1024,
            pricing: Pricing::default(),
            known: false,
            thinking: false,
        };
        c.learn("sonnet", local.clone());
        assert_eq!(shared.info("sonnet"), local);
        assert_eq!(shared.cost("sonnet", &Usage::of(1_000_000, 0)), 0.0);
        // The full id is another name, still Anthropic's.
        assert!(shared.info("claude-sonnet-4-5").known);
    }

    #[test]
    fn cost_counts_every_kind_of_token() {
        let c = Catalog::builtin();
        let usage = Usage {
            unreported: false,
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: Some(1_000_000),
            cache_read_input_tokens: Some(1_000_000),
        };
        let cost = c.cost("sonnet", &usage);
        assert!((cost - (3.0 + 15.0 + 3.75 + 0.3)).abs() < 1e-9, "{cost}");
    }
}
