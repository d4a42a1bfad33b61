//! The bytes the lead signs for one entry. They must be exactly what Claude Code signs, which
//! is JS `JSON.stringify` of an array of strings and nulls, so the string quoting here follows
//! ECMAScript's `QuoteJSONString` by hand instead of trusting another serializer to agree.

use std::fmt::Write;

use fleet_protocol::MailEntry;

/// The first element of every signed array: which kind of thing the signature covers, so a
/// signature over an entry cannot be replayed as one over something else.
pub const SIGNED_ENTRY_TAG: &str = "claude-team-lead-entry-v1";

/// The first element of what the user's own key signs (`fleet team send`): another tag than
/// the lead's, so a signature made by one key for one purpose never passes for the other.
pub const USER_ENTRY_TAG: &str = "fleet-user-entry-v1";

/// The UTF-8 text the lead signs for `entry`: `[tag, msg_id, from, timestamp, text,
/// summary|null, color|null, from_plugin|null]`, compact. `from_plugin` is always null: fleet
/// never writes it. `msgV`, `type`, `read` and `lead_sig` itself are not covered.
pub fn signed_payload(entry: &MailEntry) -> String {
    tagged_payload(SIGNED_ENTRY_TAG, entry)
}

/// [`signed_payload`] under another first element (`tag`).
pub fn tagged_payload(tag: &str, entry: &MailEntry) -> String {
    let mut out = String::with_capacity(96 + entry.text.len());
    out.push('[');
    let fields = [
        Some(tag),
        Some(entry.msg_id.as_str()),
        Some(entry.from.as_str()),
        Some(entry.timestamp.as_str()),
        Some(entry.text.as_str()),
        entry.summary.as_deref(),
        entry.color.as_deref(),
        None,
    ];
    for (i, field) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match field {
            Some(s) => push_js_string(&mut out, s),
            None => out.push_str("null"),
        }
    }
    out.push(']');
    out
}

/// `s` quoted as `JSON.stringify` quotes it: the two-character escapes for `"`, `\`, and
/// backspace, form feed, newline, carriage return, tab; `\u00xx` (lowercase hex) for the other
/// control characters below U+0020; everything else, DEL, U+2028/U+2029 and astral characters
/// included, as itself. (JS escapes lone surrogates too; a Rust `str` cannot hold one.)
fn push_js_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(s: &str) -> String {
        let mut out = String::new();
        push_js_string(&mut out, s);
        out
    }

    /// `JSON.stringify` of the string of every code point 0–127, from node 20.
    const NODE_ASCII: &str = concat!(
        r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#,
        r#"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c"#,
        r##"\u001d\u001e\u001f !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ"##,
        r#"[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"#,
        "\u{7f}\""
    );

    #[test]
    fn ascii_is_quoted_as_node_quotes_it() {
        let all: String = (0u8..128).map(char::from).collect();
        assert_eq!(quoted(&all), NODE_ASCII);
    }

    #[test]
    fn quoting_agrees_with_serde_json_beyond_ascii() {
        // serde_json is the other obvious writer; where both are right they must agree, so a
        // difference here would point at a bug in one of them.
        let sample: String = (0u32..0x3000)
            .chain([0xfeff, 0xfffd, 0x1f680, 0x10ffff])
            .filter_map(char::from_u32)
            .collect();
        let serde = serde_json::to_string(&sample).expect("a string serializes");
        assert_eq!(quoted(&sample), serde);
        assert!(quoted("\u{2028}\u{2029}").contains('\u{2028}'));
    }

    #[test]
    fn payload_is_the_tagged_array_with_nulls_for_missing_fields() {
        let entry = MailEntry::new("team-lead", "hi", "2026-12-01T17:00:00.000Z", "m1");
        assert_eq!(
            signed_payload(&entry),
            r#"["claude-team-lead-entry-v1","m1","team-lead","2026-12-01T17:00:00.000Z","hi",null,null,null]"#
        );
        let entry = entry
            .with_summary(Some("s".into()))
            .with_color(Some("blue".into()));
        assert!(signed_payload(&entry).ends_with(r#""hi","s","blue",null]"#));
    }
}
