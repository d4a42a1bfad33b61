//! `.mcp.json` (and `--mcp-config` JSON): every server definition parsed, `${VAR}` and
//! `${VAR:-default}` expanded, names checked; also an agent's inline `mcpServers` list.
//! Checks: no panic, and every server that loads has a valid name.
#![no_main]

use fleet_fuzz::scratch;
use fleet_runtime::mcp::config::McpConfigSources;
use fleet_runtime::mcp::config::{check_name, expand::expand, parse_agent_servers};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Some variables set (one empty), the rest unset: both branches of every expansion.
fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/fuzz/home".into()),
        "EMPTY" => Some(String::new()),
        "TOKEN" => Some("${TOKEN}".into()),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = expand(text, &lookup, &mut Vec::new());
    let dir = scratch();
    let sources = if text.trim_start().starts_with('{') {
        // Inline `--mcp-config '{…}'`: no file.
        McpConfigSources {
            cwd: dir.to_path_buf(),
            flags: vec![text.to_string()],
            strict: true,
            ..McpConfigSources::default()
        }
    } else {
        let file = dir.join(".mcp.json");
        if std::fs::write(&file, text).is_err() {
            return;
        }
        McpConfigSources {
            cwd: dir.to_path_buf(),
            project_files: vec![file],
            ..McpConfigSources::default()
        }
    };
    let config = sources.load(&lookup);
    for server in config.servers.iter().chain(&config.unapproved) {
        assert!(
            check_name(&server.name).is_ok(),
            "server {:?} loaded",
            server.name
        );
    }
    for error in &config.errors {
        let _ = error.to_string();
    }
    if let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(text) {
        let _ = parse_agent_servers("fuzzer", &entries, dir, &lookup);
    }
});
