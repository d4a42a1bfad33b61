//! The page at `/`: `assets/index.html` with `dashboard.css` and the script modules of
//! `assets/js/` inlined, all compiled into the binary, so the page makes no other request than the API's and works
//! offline. The inline style and script run under a strict Content-Security-Policy by a nonce
//! fresh for every answer; nothing else may run or load (no remote script, style, frame).
//!
//! The script is [`JS`], in that order, inside one strict-mode function: no build step and no
//! module loader, and the modules share one scope without putting a name on `window`.
//!
//! `index.html` may reference the style and the script as
//! `<link rel="stylesheet" href="dashboard.css">` and `<script src="dashboard.js"></script>`:
//! those tags are replaced by the inlined ones. Without them the style goes at the end of
//! `<head>` and the script at the end of `<body>`.

use axum::http::{header, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use std::sync::OnceLock;

const HTML: &str = include_str!("../../assets/index.html");
const CSS: &str = include_str!("../../assets/dashboard.css");

/// The page's script modules (`assets/js/`), in the order they are inlined: a module's
/// top-level statements may use only what the modules before it declare; `main.js` boots.
const JS: &[(&str, &str)] = &[
    ("util.js", include_str!("../../assets/js/util.js")),
    ("state.js", include_str!("../../assets/js/state.js")),
    ("sessions.js", include_str!("../../assets/js/sessions.js")),
    ("net.js", include_str!("../../assets/js/net.js")),
    ("views.js", include_str!("../../assets/js/views.js")),
    ("tree.js", include_str!("../../assets/js/tree.js")),
    ("timeline.js", include_str!("../../assets/js/timeline.js")),
    ("teams.js", include_str!("../../assets/js/teams.js")),
    (
        "transcript.js",
        include_str!("../../assets/js/transcript.js"),
    ),
    ("main.js", include_str!("../../assets/js/main.js")),
];

/// Stands for the nonce in the assembled page until an answer fills it in.
const NONCE: &str = "\u{1}nonce\u{1}";

/// The page for one answer, with its own nonce in the page and its policy.
pub fn page() -> Response {
    let nonce = super::random_hex(16);
    let body = template().replace(NONCE, &nonce);
    let policy = format!(
        "default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; \
         img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    let mut response = Html(body).into_response();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

fn template() -> &'static str {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE.get_or_init(|| assemble(HTML, CSS, &script(JS)))
}

/// The modules as one script: one function around them all, each under a comment naming it.
fn script(modules: &[(&str, &str)]) -> String {
    let mut out = String::from("'use strict';\n(function () {\n");
    for (name, text) in modules {
        out.push_str("// ==== js/");
        out.push_str(name);
        out.push('\n');
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("})();");
    out
}

/// The page with the style and script inlined, [`NONCE`] where the nonce goes.
fn assemble(html: &str, css: &str, js: &str) -> String {
    let style = format!("<style nonce=\"{NONCE}\">\n{css}\n</style>");
    let script = format!("<script nonce=\"{NONCE}\">\n{js}\n</script>");
    let mut out = String::with_capacity(html.len() + css.len() + js.len() + 200);
    let (mut styled, mut scripted) = (false, false);
    for line in html.split_inclusive('\n') {
        let lower = line.to_ascii_lowercase();
        if lower.contains("<link") && lower.contains("dashboard.css") {
            out.push_str(&style);
            out.push('\n');
            styled = true;
        } else if lower.contains("<script") && lower.contains("dashboard.js") {
            out.push_str(&script);
            out.push('\n');
            scripted = true;
        } else {
            out.push_str(line);
        }
    }
    // No favicon request (it would carry no token, and be refused).
    let icon = if out.contains("rel=\"icon\"") {
        ""
    } else {
        "<link rel=\"icon\" href=\"data:,\">\n"
    };
    let head = format!(
        "{icon}{}",
        if styled { String::new() } else { style + "\n" }
    );
    out = insert_before(&out, "</head>", &head, false);
    if !scripted {
        out = insert_before(&out, "</body>", &(script + "\n"), true);
    }
    out
}

/// `text` with `insert` before the (first, or `last`) `tag`; at the end when there is none.
fn insert_before(text: &str, tag: &str, insert: &str, last: bool) -> String {
    let lower = text.to_ascii_lowercase();
    let at = if last {
        lower.rfind(tag)
    } else {
        lower.find(tag)
    };
    match at {
        Some(at) => format!("{}{insert}{}", &text[..at], &text[at..]),
        None => format!("{text}{insert}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An inlined file that closed its own tag would end it early and spill into the page.
    #[test]
    fn the_assets_can_be_inlined() {
        for (name, text) in JS {
            assert!(!text.to_ascii_lowercase().contains("</script"), "{name}");
        }
        assert!(!CSS.to_ascii_lowercase().contains("</style"));
    }

    /// Every module is in, once, in order, inside the one function; `main.js` (which boots
    /// the page) last.
    #[test]
    fn the_modules_make_one_script_in_order() {
        let js = script(JS);
        assert!(
            js.starts_with("'use strict';\n(function () {\n"),
            "{js:.80}"
        );
        assert!(js.ends_with("\n})();"));
        let mut at = 0;
        for (name, text) in JS {
            let marker = format!("// ==== js/{name}\n");
            let found = js[at..].find(&marker).map(|i| at + i);
            assert!(found.is_some(), "{name} is missing or out of order");
            at = found.unwrap_or(at) + marker.len();
            assert!(js[at..].starts_with(text), "{name} follows its marker");
            assert_eq!(js.matches(&marker).count(), 1, "{name} once");
        }
        assert_eq!(JS.last().map(|m| m.0), Some("main.js"));
        let page = template();
        assert!(page.contains(&js), "the page carries the script whole");
    }

    /// No module grows past what one reads in a sitting.
    #[test]
    fn modules_stay_small() {
        for (name, text) in JS {
            let lines = text.lines().count();
            assert!(lines <= 450, "js/{name} has {lines} lines: split it");
        }
    }

    #[test]
    fn referenced_assets_are_replaced_and_missing_ones_added() {
        let html = "<html><head>\n<link rel=\"stylesheet\" href=\"dashboard.css\">\n</head>\
                    <body>\n<script src=\"dashboard.js\"></script>\n</body></html>\n";
        let page = assemble(html, "b{}", "go()");
        assert!(!page.contains("href=\"dashboard.css\""));
        assert!(!page.contains("src=\"dashboard.js\""));
        assert!(page.contains(&format!("<style nonce=\"{NONCE}\">\nb{{}}\n</style>")));
        assert!(page.contains(&format!("<script nonce=\"{NONCE}\">\ngo()\n</script>")));
        let bare = assemble("<html><head></head><body>x</body></html>", "b{}", "go()");
        let style = bare.find("<style").unwrap_or(usize::MAX);
        let head_end = bare.find("</head>").unwrap_or(0);
        let script = bare.find("<script").unwrap_or(0);
        assert!(style < head_end && head_end < script);
        assert!(script < bare.find("</body>").unwrap_or(0));
    }

    #[test]
    fn every_answer_has_its_own_nonce() {
        let policy = |r: &Response| r.headers()[header::CONTENT_SECURITY_POLICY].clone();
        let (a, b) = (page(), page());
        assert_ne!(policy(&a), policy(&b));
        let text = policy(&a).to_str().map(str::to_string).unwrap_or_default();
        assert!(text.contains("script-src 'nonce-"), "{text}");
        assert!(!text.contains("unsafe"), "{text}");
    }
}
