//! A server's `tools/list`, split into the tools fleet can offer and those it leaves out (with
//! why), each description capped.

use rmcp::{Peer, RoleClient};
use serde_json::Value;

use super::super::client::McpError;
use super::McpToolInfo;

/// The most of a tool's description the model is shown: every request carries every tool's
/// description, so one server's essay must not crowd out the conversation.
const MAX_DESCRIPTION_CHARS: usize = 2_048;

fn capped_description(text: &str) -> String {
    match text.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((cut, _)) => format!("{}… [description cut]", &text[..cut]),
        None => text.to_string(),
    }
}

/// Every tool the server lists, split into those fleet can offer and those it leaves out.
pub(super) async fn list_tools(
    server: &str,
    peer: &Peer<RoleClient>,
) -> Result<(Vec<McpToolInfo>, Vec<(String, String)>), McpError> {
    let listed = peer.list_all_tools().await.map_err(|e| McpError::Connect {
        server: server.to_string(),
        message: format!("tools/list: {e}"),
    })?;
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    for tool in listed {
        let value = serde_json::to_value(&tool).unwrap_or(Value::Null);
        let name = value["name"].as_str().unwrap_or_default().to_string();
        let schema = value.get("inputSchema").cloned().unwrap_or(Value::Null);
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            skipped.push((
                name,
                format!("its input schema is not an object schema: {schema}"),
            ));
            continue;
        }
        let offered = super::super::mcp_tool_name(server, &name);
        if offered.len() > super::super::tool::MAX_TOOL_NAME {
            skipped.push((
                name,
                format!(
                    "{offered} is longer than the {} characters a tool name may have",
                    super::super::tool::MAX_TOOL_NAME
                ),
            ));
            continue;
        }
        if let Some(first) = tools
            .iter()
            .find(|t: &&McpToolInfo| super::super::mcp_tool_name(server, &t.name) == offered)
        {
            skipped.push((
                name.clone(),
                format!("it would be offered as {offered}, like {:?}", first.name),
            ));
            continue;
        }
        tools.push(McpToolInfo {
            description: capped_description(value["description"].as_str().unwrap_or_default()),
            input_schema: schema,
            read_only_hint: value["annotations"]["readOnlyHint"]
                .as_bool()
                .unwrap_or(false),
            annotations: value.get("annotations").cloned().unwrap_or(Value::Null),
            name,
        });
    }
    Ok((tools, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_descriptions_are_cut_on_a_character_boundary() {
        assert_eq!(capped_description("short"), "short");
        let long = "é".repeat(MAX_DESCRIPTION_CHARS + 10);
        let cut = capped_description(&long);
        assert!(cut.starts_with(&"é".repeat(MAX_DESCRIPTION_CHARS)));
        assert!(cut.ends_with("[description cut]"));
        assert_eq!(
            cut.chars().count(),
            MAX_DESCRIPTION_CHARS + " [description cut]".len() + 1
        );
    }
}
