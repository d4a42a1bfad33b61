//! A harness for whole-binary tests: a temporary git repository with its own HOME and fleet
//! home, the fake model server, and `fleet` run as a real process against it.
#![allow(dead_code, clippy::unwrap_used)]

use fleet_testkit::{FakeModelServer, Scenario, WAIT};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Variables from the developer's environment that would change what fleet does.
pub const SCRUBBED: &[&str] = &[
    "FLEET_PROVIDER",
    "FLEET_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FLEET_NO_SESSION_PERSISTENCE",
    "FLEET_TRUST_PROJECT",
];

pub struct Project {
    _tmp: tempfile::TempDir,
    /// The repository (resolved, so it matches what fleet reports).
    pub repo: PathBuf,
    pub home: PathBuf,
    pub fleet_home: PathBuf,
    /// Runs trust the repository (`FLEET_TRUST_PROJECT=1`), as a user who ran `fleet trust`
    /// would: tests of what settings do set it; tests of the trust gate do not.
    pub trusted: bool,
}

impl Project {
    /// A git repository with one commit holding `files`.
    pub fn new(files: &[(&str, &str)]) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let repo = root.join("repo");
        let home = root.join("home");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        for (path, text) in files {
            let full = repo.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let project = Self {
            _tmp: tmp,
            fleet_home: root.join("fleet-home"),
            repo,
            home,
            trusted: false,
        };
        project.git(&["init", "-q", "-b", "main"]);
        // Local settings are the user's own, never committed (as in a real checkout, where
        // they are git-ignored): a committed one would be the repository's (see trust.md).
        std::fs::write(
            project.repo.join(".git/info/exclude"),
            ".claude/settings.local.json\n.fleet/settings.local.json\n",
        )
        .unwrap();
        project.git(&["add", "."]);
        project.git(&["commit", "-q", "--allow-empty", "-m", "start"]);
        project
    }

    /// A repository whose shared `.claude/settings.json` is `settings`.
    pub fn with_settings(settings: &Value) -> Self {
        Self::new(&[
            ("README.md", "# app\n"),
            (".claude/settings.json", &settings.to_string()),
        ])
        .trusting()
    }

    /// The same project, its runs trusting the repository (see [`Project::trusted`]).
    pub fn trusting(mut self) -> Self {
        self.trusted = true;
        self
    }

    pub fn path(&self, rel: &str) -> String {
        self.repo.join(rel).display().to_string()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo.join(rel)).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=fleet test",
                "-c",
                "user.email=test@fleet.invalid",
            ])
            .args(args)
            .current_dir(&self.repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `fleet` as a command in the repository, pointed at `server`.
    pub fn command(&self, server: &FakeModelServer, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
        cmd.args(args);
        self.environment(&mut cmd, server);
        cmd
    }

    /// The folder and environment every fleet run of this project gets: its own HOME and
    /// fleet home, no developer credentials, the fake server as the Anthropic API.
    pub fn environment(&self, cmd: &mut Command, server: &FakeModelServer) {
        cmd.current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("FLEET_HOME", &self.fleet_home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("FLEET_MAX_RETRIES", "2")
            .env("FLEET_RETRY_BASE_DELAY_MS", "5")
            // Foreground subagents' own lines, which stream-json leaves out by default (as
            // Claude Code does): most tests read what a child did from them.
            // golden_headless.rs removes it to see the default.
            .env("FLEET_SUBAGENT_MESSAGES", "1");
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        cmd.env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", server.base_url());
        if self.trusted {
            cmd.env("FLEET_TRUST_PROJECT", "1");
        }
    }

    /// Runs `fleet args…` with `stdin` and waits for it, off the async runtime.
    pub async fn run(&self, server: &FakeModelServer, args: &[&str], stdin: &str) -> Output {
        run_with_stdin(self.command(server, args), stdin).await
    }

    /// Runs `fleet args…` with these extra variables and nothing on stdin, off the runtime.
    /// `fleet -p <prompt> --output-format stream-json --verbose <extra>`, which must succeed:
    /// its output and its lines.
    pub async fn stream_json(
        &self,
        server: &FakeModelServer,
        prompt: &str,
        extra: &[&str],
    ) -> (Output, Vec<Value>) {
        let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--verbose"];
        args.extend_from_slice(extra);
        let out = self.run(server, &args, "").await;
        assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
        let lines = json_lines(&out);
        (out, lines)
    }

    pub async fn run_with_env(
        &self,
        server: &FakeModelServer,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.command(server, args);
        cmd.envs(env.iter().copied()).stdin(Stdio::null());
        let what = described(&cmd);
        tokio::task::spawn_blocking(move || fleet_testkit::output_within(&mut cmd, WAIT, &what))
            .await
            .unwrap()
    }

    /// The session transcripts fleet wrote for this repository.
    pub fn transcripts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let Ok(projects) = std::fs::read_dir(self.fleet_home.join("projects")) else {
            return found;
        };
        for project in projects.flatten() {
            for file in std::fs::read_dir(project.path()).unwrap().flatten() {
                found.push(file.path());
            }
        }
        found
    }
}

/// Runs `cmd` with `stdin` written and closed, and waits for it, off the async runtime.
pub async fn run_with_stdin(mut cmd: Command, stdin: &str) -> Output {
    let stdin = stdin.to_string();
    let what = described(&cmd);
    tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(stdin.as_bytes()).unwrap();
        drop(pipe);
        fleet_testkit::wait_output(child, WAIT, &what)
    })
    .await
    .unwrap()
}

/// `fleet arg…` as a failed wait names it.
pub fn described(cmd: &Command) -> String {
    let mut what = String::from("fleet");
    for arg in cmd.get_args() {
        what.push(' ');
        what.push_str(&arg.to_string_lossy());
    }
    what
}

pub async fn server(scenario: Scenario) -> FakeModelServer {
    FakeModelServer::start(scenario).await.unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every stdout line as JSON; fails naming the line that is not.
pub fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {line}", i + 1))
        })
        .collect()
}

/// The one `result` object of a stream-json run.
pub fn result_of(lines: &[Value]) -> &Value {
    let results: Vec<_> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1, "one result line expected: {lines:#?}");
    results[0]
}

/// The content of every tool result in the `user` lines `pick` accepts, as JSON text, in order.
pub fn tool_result_texts(lines: &[Value], pick: impl Fn(&Value) -> bool) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "user" && pick(l))
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// The `max_tokens` of every model request `server` received, in order.
pub fn max_tokens_asked(server: &FakeModelServer) -> Vec<u64> {
    server
        .requests()
        .iter()
        .filter_map(|r| r.body.get("max_tokens").and_then(Value::as_u64))
        .collect()
}

/// The tool results of a stream-json run, in order (a subagent's included): whether each is
/// an error, and its text.
pub fn tool_outcomes(out: &Output) -> Vec<(bool, String)> {
    json_lines(out)
        .into_iter()
        .filter(|l| l["type"] == "user")
        .map(|l| l["message"]["content"][0].clone())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (b["is_error"] == true, text)
        })
        .collect()
}

/// A model that runs each of `commands` with Bash in turn, then says DONE.
pub fn bash_calls(commands: &[&str]) -> Scenario {
    let mut rules: Vec<fleet_testkit::Rule> = commands
        .iter()
        .map(|c| fleet_testkit::Rule::tool_use("Bash", serde_json::json!({ "command": c })))
        .collect();
    rules.push(fleet_testkit::Rule::text("DONE"));
    Scenario::queue(rules)
}
