//! The answers to the UI's informational commands — `/model` choices, `/mcp`, `/agents` —
//! worked out from the session's parts, as plain text or choices. Kept apart from the
//! driver so each reads as what the person sees.

use fleet_model::{Catalog, Provider};
use fleet_runtime::definitions::AgentCatalog;
use fleet_runtime::subagent::McpSession;
use fleet_tui::port::Choice;

/// The models `/model` offers: the session's own first, then the aliases (Anthropic only;
/// an OpenAI-compatible server serves what it serves, so only the current one is listed).
pub fn model_choices(catalog: &Catalog, provider: Provider, start: &str) -> Vec<Choice> {
    let mut items = vec![Choice {
        id: "default".into(),
        label: "Default".into(),
        detail: format!("the session's model ({start})"),
    }];
    if provider != Provider::Anthropic {
        return items;
    }
    for (alias, label, what) in [
        ("opus", "Opus", "the most capable"),
        ("sonnet", "Sonnet", "capable and fast"),
        ("haiku", "Haiku", "the fastest"),
    ] {
        items.push(Choice {
            id: alias.into(),
            label: label.into(),
            detail: format!("{} · {what}", catalog.resolve_id(alias)),
        });
    }
    items
}

/// `/mcp`: each server, its state, and why it failed.
pub async fn mcp_status(servers: &McpSession) -> String {
    let reports = servers.servers.status().await;
    if reports.is_empty() && servers.config.unapproved.is_empty() {
        return "No MCP servers are configured (.mcp.json, settings, --mcp-config).".into();
    }
    let mut out = String::from("MCP servers:");
    for report in reports {
        let tools = report
            .tools
            .as_ref()
            .map(|t| format!(" · {} tool{}", t.len(), if t.len() == 1 { "" } else { "s" }))
            .unwrap_or_default();
        out.push_str(&format!("\n  {} — {}{tools}", report.name, report.status));
        if let Some(error) = report.error {
            out.push_str(&format!(": {error}"));
        }
    }
    for server in &servers.config.unapproved {
        out.push_str(&format!(
            "\n  {} — not started: {}",
            server.name,
            servers
                .config
                .approval
                .refusal(&server.name, &server.source.to_string())
        ));
    }
    out
}

/// `/agents`: every agent type the session can start, with where it is defined.
pub fn agent_list(agents: &AgentCatalog) -> String {
    let mut out = String::from("Agent types:");
    for def in agents.agents() {
        let place = match def.source.path() {
            Some(path) => format!("{} {}", def.source.label(), path.display()),
            None => def.source.label().to_string(),
        };
        let description: String = def.description.lines().next().unwrap_or("").to_string();
        out.push_str(&format!("\n  {} ({place}) — {description}", def.name));
    }
    out
}
