//! `initialize`, the SDK host's first request: what it adds to the session (agent definitions,
//! hook callbacks, a system prompt) is read before the session is built, and the answer tells
//! the host what the session offers once it is.

use crate::args::PrintArgs;
use fleet_runtime::definitions::{AgentCatalog, ModelSetting};
use fleet_runtime::hooks::HookSet;
use fleet_runtime::skills::SkillSet;
use serde_json::{json, Map, Value};

/// The version of Claude Code whose protocol fleet speaks, reported where the SDKs look for
/// one (they warn about a CLI that reports none, and gate features on it).
pub const PROTOCOL_VERSION: &str = "2.1.328";

/// What an `initialize` request asks of the session.
#[derive(Debug, Default)]
pub struct InitRequest {
    pub hooks: HookSet,
    /// The request carried a settings layer: the settings must be read again.
    pub settings: bool,
    /// The request carried MCP servers (said back as `mcp_servers_applied`).
    pub mcp_servers: bool,
    /// Parts of the request fleet reads but does not act on, named in a warning.
    pub ignored: Vec<String>,
}

impl InitRequest {
    /// Reads the request and folds what belongs to the command line into `args`: `agents`
    /// join `--agents` (the host's win a name clash), `systemPrompt` / `appendSystemPrompt`
    /// replace the flags, `jsonSchema` is `--json-schema`. An error names the field.
    pub fn read(body: &Map<String, Value>, args: &mut PrintArgs) -> Result<Self, String> {
        let (hooks, warnings) = HookSet::from_sdk(body.get("hooks").unwrap_or(&Value::Null))
            .map_err(|e| e.to_string())?;
        for warning in warnings {
            eprintln!("fleet: {warning}");
        }
        if let Some(agents) = body.get("agents").filter(|v| !v.is_null()) {
            args.agents = Some(merge_agents(args.agents.as_deref(), agents)?);
        }
        match body.get("systemPrompt") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => args.system_prompt = Some(text.clone()),
            Some(Value::Array(parts)) => {
                let parts: Option<Vec<&str>> = parts.iter().map(Value::as_str).collect();
                let parts = parts.ok_or("initialize: systemPrompt must hold strings")?;
                args.system_prompt = Some(parts.join("\n\n"));
            }
            Some(_) => return Err("initialize: systemPrompt must be a string or a list".into()),
        }
        match body.get("appendSystemPrompt") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => args.append_system_prompt = Some(text.clone()),
            Some(_) => return Err("initialize: appendSystemPrompt must be a string".into()),
        }
        match body.get("sdkMcpServers") {
            None | Some(Value::Null) => {}
            Some(Value::Array(names)) => {
                let mut servers = Map::new();
                for name in names {
                    let name = name
                        .as_str()
                        .ok_or("initialize: sdkMcpServers must hold server names")?;
                    servers.insert(name.into(), json!({"type": "sdk", "name": name}));
                }
                if !servers.is_empty() {
                    args.mcp_config
                        .push(json!({"mcpServers": servers}).to_string());
                }
            }
            Some(_) => return Err("initialize: sdkMcpServers must be a list of names".into()),
        }
        let settings = match body.get("settings") {
            None | Some(Value::Null) => false,
            Some(_) if args.settings.is_some() => {
                return Err("initialize: settings were also given with --settings; give one".into())
            }
            Some(Value::String(text)) => {
                args.settings = Some(text.clone());
                true
            }
            Some(value @ Value::Object(_)) => {
                args.settings = Some(value.to_string());
                true
            }
            Some(_) => return Err("initialize: settings must be an object or a JSON string".into()),
        };
        match body.get("disallowedTools") {
            None | Some(Value::Null) => {}
            Some(Value::Array(rules)) => {
                for rule in rules {
                    let rule = rule
                        .as_str()
                        .ok_or("initialize: disallowedTools must hold strings")?;
                    args.disallowed_tools.push(rule.to_string());
                }
            }
            Some(_) => return Err("initialize: disallowedTools must be a list of rules".into()),
        }
        let mcp_servers = match body.get("mcpServers") {
            None | Some(Value::Null) => false,
            Some(servers @ Value::Object(_)) => {
                args.mcp_config
                    .push(json!({"mcpServers": servers}).to_string());
                true
            }
            Some(_) => return Err("initialize: mcpServers must be an object keyed by name".into()),
        };
        // Policy fleet cannot enforce must not be taken as if it were in force.
        if body.get("managedSettings").is_some_and(|v| !v.is_null()) {
            return Err(
                "initialize: fleet does not support managedSettings; pass them as \
                        settings (the TypeScript SDK's settings option)"
                    .into(),
            );
        }
        let mut ignored = Vec::new();
        for key in body.keys() {
            let known = matches!(
                key.as_str(),
                "subtype"
                    | "hooks"
                    | "agents"
                    | "systemPrompt"
                    | "appendSystemPrompt"
                    | "settings"
                    | "disallowedTools"
                    | "mcpServers"
            );
            if !known && !body[key].is_null() && !extra_known(key) {
                ignored.push(key.clone());
            }
        }
        Ok(Self {
            hooks,
            settings,
            mcp_servers,
            ignored,
        })
    }
}

/// Fields read elsewhere (`jsonSchema`), served another way (`sdkMcpServerManifests`: fleet
/// asks the SDK's servers over `mcp_message`), or asking for nothing fleet would do
/// differently.
fn extra_known(key: &str) -> bool {
    matches!(
        key,
        "jsonSchema"
            | "sdkMcpServers"
            | "excludeDynamicSections"
            | "systemPromptSnapshot"
            | "promptSuggestions"
            | "agentProgressSummaries"
            | "title"
    )
}

/// `--agents` JSON with the host's definitions added (theirs win a clash).
fn merge_agents(flag: Option<&str>, host: &Value) -> Result<String, String> {
    let Value::Object(host) = host else {
        return Err("initialize: agents must be an object keyed by agent name".into());
    };
    let mut merged: Map<String, Value> = match flag {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            // `--agents` reports its own error when the session is built.
            _ => return Ok(text.to_string()),
        },
        None => Map::new(),
    };
    for (name, definition) in host {
        merged.insert(name.clone(), definition.clone());
    }
    Ok(Value::Object(merged).to_string())
}

/// The answer to `initialize`, once the session is built.
pub fn response(
    agents: &AgentCatalog,
    skills: &SkillSet,
    catalog: &fleet_model::Catalog,
    mode: &str,
    request: &InitRequest,
) -> Value {
    let commands: Vec<Value> = skills
        .skills()
        .iter()
        .map(|skill| {
            json!({"name": skill.name, "description": skill.description, "argumentHint": ""})
        })
        .collect();
    let agents: Vec<Value> = agents
        .names()
        .into_iter()
        .filter_map(|name| agents.get(name))
        .map(|agent| {
            let mut info = json!({"name": agent.name, "description": agent.description});
            if let Some(ModelSetting::Named(model)) = &agent.model {
                info["model"] = json!(model);
            }
            info
        })
        .collect();
    let models: Vec<Value> = [
        ("default", "Default", "The session's model"),
        ("opus", "Opus", "The most capable model"),
        ("sonnet", "Sonnet", "Capable and fast"),
        ("haiku", "Haiku", "The fastest model"),
    ]
    .into_iter()
    .map(|(value, display, description)| {
        let mut info = json!({"value": value, "displayName": display, "description": description});
        if value != "default" {
            info["resolvedModel"] = json!(catalog.resolve_id(value));
        }
        info
    })
    .collect();
    let mut body = json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": models,
        "account": {"apiKeySource": api_key_source(), "apiProvider": "firstParty"},
        "pid": std::process::id(),
        "claude_code_version": PROTOCOL_VERSION,
        "fleet_version": env!("CARGO_PKG_VERSION"),
        "current_permission_mode": mode,
        "session_state": "idle",
    });
    if !request.hooks.is_empty() {
        body["hooks_applied"] = json!(true);
    }
    if request.mcp_servers {
        body["mcp_servers_applied"] = json!(true);
    }
    body
}

fn api_key_source() -> &'static str {
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        "ANTHROPIC_API_KEY"
    } else {
        "none"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_hosts_agents_join_the_flags_and_win_a_clash() {
        let mut args = PrintArgs {
            agents: Some(r#"{"a": {"description": "flag a", "prompt": "x"}, "b": {"description": "b", "prompt": "y"}}"#.into()),
            ..PrintArgs::default()
        };
        InitRequest::read(
            &body(json!({"subtype": "initialize", "agents": {"a": {"description": "host a", "prompt": "z"}}})),
            &mut args,
        )
        .unwrap();
        let merged: Value = serde_json::from_str(args.agents.as_deref().unwrap()).unwrap();
        assert_eq!(merged["a"]["description"], "host a");
        assert_eq!(merged["b"]["description"], "b");
    }

    #[test]
    fn prompts_and_hooks_are_read_and_bad_ones_named() {
        let mut args = PrintArgs::default();
        let init = InitRequest::read(
            &body(json!({
                "subtype": "initialize",
                "systemPrompt": ["one", "two"],
                "appendSystemPrompt": "tail",
                "hooks": {"Stop": [{"hookCallbackIds": ["hook_0"]}]},
                "somethingNew": true,
            })),
            &mut args,
        )
        .unwrap();
        assert_eq!(args.system_prompt.as_deref(), Some("one\n\ntwo"));
        assert_eq!(args.append_system_prompt.as_deref(), Some("tail"));
        assert!(!init.hooks.is_empty());
        assert_eq!(init.ignored, vec!["somethingNew".to_string()]);
        let err = InitRequest::read(
            &body(json!({"subtype": "initialize", "agents": ["a"]})),
            &mut args,
        )
        .unwrap_err();
        assert!(err.contains("agents"), "{err}");
        let err = InitRequest::read(
            &body(json!({"subtype": "initialize", "hooks": {"Stop": [{}]}})),
            &mut args,
        )
        .unwrap_err();
        assert!(err.contains("hooks.Stop[0]"), "{err}");
    }
}
