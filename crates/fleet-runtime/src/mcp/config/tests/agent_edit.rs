//! Agents' `mcpServers` entries, and `fleet mcp add | remove` editing.

use super::super::*;
use super::env;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

fn configured() -> McpConfig {
    let sources = McpConfigSources {
        flags: vec![r#"{"mcpServers": {
            "github": {"command": "gh-mcp"},
            "broken": {"command": "${NOT_SET_ANYWHERE}"}
        }}"#
        .into()],
        ..Default::default()
    };
    sources.load(&env)
}

#[test]
fn agent_entries_are_names_or_inline_definitions() {
    let entries = [
        json!("github"),
        json!({"scratch": {"command": "mem", "cwd": "w"}, "web": {"type": "http", "url": "http://h/"}}),
    ];
    let (servers, errors) = parse_agent_servers("helper", &entries, Path::new("/proj"), &env);
    assert_eq!(errors, []);
    assert_eq!(servers.len(), 3);
    assert_eq!(servers[0], AgentMcpServer::Named("github".into()));
    let AgentMcpServer::Inline(scratch) = &servers[1] else {
        panic!("inline expected")
    };
    assert_eq!(scratch.source, McpSource::Agent("helper".into()));
    assert!(matches!(&scratch.transport,
        McpTransport::Stdio { cwd: Some(c), .. } if c == Path::new("/proj/w")));
    assert_eq!(servers[2].name(), "web");
}

#[test]
fn bad_agent_entries_are_reported_and_the_rest_load() {
    let entries = [
        json!(3),
        json!({}),
        json!("bad name"),
        json!({"x": {"url": "http://h/"}}),
        json!("ok"),
        json!("ok"),
    ];
    let (servers, errors) = parse_agent_servers("a", &entries, Path::new("/"), &env);
    assert_eq!(servers, [AgentMcpServer::Named("ok".into())]);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 5, "{messages:?}");
    assert!(messages[0].contains("entry 1") && messages[0].contains("a number"));
    assert!(messages[1].contains("an empty object"));
    assert!(messages[2].contains("\"bad name\""));
    assert!(messages[3].contains("no \"type\""));
    assert!(messages[4].contains("listed twice"));
    assert!(errors
        .iter()
        .all(|e| e.origin() == &McpSource::Agent("a".into())));
}

#[test]
fn an_agent_s_servers_resolve_against_the_configuration_and_every_missing_one_is_named() {
    let config = configured();
    let entries = [
        json!("github"),
        json!("nowhere"),
        json!("broken"),
        json!({"own": {"command": "own"}}),
        json!({"own_bad": {"command": "${ALSO_NOT_SET}"}}),
    ];
    let resolved = agent_servers("helper", &entries, &config, Path::new("/"), &env);
    assert_eq!(resolved.shared, ["github"]);
    assert_eq!(resolved.inline.len(), 1);
    assert_eq!(resolved.inline[0].name, "own");
    let unavailable: Vec<&str> = resolved
        .unavailable
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(unavailable, ["own_bad", "nowhere", "broken"]);
    assert!(resolved.unavailable[0].1.contains("ALSO_NOT_SET"));
    assert!(resolved.unavailable[1]
        .1
        .contains("no MCP server of that name"));
    assert!(resolved.unavailable[2].1.contains("NOT_SET_ANYWHERE"));
}

fn stdio_spec() -> ServerSpec {
    ServerSpec::Stdio {
        command: "npx".into(),
        args: vec!["-y".into(), "pkg".into()],
        env: BTreeMap::from([("TOKEN".into(), "${TOKEN}".into())]),
    }
}

#[test]
fn add_creates_the_file_and_writes_variables_unexpanded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub/.mcp.json");
    add_server(&file, "pkg", &stdio_spec()).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {"pkg": {
            "type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "${TOKEN}"}
        }}})
    );
    // What add writes, the loader reads back.
    let sources = McpConfigSources {
        project_files: vec![file],
        ..Default::default()
    };
    let config = sources.load(&env);
    assert_eq!(config.errors, []);
    assert!(matches!(&config.get("pkg").unwrap().transport,
        McpTransport::Stdio { env, .. } if env["TOKEN"] == "t0k"));
}

#[test]
fn add_and_remove_keep_every_other_key_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let before = r#"{"zeta": 1, "permissions": {"allow": ["Read"]}, "mcpServers": {"old": {"command": "o"}}, "alpha": true}"#;
    std::fs::write(&file, before).unwrap();
    let spec = ServerSpec::Http {
        url: "https://h/mcp".into(),
        headers: BTreeMap::from([("Authorization".into(), "Bearer ${T}".into())]),
    };
    add_server(&file, "web", &spec).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let keys: Vec<String> =
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
            .unwrap()
            .keys()
            .cloned()
            .collect();
    assert_eq!(keys, ["zeta", "permissions", "mcpServers", "alpha"]);
    assert!(text.ends_with('\n'));
    assert_eq!(server_names(&file).unwrap(), ["old", "web"]);
    assert!(remove_server(&file, "old").unwrap());
    assert!(!remove_server(&file, "old").unwrap());
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(after["permissions"], json!({"allow": ["Read"]}));
    assert_eq!(
        after["mcpServers"],
        json!({"web": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}}})
    );
}

#[test]
fn add_refuses_a_taken_name_a_bad_name_and_a_bad_url() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".mcp.json");
    add_server(&file, "pkg", &stdio_spec()).unwrap();
    let before = std::fs::read(&file).unwrap();
    let taken = add_server(&file, "pkg", &stdio_spec()).unwrap_err();
    assert!(matches!(taken, McpEditError::Exists { .. }));
    assert!(
        taken.to_string().contains("fleet mcp remove pkg"),
        "{taken}"
    );
    assert!(add_server(&file, "a.b", &stdio_spec()).is_err());
    let sse = ServerSpec::Sse {
        url: "localhost:1".into(),
        headers: BTreeMap::new(),
    };
    assert!(add_server(&file, "s", &sse)
        .unwrap_err()
        .to_string()
        .contains("not an http"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_file_fleet_cannot_parse_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    for text in ["{oops", "[]", r#"{"mcpServers": 3}"#] {
        let file = dir.path().join("x.json");
        std::fs::write(&file, text).unwrap();
        let err = add_server(&file, "pkg", &stdio_spec()).unwrap_err();
        assert!(
            matches!(err, McpEditError::Malformed { .. }),
            "{text}: {err}"
        );
        assert!(err.to_string().contains("left unchanged"));
        assert!(remove_server(&file, "pkg").is_err() || text != r#"{"mcpServers": 3}"#);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary files left behind");
}

#[test]
fn the_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    std::fs::write(&file, "{}").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    add_server(&file, "pkg", &stdio_spec()).unwrap();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn project_scope_writes_the_nearest_mcp_json_or_one_at_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let deep = repo.join("a/b");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(project_file_for_writing(&deep), repo.join(".mcp.json"));
    std::fs::write(repo.join("a/.mcp.json"), "{}").unwrap();
    assert_eq!(project_file_for_writing(&deep), repo.join("a/.mcp.json"));
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    assert_eq!(project_file_for_writing(&loose), loose.join(".mcp.json"));
}
