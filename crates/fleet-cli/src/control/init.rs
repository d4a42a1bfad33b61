//! `initialize`, the SDK host's first request: what it adds to the session (agent definitions,
//! hook callbacks, a system prompt) is read before the session is built, and the answer tells
//! the host what the session offers once it is.

use crate::args::PrintArgs;
use fleet_protocol::control::{
    AgentInfo, ApiAccount, CommandInfo, Initialize, InitializeAnswer, ModelInfo,
};
use fleet_protocol::PermissionMode;
use fleet_runtime::definitions::{AgentCatalog, ModelSetting};
use fleet_runtime::hooks::{HookSet, SdkHooksError};
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

/// Why an `initialize` request cannot be used; the message names the field.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Hooks(#[from] SdkHooksError),
    #[error("initialize: {field} must be {expected}")]
    Shape {
        field: &'static str,
        expected: &'static str,
    },
    #[error("initialize: settings were also given with --settings; give one")]
    SettingsTwice,
    /// Policy fleet cannot enforce must not be taken as if it were in force.
    #[error(
        "initialize: fleet does not support managedSettings; pass them as settings (the \
         TypeScript SDK's settings option)"
    )]
    ManagedSettings,
}

fn shape(field: &'static str, expected: &'static str) -> InitError {
    InitError::Shape { field, expected }
}

/// The field, unless absent or `null`.
fn given(field: &Option<Value>) -> Option<&Value> {
    field.as_ref().filter(|v| !v.is_null())
}

impl InitRequest {
    /// Reads the request and folds what belongs to the command line into `args`: `agents`
    /// join `--agents` (the host's win a name clash), `systemPrompt` / `appendSystemPrompt`
    /// replace the flags. An error names the field.
    pub fn read(request: &Initialize, args: &mut PrintArgs) -> Result<Self, InitError> {
        let (hooks, warnings) = HookSet::from_sdk(request.hooks.as_ref().unwrap_or(&Value::Null))?;
        for warning in warnings {
            eprintln!("fleet: {warning}");
        }
        if let Some(agents) = given(&request.agents) {
            args.agents = Some(merge_agents(args.agents.as_deref(), agents)?);
        }
        match given(&request.system_prompt) {
            None => {}
            Some(Value::String(text)) => args.system_prompt = Some(text.clone()),
            Some(Value::Array(parts)) => {
                let parts: Option<Vec<&str>> = parts.iter().map(Value::as_str).collect();
                let parts = parts.ok_or(shape("systemPrompt", "a list of strings"))?;
                args.system_prompt = Some(parts.join("\n\n"));
            }
            Some(_) => return Err(shape("systemPrompt", "a string or a list")),
        }
        match given(&request.append_system_prompt) {
            None => {}
            Some(Value::String(text)) => args.append_system_prompt = Some(text.clone()),
            Some(_) => return Err(shape("appendSystemPrompt", "a string")),
        }
        match given(&request.sdk_mcp_servers) {
            None => {}
            Some(Value::Array(names)) => {
                let mut servers = Map::new();
                for name in names {
                    let name = name
                        .as_str()
                        .ok_or(shape("sdkMcpServers", "a list of server names"))?;
                    servers.insert(name.into(), json!({"type": "sdk", "name": name}));
                }
                if !servers.is_empty() {
                    args.mcp_config
                        .push(json!({"mcpServers": servers}).to_string());
                }
            }
            Some(_) => return Err(shape("sdkMcpServers", "a list of server names")),
        }
        let settings = match given(&request.settings) {
            None => false,
            Some(_) if args.settings.is_some() => return Err(InitError::SettingsTwice),
            Some(Value::String(text)) => {
                args.settings = Some(text.clone());
                true
            }
            Some(value @ Value::Object(_)) => {
                args.settings = Some(value.to_string());
                true
            }
            Some(_) => return Err(shape("settings", "an object or a JSON string")),
        };
        match given(&request.disallowed_tools) {
            None => {}
            Some(Value::Array(rules)) => {
                for rule in rules {
                    let rule = rule
                        .as_str()
                        .ok_or(shape("disallowedTools", "a list of rules (strings)"))?;
                    args.disallowed_tools.push(rule.to_string());
                }
            }
            Some(_) => return Err(shape("disallowedTools", "a list of rules")),
        }
        let mcp_servers = match given(&request.mcp_servers) {
            None => false,
            Some(servers @ Value::Object(_)) => {
                args.mcp_config
                    .push(json!({"mcpServers": servers}).to_string());
                true
            }
            Some(_) => return Err(shape("mcpServers", "an object keyed by name")),
        };
        if given(&request.managed_settings).is_some() {
            return Err(InitError::ManagedSettings);
        }
        let ignored = request
            .other
            .iter()
            .filter(|(key, value)| !value.is_null() && !extra_known(key))
            .map(|(key, _)| key.clone())
            .collect();
        Ok(Self {
            hooks,
            settings,
            mcp_servers,
            ignored,
        })
    }
}

/// Fields asking for nothing fleet would do differently (`jsonSchema` is read from the
/// command line's `--json-schema`; `sdkMcpServerManifests` are served another way: fleet asks
/// the SDK's servers over `mcp_message`).
fn extra_known(key: &str) -> bool {
    matches!(
        key,
        "excludeDynamicSections"
            | "systemPromptSnapshot"
            | "promptSuggestions"
            | "agentProgressSummaries"
            | "title"
    )
}

/// `--agents` JSON with the host's definitions added (theirs win a clash).
fn merge_agents(flag: Option<&str>, host: &Value) -> Result<String, InitError> {
    let Value::Object(host) = host else {
        return Err(shape("agents", "an object keyed by agent name"));
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
    mode: PermissionMode,
    request: &InitRequest,
) -> Value {
    let commands = skills
        .skills()
        .iter()
        .map(|skill| CommandInfo {
            name: skill.name.clone(),
            description: skill.description.clone(),
            argument_hint: String::new(),
        })
        .collect();
    let agents = agents
        .names()
        .into_iter()
        .filter_map(|name| agents.get(name))
        .map(|agent| AgentInfo {
            name: agent.name.clone(),
            description: agent.description.clone(),
            model: match &agent.model {
                Some(ModelSetting::Named(model)) => Some(model.clone()),
                _ => None,
            },
        })
        .collect();
    let models = [
        ("default", "Default", "The session's model"),
        ("opus", "Opus", "The most capable model"),
        ("sonnet", "Sonnet", "Capable and fast"),
        ("haiku", "Haiku", "The fastest model"),
    ]
    .into_iter()
    .map(|(value, display, description)| ModelInfo {
        value: value.to_string(),
        display_name: display.to_string(),
        description: description.to_string(),
        resolved_model: (value != "default").then(|| catalog.resolve_id(value)),
    })
    .collect();
    let answer = InitializeAnswer {
        commands,
        agents,
        output_style: "default".into(),
        available_output_styles: vec!["default".into()],
        models,
        account: ApiAccount {
            api_key_source: api_key_source().into(),
            api_provider: "firstParty".into(),
        },
        pid: std::process::id(),
        claude_code_version: PROTOCOL_VERSION.into(),
        fleet_version: env!("CARGO_PKG_VERSION").into(),
        current_permission_mode: mode,
        session_state: "idle".into(),
        hooks_applied: (!request.hooks.is_empty()).then_some(true),
        mcp_servers_applied: request.mcp_servers.then_some(true),
    };
    // Derived types with string keys only: this cannot fail.
    serde_json::to_value(answer).unwrap_or(Value::Null)
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

    /// The request as the wire reads it.
    fn body(value: Value) -> Initialize {
        use fleet_protocol::control::{ControlRequest, RequestBody};
        match serde_json::from_value(value).unwrap() {
            RequestBody::Known(ControlRequest::Initialize(request)) => *request,
            other => panic!("{other:?}"),
        }
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
        .unwrap_err()
        .to_string();
        assert!(err.contains("agents"), "{err}");
        let err = InitRequest::read(
            &body(json!({"subtype": "initialize", "hooks": {"Stop": [{}]}})),
            &mut args,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("hooks.Stop[0]"), "{err}");
    }
}
