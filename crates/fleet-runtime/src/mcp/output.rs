//! Turning a `tools/call` result into what the model reads. Works on the wire JSON of the
//! result rather than rmcp's structs, so a new content kind from a newer server degrades to a
//! short placeholder instead of failing the call.

use fleet_tools::ToolOutput;
use serde_json::Value;

/// The default cap on one MCP result, in estimated tokens (`MAX_MCP_OUTPUT_TOKENS`).
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;

/// Characters per estimated token: the same rough rule Claude Code applies to MCP output.
const CHARS_PER_TOKEN: usize = 4;

/// `MAX_MCP_OUTPUT_TOKENS` from the environment, or the default when unset or not a number.
pub fn max_output_tokens_from_env() -> usize {
    std::env::var("MAX_MCP_OUTPUT_TOKENS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
}

/// Image types the Messages API accepts in a tool result; others stay a text placeholder.
const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The largest image (base64 characters) passed to the model: the API refuses images over
/// 5 MB, and one refused block would fail the whole request, not just this result.
const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024 * 4 / 3;

/// Maps a `CallToolResult` (as JSON) to a [`ToolOutput`]: text blocks as they are, images
/// as image blocks the model sees (with a one-line description in the text, so text-only
/// printers show something), embedded resources as their text; `isError` makes an error
/// result. The text is capped at `max_tokens`; images count against no token cap, only
/// against the API's own size limit.
pub fn map_call_result(result: &Value, max_tokens: usize) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for block in blocks {
        parts.push(render_block(block));
    }
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent") {
            parts.push(structured.to_string());
        }
    }
    let text = cap_text(&parts.join("\n"), max_tokens);
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut output = if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    };
    output.images = blocks.iter().filter_map(model_image).collect();
    let has_media = blocks.iter().any(|b| matches!(kind(b), "image" | "audio"));
    if has_media || result.get("structuredContent").is_some() {
        output = output.with_structured(result.clone());
    }
    output
}

/// The image of an `image` block, when the model can be shown it.
fn model_image(block: &Value) -> Option<fleet_protocol::ImageSource> {
    if kind(block) != "image" {
        return None;
    }
    let mime = block.get("mimeType").and_then(Value::as_str)?;
    let data = block.get("data").and_then(Value::as_str)?;
    (MODEL_IMAGE_TYPES.contains(&mime) && !data.is_empty() && data.len() <= MAX_IMAGE_BASE64).then(
        || fleet_protocol::ImageSource::Base64 {
            media_type: mime.to_string(),
            data: data.to_string(),
        },
    )
}

fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

fn render_block(block: &Value) -> String {
    let str_field = |name: &str| block.get(name).and_then(Value::as_str);
    match kind(block) {
        "text" => str_field("text").unwrap_or_default().to_string(),
        "image" | "audio" => {
            let mime = str_field("mimeType").unwrap_or("unknown type");
            let size = str_field("data").map_or(0, |d| d.len() * 3 / 4);
            format!("[{}: {mime}, about {size} bytes]", kind(block))
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => {
                    let mime = resource
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("binary");
                    format!("[resource {uri}: {mime}, not text]")
                }
            }
        }
        "resource_link" => format!(
            "[resource link {}{}]",
            str_field("uri").unwrap_or(""),
            str_field("name")
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
        other => format!("[unsupported content: {other}]"),
    }
}

/// Cuts `text` to about `max_tokens` tokens (chars / 4) on a character boundary and says so.
pub fn cap_text(text: &str, max_tokens: usize) -> String {
    let max_chars = max_tokens.saturating_mul(CHARS_PER_TOKEN);
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return text.to_string();
    }
    let cut = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n\n[MCP output truncated: about {} tokens, over the limit of {max_tokens}; \
         only the first {max_chars} characters are shown. Ask the tool for less \
         (a narrower query, pagination), or raise MAX_MCP_OUTPUT_TOKENS.]",
        &text[..cut],
        total_chars.div_ceil(CHARS_PER_TOKEN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_image_and_resource_blocks_become_text() {
        let out = map_call_result(
            &json!({"content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}
            ]}),
            100,
        );
        assert_eq!(
            out.content,
            "hello\n[image: image/png, about 3 bytes]\n[resource file:///a]\nbody"
        );
        assert!(!out.is_error);
        assert!(
            out.structured.is_some(),
            "the image stays available to printers"
        );
        assert_eq!(
            out.images,
            vec![fleet_protocol::ImageSource::Base64 {
                media_type: "image/png".into(),
                data: "AAAA".into()
            }],
            "the model is shown the picture itself"
        );
    }

    #[test]
    fn images_the_api_would_refuse_stay_text() {
        let huge = "A".repeat(MAX_IMAGE_BASE64 + 4);
        let out = map_call_result(
            &json!({"content": [
                {"type": "image", "data": "AAAA", "mimeType": "image/tiff"},
                {"type": "image", "data": huge, "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
            ]}),
            100,
        );
        assert!(out.images.is_empty());
        assert!(out.content.contains("[image: image/tiff"));
        assert!(out.content.contains("[audio: audio/wav"));
    }

    #[test]
    fn is_error_makes_an_error_result() {
        let out = map_call_result(
            &json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
            100,
        );
        assert!(out.is_error);
        assert_eq!(out.content, "no");
    }

    #[test]
    fn the_cap_cuts_on_a_character_boundary_with_a_note() {
        let text = "é".repeat(50);
        let capped = cap_text(&text, 5);
        assert!(capped.starts_with(&"é".repeat(20)));
        assert!(!capped.starts_with(&"é".repeat(21)));
        assert!(capped.contains("MAX_MCP_OUTPUT_TOKENS"));
        assert_eq!(cap_text("short", 5), "short");
    }
}
