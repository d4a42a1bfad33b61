//! `fleet verify "what to check"`: the verification agent on the checkout as it is now.
//!
//! The verifier runs in a throwaway worktree holding the current state, uncommitted and
//! untracked files included, so it may build, run the tests and write probe scripts without
//! touching the user's checkout. Its report ends with `VERDICT: PASS|FAIL|PARTIAL`, which
//! becomes the exit code, so a script or a CI step can gate on it.

use crate::args::PrintArgs;
use crate::headless::setup;
use crate::model_choice::choose;
use crate::settings;
use anyhow::{bail, Context};
use fleet_protocol::{ContentBlock, EventKind};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// What the change is meant to do, and what to check.
    pub what: String,
    /// Model id or alias for the verifier.
    #[arg(long)]
    pub model: Option<String>,
    /// `text` (the report) or `json` (`verdict`, `report`, `checks`, cost).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output_format: String,
    /// The checkout to verify (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// `anthropic` or `openai`.
    #[arg(long, value_parser = crate::model_choice::parse_provider)]
    pub provider: Option<fleet_model::Provider>,
}

/// The verifier's conclusion, as its report states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Partial,
    /// No `VERDICT:` line could be read.
    Unknown,
}

impl Verdict {
    /// The last `VERDICT: …` line of `report` (the verifier may quote the format earlier).
    pub fn read(report: &str) -> Self {
        report
            .lines()
            .rev()
            .find_map(|line| {
                let rest = line.trim().trim_start_matches(['*', '#', ' ']);
                let value = rest.strip_prefix("VERDICT:")?.trim();
                let word: String = value
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                match word.to_ascii_uppercase().as_str() {
                    "PASS" => Some(Self::Pass),
                    "FAIL" => Some(Self::Fail),
                    "PARTIAL" => Some(Self::Partial),
                    _ => None,
                }
            })
            .unwrap_or(Self::Unknown)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
            Self::Partial => "PARTIAL",
            Self::Unknown => "UNKNOWN",
        }
    }

    /// 0 pass, 1 fail, 2 partial, 3 no verdict.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Pass => 0,
            Self::Fail => 1,
            Self::Partial => 2,
            Self::Unknown => 3,
        }
    }
}

pub async fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    if args.what.trim().is_empty() {
        bail!("say what to verify: fleet verify \"the parser accepts empty input\"");
    }
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("reading the working directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("{}: no such folder", cwd.display()))?;
    let settings = settings::load(&cwd)?;
    let choice = choose(args.provider, args.model.clone(), &settings)?;
    // The verifier's commands may write only in its throwaway copy, and the sandbox enforces
    // it, so they run without asking. Without a sandbox they are left to the settings' rules.
    let allowed_tools = match fleet_tools::sandbox::availability::launcher(None) {
        Ok(_) => vec!["Bash".to_string()],
        Err(reason) => {
            eprintln!(
                "fleet verify: the sandbox is unavailable ({reason}), so the verifier's commands \
                 need allow rules in your settings to run"
            );
            Vec::new()
        }
    };
    let print = PrintArgs {
        print: true,
        prompt: Some(args.what.clone()),
        output_format: "text".into(),
        input_format: "text".into(),
        allowed_tools,
        ..PrintArgs::default()
    };
    let session_id = fleet_store::new_session_id();
    let built = setup::agent(
        &print,
        &cwd,
        &settings,
        choice,
        &session_id,
        setup::Host::default(),
        true,
        &setup::McpTools::default(),
    )?;
    let spawner = built.spawner;
    let mut events = built.events;
    // Keep the stream open for the child's events; the sink is not needed here otherwise.
    let _sink = built.sink;
    let prompt = format!(
        "Verify this change in the project at {}: {}\n\nRun the project's build and tests, and \
         try to break the change. End with VERDICT: PASS, FAIL or PARTIAL.",
        cwd.display(),
        args.what
    );
    let mut run = {
        let spawner = spawner.clone();
        let cwd = cwd.clone();
        tokio::spawn(async move {
            spawner
                .run_child("verification", "verify the change", &prompt, &cwd)
                .await
        })
    };
    // The child's events come on the session's stream; they say which commands it ran.
    let mut checks = Checks::default();
    let outcome = loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => checks.see(&event.kind),
                None => break (&mut run).await,
            },
            done = &mut run => {
                while let Ok(event) = events.try_recv() {
                    checks.see(&event.kind);
                }
                break done;
            }
        }
    }
    .context("the verifier stopped unexpectedly")?;
    let output = outcome.map_err(|err| anyhow::anyhow!("{err}"))?;
    let structured = output.structured.clone().unwrap_or(Value::Null);
    let report = structured["result"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| output.content.clone());
    let verdict = Verdict::read(&report);
    if args.output_format == "json" {
        let value = json!({
            "verdict": verdict.as_str(),
            "report": report,
            "checks": checks.list(),
            "total_cost_usd": structured["total_cost_usd"],
            "usage": structured["usage"],
            "num_turns": structured["num_turns"],
            "duration_ms": structured["duration_ms"],
            "session_id": session_id,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{}", crate::visible::visible(report.trim_end()));
    }
    Ok(ExitCode::from(verdict.exit_code()))
}

/// The commands the verifier ran, with their exit codes, in order.
#[derive(Debug, Default)]
struct Checks {
    commands: HashMap<String, String>,
    ran: Vec<Value>,
}

impl Checks {
    fn see(&mut self, kind: &EventKind) {
        match kind {
            EventKind::AssistantBlock {
                block:
                    ContentBlock::ToolUse {
                        id, name, input, ..
                    },
                ..
            } if name == "Bash" => {
                let command = input["command"].as_str().unwrap_or_default().to_string();
                self.commands.insert(id.clone(), command);
            }
            EventKind::ToolResult(result) if result.tool_name == "Bash" => {
                let command = self
                    .commands
                    .remove(&result.tool_use_id)
                    .unwrap_or_default();
                let exit_code = result
                    .structured
                    .as_ref()
                    .and_then(|s| s["exitCode"].as_i64());
                self.ran
                    .push(json!({"command": command, "exit_code": exit_code}));
            }
            _ => {}
        }
    }

    fn list(&self) -> &[Value] {
        &self.ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_verdict_line_counts() {
        assert_eq!(Verdict::read("ran tests\nVERDICT: PASS"), Verdict::Pass);
        assert_eq!(
            Verdict::read("Format: VERDICT: PASS\n...\n**VERDICT: FAIL** (2 tests)"),
            Verdict::Fail
        );
        assert_eq!(Verdict::read("VERDICT: partial"), Verdict::Partial);
        assert_eq!(Verdict::read("no verdict here"), Verdict::Unknown);
        assert_eq!(Verdict::Unknown.exit_code(), 3);
    }
}
