//! The configuration rules, one test each: field rules, expansion, sources and precedence,
//! errors that stay local, agents' `mcpServers`, and config editing.

use super::*;
use serde_json::json;
use std::path::Path;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("t0k".into()),
        "BIN" => Some("/opt/bin".into()),
        "PORT" => Some("9000".into()),
        "NEWLINE" => Some("a\nb".into()),
        _ => None,
    }
}

fn parse(value: serde_json::Value) -> Result<McpServerConfig, ServerProblem> {
    parse_server(
        "srv",
        &value,
        &McpSource::Project("/p/.mcp.json".into()),
        Path::new("/p"),
        &env,
    )
}

fn invalid_message(value: serde_json::Value) -> String {
    match parse(value) {
        Err(ServerProblem::Invalid(message)) => message,
        other => panic!("expected an invalid-definition error, got {other:?}"),
    }
}

fn stdio(command: &str, args: &[&str]) -> McpTransport {
    McpTransport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Default::default(),
        cwd: None,
    }
}

#[test]
fn stdio_is_the_default_type_when_a_command_is_given() {
    let plain = parse(json!({"command": "npx", "args": ["-y", "pkg"]})).unwrap();
    let typed = parse(json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg"]})).unwrap();
    assert_eq!(plain.transport, stdio("npx", &["-y", "pkg"]));
    assert_eq!(plain, typed);
    assert_eq!(plain.name, "srv");
    assert_eq!(plain.source, McpSource::Project("/p/.mcp.json".into()));
}

#[test]
fn stdio_env_and_cwd_are_read_and_a_relative_cwd_starts_at_the_file() {
    let config = parse(json!({
        "command": "srv", "env": {"A": "1"}, "cwd": "tools"
    }))
    .unwrap();
    let McpTransport::Stdio { env, cwd, .. } = config.transport else {
        panic!("stdio expected")
    };
    assert_eq!(env.get("A").map(String::as_str), Some("1"));
    assert_eq!(cwd.as_deref(), Some(Path::new("/p/tools")));
    let absolute = parse(json!({"command": "srv", "cwd": "/abs"})).unwrap();
    assert!(matches!(absolute.transport,
        McpTransport::Stdio { cwd: Some(ref c), .. } if c == Path::new("/abs")));
}

#[test]
fn http_and_sse_take_a_url_and_headers() {
    let http = parse(json!({
        "type": "http", "url": "https://x.test/mcp", "headers": {"X-Key": "k"}
    }))
    .unwrap();
    assert_eq!(http.transport.kind(), "http");
    let McpTransport::Http { url, headers } = &http.transport else {
        panic!("http expected")
    };
    assert_eq!(url, "https://x.test/mcp");
    assert_eq!(headers.get("X-Key").map(String::as_str), Some("k"));
    let sse = parse(json!({"type": "sse", "url": "http://127.0.0.1:1/sse"})).unwrap();
    assert!(matches!(sse.transport, McpTransport::Sse { ref headers, .. } if headers.is_empty()));
}

#[test]
fn the_type_is_never_guessed_and_unknown_types_are_named() {
    assert!(invalid_message(json!({"url": "http://x/mcp"})).contains("no \"type\""));
    assert!(invalid_message(json!({"type": "ws", "url": "ws://x"})).contains("\"ws\""));
    assert!(invalid_message(json!({"type": 3, "command": "x"})).contains("found a number"));
    assert!(invalid_message(json!({})).contains("needs a \"command\""));
    assert!(invalid_message(json!("npx server")).contains("found a string"));
    assert!(invalid_message(json!({"type": "stdio"})).contains("needs \"command\""));
    assert!(invalid_message(json!({"type": "http"})).contains("needs \"url\""));
}

#[test]
fn fields_of_the_wrong_kind_are_named() {
    let cases = [
        (json!({"command": ["npx"]}), "\"command\" must be a string"),
        (
            json!({"command": "x", "args": "a b"}),
            "\"args\" must be a list",
        ),
        (
            json!({"command": "x", "args": ["a", 2]}),
            "\"args\"[1] must be a string",
        ),
        (
            json!({"command": "x", "env": {"N": 1}}),
            "\"env\".N must be a string",
        ),
        (
            json!({"command": "x", "env": ["A=1"]}),
            "\"env\" must be an object",
        ),
        (
            json!({"command": "x", "cwd": 1}),
            "\"cwd\" must be a string",
        ),
        (
            json!({"type": "http", "url": 1}),
            "\"url\" must be a string",
        ),
        (
            json!({"type": "http", "url": "http://x/", "headers": {"H": true}}),
            "\"headers\".H",
        ),
    ];
    for (value, expected) in cases {
        let message = invalid_message(value.clone());
        assert!(message.contains(expected), "{value}: {message}");
    }
}

#[test]
fn unknown_fields_are_ignored() {
    let config = parse(json!({"command": "x", "description": "d", "timeout": 5})).unwrap();
    assert_eq!(config.transport, stdio("x", &[]));
}

#[test]
fn variables_expand_in_command_args_env_cwd_url_and_headers() {
    let local = parse(json!({
        "command": "${BIN}/srv", "args": ["--port", "${PORT:-1}", "${NOPE:-d}"],
        "env": {"${TOKEN}": "${TOKEN}"}, "cwd": "${BIN}"
    }))
    .unwrap();
    let McpTransport::Stdio {
        command,
        args,
        env,
        cwd,
    } = local.transport
    else {
        panic!("stdio expected")
    };
    assert_eq!(command, "/opt/bin/srv");
    assert_eq!(args, ["--port", "9000", "d"]);
    // Values expand, keys are names and stay as written.
    assert_eq!(env.get("${TOKEN}").map(String::as_str), Some("t0k"));
    assert_eq!(cwd.as_deref(), Some(Path::new("/opt/bin")));
    let remote = parse(json!({
        "type": "http", "url": "http://localhost:${PORT}/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"}
    }))
    .unwrap();
    let McpTransport::Http { url, headers } = remote.transport else {
        panic!("http expected")
    };
    assert_eq!(url, "http://localhost:9000/mcp");
    assert_eq!(headers["Authorization"], "Bearer t0k");
}

#[test]
fn every_unset_variable_of_a_server_is_named_in_one_error() {
    let problem = parse(json!({
        "command": "${NO_BIN}", "args": ["${NO_ARG}"], "env": {"K": "${NO_BIN}"}
    }))
    .unwrap_err();
    assert_eq!(
        problem,
        ServerProblem::MissingVariables(vec!["NO_BIN".into(), "NO_ARG".into()])
    );
    let text = problem.to_string();
    assert!(text.contains("NO_BIN, NO_ARG are not set"), "{text}");
    assert!(text.contains("${NO_BIN:-default}"), "{text}");
    let one = parse(json!({"type": "sse", "url": "${NO_URL}"})).unwrap_err();
    assert!(one
        .to_string()
        .contains("environment variable NO_URL is not set"));
}

#[test]
fn values_are_checked_after_expansion() {
    assert!(invalid_message(json!({"command": "${NOPE:-}"})).contains("empty"));
    for url in [
        "ftp://x",
        "localhost:3000",
        "http://",
        "https:///path",
        "${NOPE:-x}",
    ] {
        let message = invalid_message(json!({"type": "http", "url": url}));
        assert!(message.contains("not an http"), "{url}: {message}");
    }
    let header = invalid_message(json!({
        "type": "http", "url": "http://x/", "headers": {"X": "${NEWLINE}"}
    }));
    assert!(header.contains("line break"), "{header}");
    let name = invalid_message(json!({
        "type": "http", "url": "http://x/", "headers": {"Bad Name": "v"}
    }));
    assert!(name.contains("header name"), "{name}");
}

#[test]
fn server_names_must_fit_in_tool_names() {
    for bad in ["", "my.server", "a b", "ünï", "a/b"] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    assert_eq!(check_name(""), Err(ServerNameError::Empty));
    assert_eq!(
        check_name("my.server"),
        Err(ServerNameError::BadCharacter {
            name: "my.server".into(),
            bad: '.'
        })
    );
    for good in ["github", "my-server_2", "A"] {
        assert!(check_name(good).is_ok(), "{good:?}");
    }
    let err = parse_server(
        "my.server",
        &json!({"command": "x"}),
        &McpSource::FlagInline(0),
        Path::new("/"),
        &env,
    )
    .unwrap_err();
    assert!(err.to_string().contains("mcp__{server}__{tool}"), "{err}");
}

mod agent_edit;
mod sources;
