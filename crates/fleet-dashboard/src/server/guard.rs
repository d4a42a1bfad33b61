//! Who may ask: every request needs the server's token (`?token=` or `Authorization: Bearer`),
//! compared in constant time, and a request that changes something (a POST) must come from the
//! page's own origin with a JSON body — a page elsewhere in the browser can neither read the
//! answers (no token) nor make the browser send a state change for it (the origin, and JSON
//! needs a CORS preflight nobody answers). Every answer, refusals included, carries headers
//! that keep it out of caches, other frames and content sniffing.

use super::reply::ApiError;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// What the guard checks against.
#[derive(Debug)]
pub struct Guard {
    token: String,
    /// `http://HOST:PORT` as bound; POSTs must come from here.
    origin: String,
    /// Bound to every address (`0.0.0.0`, `::`): the page is reached by some address of this
    /// machine, so the origin is also accepted when it names the `Host` the request came to.
    wildcard: bool,
}

impl Guard {
    pub fn new(token: String, origin: String, wildcard: bool) -> Self {
        Self {
            token,
            origin,
            wildcard,
        }
    }

    fn token_ok(&self, headers: &HeaderMap, query: Option<&str>) -> bool {
        let from_query = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("token="));
        let from_header = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        [from_query, from_header]
            .into_iter()
            .flatten()
            .any(|given| same(given.as_bytes(), self.token.as_bytes()))
    }

    fn origin_ok(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        if origin == self.origin {
            return true;
        }
        self.wildcard
            && headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|host| origin.strip_prefix("http://") == Some(host))
    }
}

/// Equal bytes, in time that depends only on the lengths: a wrong token's answer does not tell
/// how much of it was right.
fn same(given: &[u8], wanted: &[u8]) -> bool {
    if given.len() != wanted.len() {
        return false;
    }
    given
        .iter()
        .zip(wanted)
        .fold(0u8, |diff, (a, b)| diff | (a ^ b))
        == 0
}

/// The middleware: refuses what the guard does not let through, and adds the headers.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let refusal = if !guard.token_ok(headers, request.uri().query()) {
        Some(ApiError::unauthorized())
    } else if request.method() != Method::GET && request.method() != Method::HEAD {
        if !guard.origin_ok(headers) {
            Some(ApiError::forbidden(format!(
                "requests that change something must come from the dashboard's own page \
                 (Origin: {})",
                guard.origin
            )))
        } else if !is_json(headers) {
            Some(ApiError::unsupported_media())
        } else {
            None
        }
    } else {
        None
    };
    let mut response = match refusal {
        Some(err) => err.into_response(),
        None => next.run(request).await,
    };
    harden(response.headers_mut());
    response
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

/// The policy of every answer but the page (which sets its own, with its nonce).
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

fn harden(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(API_POLICY));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new("abc123".into(), "http://127.0.0.1:8080".into(), false)
    }

    #[test]
    fn the_token_comes_in_the_query_or_as_a_bearer() {
        let g = guard();
        let none = HeaderMap::new();
        assert!(g.token_ok(&none, Some("after=3&token=abc123")));
        assert!(!g.token_ok(&none, Some("token=abc124")));
        assert!(!g.token_ok(&none, Some("token=abc1234")));
        assert!(!g.token_ok(&none, Some("xtoken=abc123")));
        assert!(!g.token_ok(&none, None));
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, "Bearer abc123".parse().unwrap());
        assert!(g.token_ok(&bearer, None));
        bearer.insert(header::AUTHORIZATION, "Basic abc123".parse().unwrap());
        assert!(!g.token_ok(&bearer, None));
    }

    #[test]
    fn only_the_pages_own_origin_may_post() {
        let g = guard();
        let mut headers = HeaderMap::new();
        assert!(!g.origin_ok(&headers));
        headers.insert(header::ORIGIN, "http://127.0.0.1:8080".parse().unwrap());
        assert!(g.origin_ok(&headers));
        headers.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        headers.insert(header::HOST, "evil.example".parse().unwrap());
        assert!(!g.origin_ok(&headers));
        let wild = Guard::new("t".into(), "http://0.0.0.0:80".into(), true);
        assert!(
            wild.origin_ok(&headers),
            "wildcard binds take the Host asked for"
        );
    }
}
