//! Sources, precedence and errors that stay local.

use super::super::sources::project_layout;
use super::super::*;
use super::env;
use std::path::PathBuf;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        Self { _dir: dir, root }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Sources with every file under the fixture: `home/.claude.json`,
    /// `fleet/settings.json`, `repo/.mcp.json`, run from `repo`.
    fn sources(&self) -> McpConfigSources {
        let repo = self.root.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        McpConfigSources {
            cwd: repo.clone(),
            claude_json: Some(self.root.join("home/.claude.json")),
            fleet_settings: Some(self.root.join("fleet/settings.json")),
            project_files: vec![repo.join(".mcp.json")],
            local_keys: vec![repo],
            flags: Vec::new(),
            strict: false,
            approval_files: Vec::new(),
            fleet_home: None,
        }
    }
}

fn servers(json_servers: &str) -> String {
    format!(r#"{{"other": 1, "mcpServers": {json_servers}}}"#)
}

fn command_of(config: &McpConfig, name: &str) -> String {
    match &config.get(name).expect(name).transport {
        McpTransport::Stdio { command, .. } => command.clone(),
        other => panic!("{name}: stdio expected, got {other:?}"),
    }
}

#[test]
fn missing_files_are_no_servers_and_no_errors() {
    let fx = Fixture::new();
    assert_eq!(fx.sources().load(&env), McpConfig::default());
}

#[test]
fn every_source_is_read_and_tagged_with_where_it_came_from() {
    let fx = Fixture::new();
    let claude = fx.write(
        "home/.claude.json",
        &format!(
            r#"{{"mcpServers": {{"a": {{"command": "a"}}}},
                "projects": {{"{}": {{"mcpServers": {{"d": {{"command": "d"}}}}}}}}}}"#,
            fx.root.join("repo").display()
        ),
    );
    let fleet = fx.write(
        "fleet/settings.json",
        &servers(r#"{"b": {"command": "b"}}"#),
    );
    let project = fx.write("repo/.mcp.json", &servers(r#"{"c": {"command": "c"}}"#));
    let flag = fx.write("extra.json", &servers(r#"{"e": {"command": "e"}}"#));
    let mut sources = fx.sources();
    sources.flags = vec![
        "../extra.json".into(),
        r#"{"mcpServers": {"f": {"command": "f"}}}"#.into(),
    ];
    let config = sources.load(&env);
    assert_eq!(config.errors, []);
    let found: Vec<_> = config
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.source.clone()))
        .collect();
    assert_eq!(
        found,
        [
            ("a", McpSource::ClaudeUser(claude.clone())),
            ("b", McpSource::FleetUser(fleet)),
            ("c", McpSource::Project(project)),
            ("d", McpSource::ClaudeLocal(claude)),
            ("e", McpSource::FlagFile(fx.root.join("repo/../extra.json"))),
            ("f", McpSource::FlagInline(1)),
        ]
    );
    assert!(flag.exists());
}

#[test]
fn later_sources_win_user_then_project_then_local_then_flags_in_order() {
    let fx = Fixture::new();
    let all = ["user_c", "user_f", "project", "local", "flag1", "flag2"];
    let entry = |winner: &str| {
        let names: Vec<String> = all
            .iter()
            .skip_while(|n| **n != winner)
            .map(|n| format!(r#""{n}": {{"command": "{winner}"}}"#))
            .collect();
        format!("{{{}}}", names.join(","))
    };
    fx.write(
        "home/.claude.json",
        &format!(
            r#"{{"mcpServers": {}, "projects": {{"{}": {{"mcpServers": {}}}}}}}"#,
            entry("user_c"),
            fx.root.join("repo").display(),
            entry("local")
        ),
    );
    fx.write("fleet/settings.json", &servers(&entry("user_f")));
    fx.write("repo/.mcp.json", &servers(&entry("project")));
    let mut sources = fx.sources();
    sources.flags = vec![
        format!(r#"{{"mcpServers": {}}}"#, entry("flag1")),
        format!(r#"{{"mcpServers": {}}}"#, entry("flag2")),
    ];
    let config = sources.load(&env);
    assert_eq!(config.errors, []);
    // Name n is defined by its own source and every earlier one: the last definer wins.
    for name in all {
        assert_eq!(command_of(&config, name), name);
    }
}

#[test]
fn strict_reads_only_the_flags() {
    let fx = Fixture::new();
    fx.write("home/.claude.json", &servers(r#"{"a": {"command": "a"}}"#));
    fx.write(
        "fleet/settings.json",
        &servers(r#"{"b": {"command": "b"}}"#),
    );
    fx.write("repo/.mcp.json", &servers(r#"{"c": {"command": "c"}}"#));
    let mut sources = fx.sources();
    sources.strict = true;
    sources.flags = vec![r#"{"mcpServers": {"f": {"command": "f"}}}"#.into()];
    let config = sources.load(&env);
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["f"]);
    sources.flags.clear();
    assert_eq!(sources.load(&env), McpConfig::default());
}

#[test]
fn a_malformed_file_is_named_with_its_problem_and_the_others_still_load() {
    let fx = Fixture::new();
    let bad = fx.write(
        "repo/.mcp.json",
        "{\"mcpServers\": {\"c\": {\"command\": }}}",
    );
    fx.write(
        "fleet/settings.json",
        &servers(r#"{"b": {"command": "b"}}"#),
    );
    let config = fx.sources().load(&env);
    assert_eq!(command_of(&config, "b"), "b");
    assert_eq!(config.errors.len(), 1, "{:?}", config.errors);
    let error = &config.errors[0];
    assert_eq!(error.origin(), &McpSource::Project(bad.clone()));
    assert_eq!(error.server(), None);
    assert!(
        matches!(
            error,
            McpConfigError::Source {
                problem: SourceProblem::NotJson(_),
                ..
            }
        ),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains(&bad.display().to_string()), "{text}");
    assert!(
        text.contains("not valid JSON") && text.contains("line 1"),
        "{text}"
    );
}

#[test]
fn documents_of_the_wrong_shape_are_errors_for_that_source_only() {
    let cases = [
        ("[1]", "expected a JSON object, found a list"),
        (r#"{"mcpServers": []}"#, "\"mcpServers\" must be an object"),
        (r#"{"servers": {}}"#, "no \"mcpServers\" object"),
    ];
    for (text, expected) in cases {
        let fx = Fixture::new();
        fx.write("repo/.mcp.json", text);
        fx.write(
            "fleet/settings.json",
            &servers(r#"{"b": {"command": "b"}}"#),
        );
        let config = fx.sources().load(&env);
        assert_eq!(config.servers.len(), 1, "{text}");
        assert_eq!(config.errors.len(), 1, "{text}");
        let message = config.errors[0].to_string();
        assert!(message.contains(expected), "{text}: {message}");
    }
}

#[test]
fn settings_files_without_mcp_servers_are_fine_and_empty_files_are_empty() {
    let fx = Fixture::new();
    fx.write("fleet/settings.json", r#"{"permissions": {"allow": []}}"#);
    fx.write("home/.claude.json", r#"{"numStartups": 3}"#);
    fx.write("repo/.mcp.json", "  \n");
    assert_eq!(fx.sources().load(&env), McpConfig::default());
}

#[test]
fn flag_values_name_themselves_in_errors() {
    let fx = Fixture::new();
    let mut sources = fx.sources();
    sources.flags = vec![
        "missing.json".into(),
        "{not json".into(),
        r#"{"mcpServers": {"ok": {"command": "ok"}}}"#.into(),
    ];
    let config = sources.load(&env);
    assert_eq!(command_of(&config, "ok"), "ok");
    let messages: Vec<String> = config.errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("--mcp-config") && messages[0].contains("missing.json"));
    assert!(messages[0].contains("cannot read"), "{}", messages[0]);
    assert!(
        messages[1].contains("--mcp-config #2 (inline JSON)"),
        "{}",
        messages[1]
    );
}

#[test]
fn a_bad_server_fails_alone() {
    let fx = Fixture::new();
    let file = fx.write(
        "repo/.mcp.json",
        &servers(
            r#"{"good": {"command": "g"}, "unset": {"command": "${NOT_SET_ANYWHERE}"},
                "typo": {"type": "htp", "url": "http://x/"}}"#,
        ),
    );
    let config = fx.sources().load(&env);
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let mut bad: Vec<_> = config.errors.iter().filter_map(|e| e.server()).collect();
    bad.sort_unstable();
    assert_eq!(bad, ["typo", "unset"]);
    let unset = config.error_for("unset").unwrap();
    assert_eq!(unset.origin(), &McpSource::Project(file));
    assert!(unset.to_string().contains("NOT_SET_ANYWHERE"), "{unset}");
}

#[test]
fn a_broken_override_hides_the_earlier_server_and_a_replaced_error_is_dropped() {
    let fx = Fixture::new();
    fx.write(
        "fleet/settings.json",
        &servers(r#"{"x": {"command": "user-x"}, "y": {"command": 5}}"#),
    );
    fx.write(
        "repo/.mcp.json",
        &servers(r#"{"x": {"command": "${NOPE}"}, "y": {"command": "project-y"}}"#),
    );
    let config = fx.sources().load(&env);
    assert!(config.get("x").is_none());
    assert!(config.error_for("x").is_some());
    assert_eq!(command_of(&config, "y"), "project-y");
    assert!(config.error_for("y").is_none(), "{:?}", config.errors);
    assert_eq!(config.errors.len(), 1);
}

#[test]
fn project_files_run_from_the_repository_root_down_to_the_working_folder() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.root.join("repo/.git")).unwrap();
    let deep = fx.root.join("repo/a/b");
    std::fs::create_dir_all(&deep).unwrap();
    let (files, keys) = project_layout(&deep);
    assert_eq!(
        files,
        [
            fx.root.join("repo/.mcp.json"),
            fx.root.join("repo/a/.mcp.json"),
            fx.root.join("repo/a/b/.mcp.json"),
        ]
    );
    assert_eq!(keys, [fx.root.join("repo"), deep.clone()]);
    // The nearest file wins.
    fx.write(
        "repo/.mcp.json",
        &servers(r#"{"s": {"command": "root"}, "r": {"command": "r"}}"#),
    );
    fx.write("repo/a/.mcp.json", &servers(r#"{"s": {"command": "a"}}"#));
    let sources = McpConfigSources {
        cwd: deep.clone(),
        project_files: files,
        ..Default::default()
    };
    let config = sources.load(&env);
    assert_eq!(command_of(&config, "s"), "a");
    assert_eq!(command_of(&config, "r"), "r");
    // Outside a repository: the working folder alone.
    let loose = fx.root.join("loose/dir");
    std::fs::create_dir_all(&loose).unwrap();
    let (files, keys) = project_layout(&loose);
    assert_eq!(files, [loose.join(".mcp.json")]);
    assert_eq!(keys, [loose]);
}

#[test]
fn a_relative_cwd_starts_at_the_defining_file_or_the_working_folder() {
    let fx = Fixture::new();
    let mut sources = fx.sources();
    fx.write(
        "repo/.mcp.json",
        &servers(r#"{"p": {"command": "p", "cwd": "sub"}}"#),
    );
    sources.flags = vec![r#"{"mcpServers": {"i": {"command": "i", "cwd": "sub"}}}"#.into()];
    let config = sources.load(&env);
    let cwd = |name: &str| match &config.get(name).unwrap().transport {
        McpTransport::Stdio { cwd, .. } => cwd.clone().unwrap(),
        _ => unreachable!(),
    };
    assert_eq!(cwd("p"), fx.root.join("repo/sub"));
    assert_eq!(cwd("i"), fx.root.join("repo/sub"));
}

#[test]
fn an_sdk_server_comes_only_from_the_flags() {
    let fx = Fixture::new();
    let project = fx.write(
        "repo/.mcp.json",
        &servers(r#"{"calc": {"type": "sdk", "name": "calc"}}"#),
    );
    let mut sources = fx.sources();
    sources.flags = vec![
        r#"{"mcpServers": {"tools": {"type": "sdk", "name": "my-tools"}, "bare": {"type": "sdk"}}}"#
            .into(),
    ];
    let config = sources.load(&env);
    let tools = config.get("tools").expect("the flag's sdk server loads");
    assert_eq!(
        tools.transport,
        McpTransport::Sdk {
            name: "my-tools".into()
        }
    );
    assert_eq!(tools.transport.kind(), "sdk");
    assert_eq!(
        config.get("bare").map(|s| &s.transport),
        Some(&McpTransport::Sdk {
            name: "bare".into()
        }),
        "without a name the key is the name"
    );
    assert!(
        config.get("calc").is_none(),
        "nothing serves it from a file"
    );
    let error = config
        .error_for("calc")
        .expect("the file's sdk entry is an error");
    assert_eq!(error.origin(), &McpSource::Project(project.clone()));
    let message = error.to_string();
    assert!(
        message.contains(&project.display().to_string()) && message.contains("--mcp-config"),
        "{message}"
    );
}
