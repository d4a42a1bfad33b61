//! Why an attempt failed, in words the user can act on, and whether another attempt can help.
//!
//! Most failures follow the retry policy. Three do not, because repeating them only wastes the
//! user's time: a refused connection to this machine (the server is not running; one more
//! try covers a server still starting), a server name that does not resolve (one more try,
//! a second later, covers a resolver's hiccup; a typo stays a typo) and an empty event stream
//! (one more try covers a hiccup; a second in a row means the server will not answer this
//! prompt).

use super::options::Host;
use crate::error::display::base_url_variable;
use crate::error::ModelError;
use std::time::Duration;

/// Attempts in all at a refused connection on this machine.
pub(crate) const REFUSED_LOCAL_ATTEMPTS: u32 = 2;
/// The wait before trying a refused local connection again: enough for a server that is
/// just starting, short enough not to keep the user waiting for nothing.
pub(crate) const REFUSED_LOCAL_DELAY: Duration = Duration::from_millis(300);
/// Attempts in all at a name that does not resolve: one more covers a resolver's hiccup
/// (`EAI_AGAIN`); more would only keep the user waiting on a typo.
pub(crate) const UNRESOLVED_ATTEMPTS: u32 = 2;
/// The wait before asking the resolver again.
pub(crate) const UNRESOLVED_DELAY: Duration = Duration::from_secs(1);
/// Empty streams in a row after which fleet stops asking.
pub(crate) const EMPTY_STREAMS_TOLERATED: u32 = 2;

/// The error for a request that never got a response.
pub(crate) fn connect_error(
    provider: &'static str,
    url: &str,
    host: Host,
    error: reqwest::Error,
) -> ModelError {
    if host.loopback && is_refused(&error) {
        return ModelError::NothingListening {
            url: url.to_owned(),
            variable: base_url_variable(provider),
        };
    }
    if let Some(message) = unresolved(&error) {
        // Through a proxy, the name fleet looked up was the proxy's.
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let (variable, named) = match proxy_for(url, var) {
            Some((variable, proxy)) => (variable, proxy),
            None => (base_url_variable(provider), url.to_owned()),
        };
        return ModelError::HostNotFound {
            host: host_name(&named),
            url: named,
            variable,
            message,
        };
    }
    ModelError::Connect {
        url: url.to_owned(),
        message: describe_reqwest(error),
    }
}

/// The proxy the HTTP client sends a request for `url` through, as reqwest chooses it from
/// the environment: the scheme's variable, else `ALL_PROXY`, each upper or lower case. With
/// `NO_PROXY` set the choice depends on its list, so none is claimed.
fn proxy_for(url: &str, var: impl Fn(&str) -> Option<String>) -> Option<(&'static str, String)> {
    if var("NO_PROXY").or_else(|| var("no_proxy")).is_some() {
        return None;
    }
    let names: [&'static str; 4] = if url.starts_with("https:") {
        ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    names
        .into_iter()
        .find_map(|name| var(name).map(|proxy| (name, proxy.trim().to_owned())))
}

/// The host part of `url`, as written (the whole URL when it has none).
fn host_name(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| url.to_owned())
}

/// What the resolver said, when the connection failed because the server's name did not
/// resolve. hyper's connector wraps the resolver's failure in an error whose message is
/// `dns error` (its type is private); the system resolver's own I/O error reads `failed to
/// lookup address information: …`. Either marks the cause, wherever it sits in the chain.
fn unresolved(error: &reqwest::Error) -> Option<String> {
    const LOOKUP: &str = "failed to lookup address information";
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if text == "dns error" || text.starts_with("dns error:") {
            let said = cause.source().map_or(text, |inner| inner.to_string());
            return Some(resolver_words(&said, LOOKUP));
        }
        if text.starts_with(LOOKUP) {
            return Some(resolver_words(&text, LOOKUP));
        }
        source = cause.source();
    }
    None
}

/// `failed to lookup address information: Name or service not known` → `Name or service not
/// known`: the prefix only repeats what the error's own wording says.
fn resolver_words(text: &str, prefix: &str) -> String {
    text.strip_prefix(prefix)
        .map(|rest| rest.trim_start_matches(':').trim())
        .filter(|rest| !rest.is_empty())
        .unwrap_or(text)
        .to_owned()
}

/// Whether the operating system refused the connection (nothing listens on that port),
/// read from the I/O error in the cause chain rather than from any message text.
fn is_refused(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

/// reqwest's top-level message hides the cause ("error sending request"); the chain names it.
/// The URL is left out: the errors that carry this text name it themselves.
pub(crate) fn describe_reqwest(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // hyper repeats its cause's words in its own message; keep each once.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// How many attempts a failure may have in all, whatever the policy allows.
pub(crate) fn attempt_limit(failure: &ModelError, policy_attempts: u32) -> u32 {
    match failure {
        ModelError::NothingListening { .. } => policy_attempts.min(REFUSED_LOCAL_ATTEMPTS),
        ModelError::HostNotFound { .. } => policy_attempts.min(UNRESOLVED_ATTEMPTS),
        _ => policy_attempts,
    }
}

/// Whether the kind of failure is worth another attempt of the same request (the attempt
/// count is checked apart).
pub(crate) fn worth_retrying(failure: &ModelError) -> bool {
    match failure {
        ModelError::NothingListening { .. } | ModelError::HostNotFound { .. } => true,
        ModelError::EmptyStream { times, .. } => *times < EMPTY_STREAMS_TOLERATED,
        other => other.is_retryable(),
    }
}

/// The wait before the next attempt.
pub(crate) fn delay(
    failure: &ModelError,
    policy: &crate::retry::RetryPolicy,
    attempt: u32,
) -> Duration {
    match failure {
        ModelError::NothingListening { .. } => REFUSED_LOCAL_DELAY,
        ModelError::HostNotFound { .. } => UNRESOLVED_DELAY,
        other => policy.delay(attempt, other.retry_after()),
    }
}

/// The body of an error answer that is not the API's error JSON, for its message.
pub(crate) fn unreadable_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        "the response body was empty".into()
    } else {
        crate::anthropic::preview(text.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::proxy_for;
    use std::collections::HashMap;

    fn pick(url: &str, vars: &[(&str, &str)]) -> Option<(&'static str, String)> {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        proxy_for(url, |name| vars.get(name).map(|v| (*v).to_owned()))
    }

    #[test]
    fn the_proxy_is_the_one_reqwest_would_use() {
        let proxy = ("HTTPS_PROXY", "http://squid:3128");
        assert_eq!(
            pick("https://api.anthropic.com/v1/messages", &[proxy]),
            Some(("HTTPS_PROXY", "http://squid:3128".into()))
        );
        assert_eq!(pick("http://llm:8000/v1/chat/completions", &[proxy]), None);
        assert_eq!(
            pick("http://llm:8000/v1", &[("all_proxy", "socks5://gw:1080")]),
            Some(("all_proxy", "socks5://gw:1080".into()))
        );
        assert_eq!(pick("https://x/v1", &[proxy, ("NO_PROXY", "x")]), None);
        assert_eq!(pick("https://x/v1", &[]), None);
    }
}
