//! Token usage as the API reports it. Cache fields are optional on the wire: older models and
//! OpenAI-compatible servers leave them out, and an exact round trip must too.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Field order follows the API's (input, cache creation, cache read, output) so that a
/// round trip reproduces its JSON byte for byte.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: u64,
}

impl Usage {
    pub fn cache_creation(&self) -> u64 {
        self.cache_creation_input_tokens.unwrap_or(0)
    }

    pub fn cache_read(&self) -> u64 {
        self.cache_read_input_tokens.unwrap_or(0)
    }

    /// Every input token the request consumed, whether billed fresh, written to or read from cache.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation() + self.cache_read()
    }

    pub fn total(&self) -> u64 {
        self.total_input() + self.output_tokens
    }

    /// Folds a streamed `message_delta` usage into the `message_start` one: the API sends
    /// cumulative counts, so a field present in the delta replaces the earlier value.
    pub fn merge_delta(&mut self, delta: &UsageDelta) {
        if let Some(v) = delta.input_tokens {
            self.input_tokens = v;
        }
        if let Some(v) = delta.output_tokens {
            self.output_tokens = v;
        }
        if delta.cache_creation_input_tokens.is_some() {
            self.cache_creation_input_tokens = delta.cache_creation_input_tokens;
        }
        if delta.cache_read_input_tokens.is_some() {
            self.cache_read_input_tokens = delta.cache_read_input_tokens;
        }
    }
}

impl AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, rhs: &Usage) {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            }
        }
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cache_creation_input_tokens = add(
            self.cache_creation_input_tokens,
            rhs.cache_creation_input_tokens,
        );
        self.cache_read_input_tokens =
            add(self.cache_read_input_tokens, rhs.cache_read_input_tokens);
    }
}

/// The usage carried by a `message_delta` event: every field may be missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
}
