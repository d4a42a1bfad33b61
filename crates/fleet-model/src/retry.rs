//! When and how long to wait before trying a failed request again.
//!
//! Exponential backoff with jitter, so that many agents hitting one rate limit do not come back
//! in lockstep; a server's own `retry-after` wins over our guess, within a ceiling.

use fleet_protocol::env::{self, EnvError};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included. 1 disables retries.
    pub max_attempts: u32,
    /// Delay before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// Ceiling for the computed backoff.
    pub max_delay: Duration,
    /// Ceiling for a server-requested wait; past it we still wait this long and try again.
    pub max_retry_after: Duration,
    /// Fraction of the delay that is randomised (0.25 → delay × [0.75, 1.0]).
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 9,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
            max_retry_after: Duration::from_secs(300),
            jitter: 0.25,
        }
    }
}

impl RetryPolicy {
    /// No retries at all: the first failure is final.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Reads `FLEET_MAX_RETRIES` (retries after the first attempt) and
    /// `FLEET_RETRY_BASE_DELAY_MS` over the defaults; a value out of its bounds is an error
    /// naming the variable.
    pub fn from_env() -> Result<Self, EnvError> {
        let mut policy = Self::default();
        if let Some(n) = env::FLEET_MAX_RETRIES.get()? {
            policy.max_attempts = u32::try_from(n).unwrap_or(u32::MAX - 1).saturating_add(1);
        }
        if let Some(delay) = env::FLEET_RETRY_BASE_DELAY_MS.get()? {
            policy.base_delay = delay;
        }
        Ok(policy)
    }

    /// How long to wait after failed attempt number `attempt` (1-based).
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let exp = attempt.saturating_sub(1).min(20);
        let raw = self
            .base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = 1.0 - jitter * rand::random::<f64>();
        raw.mul_f64(factor)
    }
}

/// Parses `retry-after-ms` (milliseconds, may be fractional) or else `retry-after` (seconds;
/// an HTTP date is not worth a date parser here and is ignored).
pub fn parse_retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let secs = retry_after.and_then(|v| v.trim().parse::<f64>().ok())?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            jitter: 0.25,
            ..RetryPolicy::default()
        };
        for (attempt, full) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 800),
            (5, 1000),
            (30, 1000),
        ] {
            let d = p.delay(attempt, None).as_millis() as u64;
            assert!(
                d <= full && d >= full * 3 / 4,
                "attempt {attempt}: {d}ms not in [{}, {full}]",
                full * 3 / 4
            );
        }
    }

    #[test]
    fn server_wait_wins_but_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3600))),
            p.max_retry_after
        );
    }

    #[test]
    fn retry_after_headers_parse() {
        assert_eq!(
            parse_retry_after(Some("250"), Some("9")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after(None, Some("2")),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            parse_retry_after(Some("x"), Some("1.5")),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
        assert_eq!(parse_retry_after(Some("-5"), None), None);
    }
}
