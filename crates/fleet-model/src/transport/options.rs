//! Connection settings common to both providers, and what a server's address says about how
//! patient to be with it.
//!
//! A server on this machine or the local network is usually a small model on a CPU: reading
//! a long prompt can take minutes before the first token, so the time-to-first-token limit is
//! generous there. The gap between chunks is another matter: once a reply streams, a long
//! silence means trouble wherever the server is.

use crate::error::ModelError;
use crate::retry::RetryPolicy;
use fleet_protocol::env::{self, EnvError};
use std::net::IpAddr;
use std::time::Duration;

/// How long a server on this machine or the local network may take to begin its reply.
pub const LOCAL_FIRST_TOKEN_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// How long a remote server may take to begin its reply.
pub const REMOTE_FIRST_TOKEN_TIMEOUT: Duration = Duration::from_secs(3 * 60);

#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    /// Longest silence tolerated between chunks once the reply has begun.
    pub idle_timeout: Duration,
    /// Longest wait from sending a request to the reply's first event (or its whole JSON
    /// body). `None`: [`LOCAL_FIRST_TOKEN_TIMEOUT`] for a server on this machine or a private
    /// network, [`REMOTE_FIRST_TOKEN_TIMEOUT`] otherwise.
    pub first_token_timeout: Option<Duration>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(180),
            first_token_timeout: None,
        }
    }
}

impl HttpOptions {
    /// Defaults, overridden by `FLEET_MAX_RETRIES`, `FLEET_RETRY_BASE_DELAY_MS`,
    /// `FLEET_CONNECT_TIMEOUT_MS`, `FLEET_STREAM_IDLE_TIMEOUT_MS` and
    /// `FLEET_FIRST_TOKEN_TIMEOUT_MS`.
    pub fn from_env() -> Result<Self, EnvError> {
        let mut options = Self {
            retry: RetryPolicy::from_env()?,
            ..Self::default()
        };
        if let Some(timeout) = env::FLEET_CONNECT_TIMEOUT_MS.get()? {
            options.connect_timeout = timeout;
        }
        if let Some(timeout) = env::FLEET_STREAM_IDLE_TIMEOUT_MS.get()? {
            options.idle_timeout = timeout;
        }
        options.first_token_timeout = env::FLEET_FIRST_TOKEN_TIMEOUT_MS.get()?;
        Ok(options)
    }

    /// The time-to-first-token limit for a server at `host`.
    pub(crate) fn first_token_limit(&self, host: Host) -> Duration {
        self.first_token_timeout.unwrap_or(if host.local {
            LOCAL_FIRST_TOKEN_TIMEOUT
        } else {
            REMOTE_FIRST_TOKEN_TIMEOUT
        })
    }

    pub(crate) fn build_client(&self) -> Result<reqwest::Client, ModelError> {
        reqwest::Client::builder()
            .tls_backend_preconfigured(
                crate::tls::client_config()
                    .map_err(|e| ModelError::Config(format!("cannot set up TLS: {e}")))?,
            )
            .connect_timeout(self.connect_timeout)
            .user_agent(concat!("fleet/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))
    }
}

/// Where a server is, as far as patience goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Host {
    /// This machine: `localhost`, 127.0.0.0/8, `::1`. A refused connection there means the
    /// server is not running, which waiting will not change.
    pub loopback: bool,
    /// This machine or a private network (10/8, 172.16/12, 192.168/16, link-local, IPv6
    /// unique-local, `*.local`): most likely a local model server.
    pub local: bool,
}

impl Host {
    /// The host of `url`; an address that does not parse counts as remote.
    pub fn of(url: &str) -> Self {
        let Some(host) = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.to_ascii_lowercase()))
        else {
            return Self::default();
        };
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<IpAddr>() {
            Ok(ip) => {
                let loopback = ip.is_loopback();
                Self {
                    loopback,
                    local: loopback || is_private(ip),
                }
            }
            Err(_) => {
                let loopback = bare == "localhost" || bare.ends_with(".localhost");
                Self {
                    loopback,
                    local: loopback || bare.ends_with(".local") || !bare.contains('.'),
                }
            }
        }
    }
}

fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_private() || v4.is_link_local(),
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            // fc00::/7 unique-local, fe80::/10 link-local.
            (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest accepts a preconfigured TLS backend only of the rustls version it was built
    /// with; a mismatch is an error at build time, which this catches before a user does.
    #[test]
    fn the_http_client_takes_the_ring_tls_configuration() {
        let config = crate::tls::client_config().expect("a TLS configuration");
        assert!(!config.alpn_protocols.is_empty());
        HttpOptions::default()
            .build_client()
            .expect("reqwest accepts the rustls configuration");
    }

    #[test]
    fn hosts_are_told_apart_by_address() {
        let cases = [
            ("http://127.0.0.1:8080/v1", true, true),
            ("http://127.1.2.3/v1", true, true),
            ("http://localhost:11434", true, true),
            ("http://[::1]:8000/v1", true, true),
            ("http://192.168.1.20:8000/v1", false, true),
            ("http://10.0.0.5/v1", false, true),
            ("http://172.20.0.2/v1", false, true),
            ("http://[fd00::5]/v1", false, true),
            ("http://gpu-box.local:8000", false, true),
            ("http://llm:8000/v1", false, true),
            ("https://api.openai.com/v1", false, false),
            ("https://8.8.8.8/v1", false, false),
            ("not a url", false, false),
        ];
        for (url, loopback, local) in cases {
            assert_eq!(Host::of(url), Host { loopback, local }, "{url}");
        }
    }

    #[test]
    fn the_first_token_limit_depends_on_the_host_unless_set() {
        let local = Host::of("http://127.0.0.1:1");
        let remote = Host::of("https://api.anthropic.com");
        let options = HttpOptions::default();
        assert_eq!(options.first_token_limit(local), LOCAL_FIRST_TOKEN_TIMEOUT);
        assert_eq!(
            options.first_token_limit(remote),
            REMOTE_FIRST_TOKEN_TIMEOUT
        );
        let set = HttpOptions {
            first_token_timeout: Some(Duration::from_secs(5)),
            ..HttpOptions::default()
        };
        assert_eq!(set.first_token_limit(local), Duration::from_secs(5));
    }
}
