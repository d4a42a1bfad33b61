//! `fleet mcp add | remove`: editing `mcpServers` in `.mcp.json` or `$FLEET_HOME/settings.json`.
//!
//! The file is read as JSON, only the one entry changes (every other key, and the order of
//! keys, stays as it was), and the new text replaces the old atomically: a temporary sibling,
//! flushed, renamed over the file, keeping the file's permissions. A reader never sees half a
//! file, and a file fleet cannot parse is never overwritten. Values are written as given,
//! `${VAR}` references included, so secrets stay in the environment.

use super::server::check_name;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A server definition as the user wrote it (variables not expanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl ServerSpec {
    /// The JSON written under the server's name, in the shape Claude Code writes.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        let strings = |m: &BTreeMap<String, String>| {
            Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        };
        match self {
            ServerSpec::Stdio { command, args, env } => {
                out.insert("type".into(), "stdio".into());
                out.insert("command".into(), command.clone().into());
                out.insert("args".into(), args.clone().into());
                if !env.is_empty() {
                    out.insert("env".into(), strings(env));
                }
            }
            ServerSpec::Http { url, headers } | ServerSpec::Sse { url, headers } => {
                let kind = if matches!(self, ServerSpec::Http { .. }) {
                    "http"
                } else {
                    "sse"
                };
                out.insert("type".into(), kind.into());
                out.insert("url".into(), url.clone().into());
                if !headers.is_empty() {
                    out.insert("headers".into(), strings(headers));
                }
            }
        }
        Value::Object(out)
    }

    fn check(&self) -> Result<(), McpEditError> {
        match self {
            ServerSpec::Stdio { command, .. } if command.trim().is_empty() => {
                Err(McpEditError::Invalid("the command is empty".into()))
            }
            ServerSpec::Http { url, .. } | ServerSpec::Sse { url, .. } => {
                let lower = url.to_ascii_lowercase();
                let ok = lower.starts_with("http://")
                    || lower.starts_with("https://")
                    || lower.starts_with("${");
                if ok {
                    Ok(())
                } else {
                    Err(McpEditError::Invalid(format!(
                        "{url:?} is not an http:// or https:// URL"
                    )))
                }
            }
            ServerSpec::Stdio { .. } => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum McpEditError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not usable, so it was left unchanged: {problem}", path.display())]
    Malformed { path: PathBuf, problem: String },
    #[error(
        "an MCP server named {name:?} already exists in {}; remove it first \
         (`fleet mcp remove {name}`)", path.display()
    )]
    Exists { name: String, path: PathBuf },
    #[error(transparent)]
    Name(#[from] super::server::ServerNameError),
    #[error("{0}")]
    Invalid(String),
}

/// Where `fleet mcp add` (project scope) writes: the nearest existing `.mcp.json` from `cwd` up
/// to the repository root, else a new one at the repository root (or in `cwd` outside a
/// repository) — the file the loader reads for every folder of the project.
pub fn project_file_for_writing(cwd: &Path) -> PathBuf {
    let root = cwd.ancestors().find(|dir| dir.join(".git").exists());
    let within = |dir: &&Path| root.is_none_or(|root| dir.starts_with(root));
    cwd.ancestors()
        .take_while(within)
        .map(|dir| dir.join(".mcp.json"))
        .find(|file| file.is_file())
        .unwrap_or_else(|| root.unwrap_or(cwd).join(".mcp.json"))
}

/// Adds `name` to `mcpServers` in `file` (created, with its folder, when missing). A name that
/// is already there is an error: replacing a definition is an explicit remove and add.
pub fn add_server(file: &Path, name: &str, spec: &ServerSpec) -> Result<(), McpEditError> {
    check_name(name)?;
    spec.check()?;
    let mut doc = read_document(file)?;
    let servers = servers_of(&mut doc, file)?;
    if servers.contains_key(name) {
        return Err(McpEditError::Exists {
            name: name.to_string(),
            path: file.to_path_buf(),
        });
    }
    servers.insert(name.to_string(), spec.to_json());
    write_document(file, &doc)
}

/// Removes `name` from `mcpServers` in `file`; `Ok(false)` when it was not there (the file is
/// then left untouched).
pub fn remove_server(file: &Path, name: &str) -> Result<bool, McpEditError> {
    if !file.exists() {
        return Ok(false);
    }
    let mut doc = read_document(file)?;
    let servers = match doc.get_mut("mcpServers") {
        None => return Ok(false),
        Some(_) => servers_of(&mut doc, file)?,
    };
    if servers.shift_remove(name).is_none() {
        return Ok(false);
    }
    write_document(file, &doc)?;
    Ok(true)
}

/// The names in `file`'s `mcpServers` (empty when the file or the key is missing).
pub fn server_names(file: &Path) -> Result<Vec<String>, McpEditError> {
    if !file.exists() {
        return Ok(Vec::new());
    }
    let mut doc = read_document(file)?;
    if doc.get("mcpServers").is_none() {
        return Ok(Vec::new());
    }
    Ok(servers_of(&mut doc, file)?.keys().cloned().collect())
}

fn read_document(file: &Path) -> Result<Map<String, Value>, McpEditError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(McpEditError::Io {
                action: "read",
                path: file.to_path_buf(),
                source,
            })
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(McpEditError::Malformed {
            path: file.to_path_buf(),
            problem: "expected a JSON object".into(),
        }),
        Err(e) => Err(McpEditError::Malformed {
            path: file.to_path_buf(),
            problem: format!("not valid JSON: {e}"),
        }),
    }
}

fn servers_of<'a>(
    doc: &'a mut Map<String, Value>,
    file: &Path,
) -> Result<&'a mut Map<String, Value>, McpEditError> {
    match doc
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(servers) => Ok(servers),
        _ => Err(McpEditError::Malformed {
            path: file.to_path_buf(),
            problem: "\"mcpServers\" is not an object".into(),
        }),
    }
}

/// Replaces `file` with `doc` (pretty JSON and a final newline) atomically and durably.
fn write_document(file: &Path, doc: &Map<String, Value>) -> Result<(), McpEditError> {
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| McpEditError::Io {
            action,
            path,
            source,
        }
    };
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| McpEditError::Malformed {
        path: file.to_path_buf(),
        problem: e.to_string(),
    })?;
    text.push('\n');
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{file_name}.tmp.{}",
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io("create", &tmp))?;
        if let Ok(meta) = std::fs::metadata(file) {
            out.set_permissions(meta.permissions())
                .map_err(io("set the permissions of", &tmp))?;
        }
        out.write_all(text.as_bytes()).map_err(io("write", &tmp))?;
        out.sync_all().map_err(io("flush", &tmp))?;
        std::fs::rename(&tmp, file).map_err(io("replace", file))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    // The rename is durable once the folder is flushed; failing to flush it is not worth
    // failing a write that has already happened.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
