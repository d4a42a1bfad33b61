//! The escaping shared by the tags fleet wraps around text that reaches a model as a user-role
//! message without coming from the user (`<task-notification>`, `<agent-message>`): once `&`,
//! `<` and `>` are escaped, the wrapped text can neither close its tag early nor open a tag of
//! its own, while ordinary prose stays readable.

/// `&`, `<` and `>` as entities.
pub(crate) fn escape(value: &str) -> String {
    if !value.contains(['&', '<', '>']) {
        return value.to_string();
    }
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// [`escape`], plus `"`, for an attribute value written between double quotes.
pub(crate) fn escape_attribute(value: &str) -> String {
    escape(value).replace('"', "&quot;")
}

/// The inverse of [`escape_attribute`] (and so of [`escape`]).
pub(crate) fn unescape(value: &str) -> String {
    if !value.contains('&') {
        return value.to_string();
    }
    value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of ` name="…"` in a tag's head, unescaped.
///
/// The head is read pair by pair from its start: values are escaped, so the next `"` ends
/// each one. Searching the head for ` name="` instead would find it inside an earlier value
/// that ends in ` name=` (its closing quote completing the pattern), letting a sender's name
/// or summary forge the attributes after it.
pub(crate) fn attribute(head: &str, name: &str) -> Option<String> {
    let mut rest = head;
    loop {
        let eq = rest.find("=\"")?;
        let key = &rest[..eq];
        let after = &rest[eq + 2..];
        let end = after.find('"')?;
        if key.strip_prefix(' ') == Some(name) {
            return Some(unescape(&after[..end]));
        }
        rest = &after[end + 1..];
    }
}
