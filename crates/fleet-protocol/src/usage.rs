//! Token usage as the API reports it. Cache fields are optional on the wire: older models and
//! OpenAI-compatible servers leave them out, and an exact round trip must too.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Field order follows the API's (input, cache creation, cache read, output) so that a
/// round trip reproduces its JSON byte for byte.
///
/// A server that reported no usage at all (an OpenAI-compatible server that sends no usage
/// chunk) gives [`Usage::unreported`]: its counts are zero but it is not "zero tokens", so it
/// serializes as JSON `null` and reads back from `null`, and a cost must never be made of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Option<UsageFields>", into = "Option<UsageFields>")]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub output_tokens: u64,
    /// The server said nothing about usage; the counts above are zero for want of figures.
    pub unreported: bool,
}

/// [`Usage`] as it is on the wire, when it is there at all; only serde uses it.
#[doc(hidden)]
#[derive(Serialize, Deserialize)]
pub struct UsageFields {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: u64,
}

impl From<Option<UsageFields>> for Usage {
    fn from(fields: Option<UsageFields>) -> Self {
        match fields {
            None => Self::unreported(),
            Some(f) => Self {
                input_tokens: f.input_tokens,
                cache_creation_input_tokens: f.cache_creation_input_tokens,
                cache_read_input_tokens: f.cache_read_input_tokens,
                output_tokens: f.output_tokens,
                unreported: false,
            },
        }
    }
}

impl From<Usage> for Option<UsageFields> {
    fn from(usage: Usage) -> Self {
        (!usage.unreported).then_some(UsageFields {
            input_tokens: usage.input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            output_tokens: usage.output_tokens,
        })
    }
}

impl Usage {
    /// Reported figures of fresh input and output, no cache.
    pub fn of(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// The usage of a reply whose server reported none.
    pub fn unreported() -> Self {
        Self {
            unreported: true,
            ..Self::default()
        }
    }

    /// Whether the server reported figures (possibly zero) for this reply.
    pub fn is_reported(&self) -> bool {
        !self.unreported
    }

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

/// Sums the counts. The `unreported` marker of the sum is left as it was: a total over many
/// replies keeps its own count of the replies that reported nothing.
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

#[cfg(test)]
mod unreported_tests {
    use super::*;

    #[test]
    fn unreported_usage_is_null_on_the_wire_and_back() {
        let json = serde_json::to_value(Usage::unreported()).ok();
        assert_eq!(json, Some(serde_json::Value::Null));
        let back: Option<Usage> = serde_json::from_str("null").ok();
        assert_eq!(back, Some(Usage::unreported()));
        let zero = serde_json::to_string(&Usage::default()).ok();
        assert_eq!(
            zero.as_deref(),
            Some(r#"{"input_tokens":0,"output_tokens":0}"#)
        );
        let read: Option<Usage> = serde_json::from_str(r#"{"output_tokens":3}"#).ok();
        assert!(read.is_some_and(|u| u.is_reported() && u.output_tokens == 3));
    }
}
