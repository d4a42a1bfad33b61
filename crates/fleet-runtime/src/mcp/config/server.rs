//! One entry of `mcpServers` → an [`McpServerConfig`], or the reason it cannot be used.
//!
//! Field rules (shared by every source and by agents' inline servers):
//! - `type` is `"stdio"` (the default when absent and `command` is given), `"http"` (streamable
//!   HTTP) or `"sse"`. A `url` with no `type` is an error rather than a guess between the two.
//! - stdio: `command` (a non-empty string), `args` (strings), `env` (string values), `cwd`
//!   (a relative one is taken from the folder of the file that defines the server).
//! - http / sse: `url` (`http://` or `https://`), `headers` (string values).
//! - sdk: `name` (a string; the key when absent). Accepted only from `--mcp-config`, where the
//!   Agent SDK passes the servers it hosts; anywhere else nothing would serve it.
//! - `${VAR}` / `${VAR:-default}` expand in command, args, env values, cwd, url and header
//!   values; every unset variable without a default is named in one error.
//! - Fields fleet does not read (`description`, `timeout`, …) are ignored, so configurations
//!   written for newer Claude Code versions still load.

use super::expand::{expand, Lookup};
use super::{McpServerConfig, McpSource, McpTransport};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Why one server's definition cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerProblem {
    /// `${VAR}` references to variables that are unset and have no default.
    #[error(
        "{} not set and no default given (set {}, or write ${{{}:-default}})",
        variables_phrase(.0), .0.join(", "), .0.first().map(String::as_str).unwrap_or("VAR")
    )]
    MissingVariables(Vec<String>),
    /// The server's name cannot be part of tool names.
    #[error(transparent)]
    Name(#[from] ServerNameError),
    /// A field is missing, of the wrong kind, or has a value fleet cannot use.
    #[error("{0}")]
    Invalid(String),
}

/// A server name that cannot become part of tool names (`mcp__<name>__<tool>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerNameError {
    #[error("a server name cannot be empty")]
    Empty,
    #[error(
        "server name {name:?} has {bad:?}: use only ASCII letters, digits, `_` and `-` (the \
         name becomes part of tool names, mcp__{{server}}__{{tool}})"
    )]
    BadCharacter { name: String, bad: char },
}

fn variables_phrase(names: &[String]) -> String {
    match names {
        [one] => format!("environment variable {one} is"),
        many => format!("environment variables {} are", many.join(", ")),
    }
}

/// Checks a server name: it becomes part of tool names (`mcp__<name>__<tool>`), which the model
/// APIs restrict to ASCII letters, digits, `_` and `-`.
pub fn check_name(name: &str) -> Result<(), ServerNameError> {
    if name.is_empty() {
        return Err(ServerNameError::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(ServerNameError::BadCharacter {
            name: name.to_string(),
            bad,
        });
    }
    Ok(())
}

/// Reads one server definition. `base_dir` is where a relative `cwd` points from.
pub fn parse_server(
    name: &str,
    value: &Value,
    source: &McpSource,
    base_dir: &Path,
    lookup: Lookup<'_>,
) -> Result<McpServerConfig, ServerProblem> {
    check_name(name)?;
    let Value::Object(fields) = value else {
        return Err(invalid(format!(
            "expected an object with \"command\" (stdio) or \"type\" and \"url\", found {}",
            kind(value)
        )));
    };
    let kind_field = match fields.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(other) => {
            return Err(invalid(format!(
                "\"type\" must be \"stdio\", \"http\", \"sse\" or \"sdk\", found {}",
                kind(other)
            )))
        }
    };
    let mut missing = Vec::new();
    let mut ex = |text: &str| expand(text, lookup, &mut missing);
    let transport = match kind_field {
        Some("stdio") => stdio(fields, base_dir, &mut ex)?,
        None if fields.contains_key("command") => stdio(fields, base_dir, &mut ex)?,
        Some("http") => {
            let (url, headers) = remote(fields, &mut ex)?;
            McpTransport::Http { url, headers }
        }
        Some("sse") => {
            let (url, headers) = remote(fields, &mut ex)?;
            McpTransport::Sse { url, headers }
        }
        Some("sdk") => sdk(name, fields, source)?,
        None if fields.contains_key("url") => {
            return Err(invalid(
                "has a \"url\" but no \"type\": add \"type\": \"http\" (streamable HTTP) or \
                 \"type\": \"sse\"",
            ))
        }
        None => {
            return Err(invalid(
                "needs a \"command\" (stdio) or a \"type\" (\"http\" or \"sse\") and a \"url\"",
            ))
        }
        Some(other) => {
            return Err(invalid(format!(
                "unknown \"type\" {other:?}: expected \"stdio\", \"http\", \"sse\" or \"sdk\""
            )))
        }
    };
    if !missing.is_empty() {
        return Err(ServerProblem::MissingVariables(missing));
    }
    check_expanded(&transport)?;
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        source: source.clone(),
    })
}

fn stdio(
    fields: &Map<String, Value>,
    base_dir: &Path,
    ex: &mut dyn FnMut(&str) -> String,
) -> Result<McpTransport, ServerProblem> {
    let command = match fields.get("command") {
        Some(Value::String(c)) => ex(c),
        None | Some(Value::Null) => {
            return Err(invalid(
                "a stdio server needs \"command\" (the program to run)",
            ))
        }
        Some(other) => {
            return Err(invalid(format!(
                "\"command\" must be a string, found {}",
                kind(other)
            )))
        }
    };
    let args = match fields.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(ex(s)),
                other => Err(invalid(format!(
                    "\"args\"[{i}] must be a string, found {}",
                    kind(other)
                ))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(invalid(format!(
                "\"args\" must be a list of strings, found {}",
                kind(other)
            )))
        }
    };
    let env = string_map(fields, "env", ex)?;
    let cwd = match fields.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(dir)) => Some(base_dir.join(ex(dir))),
        Some(other) => {
            return Err(invalid(format!(
                "\"cwd\" must be a string, found {}",
                kind(other)
            )))
        }
    };
    Ok(McpTransport::Stdio {
        command,
        args,
        env,
        cwd,
    })
}

/// An SDK-hosted server: only the SDK process that started fleet serves it, and it names its
/// servers through `--mcp-config`. In a file it would be a server nothing answers.
fn sdk(
    key: &str,
    fields: &Map<String, Value>,
    source: &McpSource,
) -> Result<McpTransport, ServerProblem> {
    if !matches!(source, McpSource::FlagFile(_) | McpSource::FlagInline(_)) {
        return Err(invalid(
            "\"type\": \"sdk\" is a server hosted by an Agent SDK program, which passes it \
             with --mcp-config; nothing serves it from here",
        ));
    }
    let name = match fields.get("name") {
        None | Some(Value::Null) => key.to_string(),
        Some(Value::String(name)) => name.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "\"name\" must be a string, found {}",
                kind(other)
            )))
        }
    };
    Ok(McpTransport::Sdk { name })
}

fn remote(
    fields: &Map<String, Value>,
    ex: &mut dyn FnMut(&str) -> String,
) -> Result<(String, BTreeMap<String, String>), ServerProblem> {
    let url = match fields.get("url") {
        Some(Value::String(url)) => ex(url),
        None | Some(Value::Null) => {
            return Err(invalid(
                "an http or sse server needs \"url\" (its endpoint, e.g. \"http://localhost:3000/mcp\")",
            ))
        }
        Some(other) => {
            return Err(invalid(format!(
                "\"url\" must be a string, found {}",
                kind(other)
            )))
        }
    };
    Ok((url, string_map(fields, "headers", ex)?))
}

fn string_map(
    fields: &Map<String, Value>,
    key: &str,
    ex: &mut dyn FnMut(&str) -> String,
) -> Result<BTreeMap<String, String>, ServerProblem> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), ex(s))),
                other => Err(invalid(format!(
                    "\"{key}\".{k} must be a string, found {}",
                    kind(other)
                ))),
            })
            .collect(),
        Some(other) => Err(invalid(format!(
            "\"{key}\" must be an object of strings, found {}",
            kind(other)
        ))),
    }
}

/// Checks that only make sense once variables are in: a command that expanded to nothing, a
/// URL that is not http(s), a header that could not be sent.
fn check_expanded(transport: &McpTransport) -> Result<(), ServerProblem> {
    match transport {
        McpTransport::Stdio { command, .. } if command.trim().is_empty() => {
            Err(invalid("\"command\" is empty"))
        }
        McpTransport::Stdio { .. } | McpTransport::Sdk { .. } => Ok(()),
        McpTransport::Http { url, headers } | McpTransport::Sse { url, headers } => {
            let lower = url.to_ascii_lowercase();
            let rest = lower
                .strip_prefix("http://")
                .or_else(|| lower.strip_prefix("https://"));
            if rest.is_none_or(|r| r.is_empty() || r.starts_with('/')) {
                return Err(invalid(format!(
                    "\"url\" {url:?} is not an http:// or https:// address"
                )));
            }
            for (k, v) in headers {
                let bad_name = k.is_empty()
                    || !k
                        .bytes()
                        .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
                if bad_name {
                    return Err(invalid(format!(
                        "header name {k:?} is not a valid HTTP header name"
                    )));
                }
                if v.contains(['\r', '\n', '\0']) {
                    return Err(invalid(format!(
                        "header {k} has a line break or NUL in its value"
                    )));
                }
            }
            Ok(())
        }
    }
}

fn invalid(message: impl Into<String>) -> ServerProblem {
    ServerProblem::Invalid(message.into())
}

/// A JSON value's kind, for messages ("found a number").
pub(crate) use fleet_protocol::json_kind as kind;
