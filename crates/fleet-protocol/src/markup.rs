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
    value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of ` name="…"` in a tag's head, unescaped; values are escaped, so the next `"`
/// ends it.
pub(crate) fn attribute(head: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = head.find(&key)? + key.len();
    let end = start + head[start..].find('"')?;
    Some(unescape(&head[start..end]))
}
