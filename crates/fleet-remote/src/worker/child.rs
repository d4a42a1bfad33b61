//! The job's `fleet` process: its command line (built from the job, never from its
//! credentials: the process inherits the worker's environment), started in a process group of
//! its own, and killed with everything it started.

use crate::job::Job;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// How long a process gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// The flags of a job's session: stream-json both ways, questions over the control protocol,
/// and the job's mode, model, rules and agent definition.
pub fn args(job: &Job) -> Vec<String> {
    let mut args: Vec<String> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
        "stdio",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--permission-mode={}", job.permission_mode));
    let definition = job.agent.definition.as_ref();
    let definition_model = definition
        .and_then(|d| d.get("model"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty() && *m != "inherit");
    if let Some(model) = job.model.as_deref().or(definition_model) {
        args.push(format!("--model={model}"));
    }
    // `=` keeps a rule (or a prompt) that starts with `-` one value.
    for rule in &job.allowed_tools {
        args.push(format!("--allowedTools={rule}"));
    }
    for rule in &job.disallowed_tools {
        args.push(format!("--disallowedTools={rule}"));
    }
    if let Some(definition) = definition {
        if let Some(prompt) = definition.get("prompt").and_then(Value::as_str) {
            args.push(format!("--system-prompt={prompt}"));
        }
        if let Some(tools) = string_list(definition.get("tools")) {
            args.push(format!("--tools={}", tools.join(",")));
        }
        for rule in string_list(definition.get("disallowedTools")).unwrap_or_default() {
            args.push(format!("--disallowedTools={rule}"));
        }
    }
    if let Some(text) = &job.agent.append_system_prompt {
        args.push(format!("--append-system-prompt={text}"));
    }
    args
}

/// A list of strings, or a comma separated string (both forms appear in agent files).
fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        Value::String(text) => Some(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

/// The variable a job's `fleet` reads first thing: the worker's pid, whose death kills it
/// (`PR_SET_PDEATHSIG`, set by the child itself since this workspace forbids `pre_exec`).
pub const DIE_WITH_PARENT: &str = "FLEET_DIE_WITH_PARENT";

/// Starts `program args` in `dir`, in a new process group, with piped stdio. The child is
/// told to die with this worker ([`DIE_WITH_PARENT`]): a worker killed with -9 must not
/// leave its jobs running while they run again elsewhere.
pub fn spawn(program: &Path, args: &[String], dir: &Path) -> std::io::Result<Child> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env(DIE_WITH_PARENT, std::process::id().to_string())
        // `fleet remote logs` shows what a job's subagents do, as it always has.
        .env(fleet_protocol::env::FLEET_SUBAGENT_MESSAGES.name, "1")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd.spawn()
}

/// Kills the process with id `pid` and everything under it: its own group, and the groups its
/// descendants moved to (fleet's Bash tool runs each command in a group of its own). SIGTERM
/// first, so fleet ends its tools itself; SIGKILL to whatever is left after [`GRACE`].
pub async fn kill_tree(child: &mut Child) {
    let Some(pid) = child.id() else { return };
    let groups = groups_under(pid);
    signal_groups(&groups, nix::sys::signal::Signal::SIGTERM);
    if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
        let _ = child.start_kill();
    }
    // The process is gone (or going); groups that outlived it are killed outright.
    let left: Vec<i32> = groups
        .into_iter()
        .chain(groups_under(pid))
        .filter(|g| group_alive(*g))
        .collect();
    signal_groups(&left, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait().await;
}

fn signal_groups(groups: &[i32], signal: nix::sys::signal::Signal) {
    for group in groups {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(*group), signal);
    }
}

fn group_alive(group: i32) -> bool {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), None).is_ok()
}

/// The process groups of `pid` and of all its descendants (from `/proc`), never the
/// worker's own group.
fn groups_under(pid: u32) -> Vec<i32> {
    let own = nix::unistd::getpgrp().as_raw();
    let table = process_table();
    let mut tree = vec![pid as i32];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            table
                .iter()
                .filter(|p| p.ppid == parent)
                .map(|p| p.pid)
                .filter(|p| !tree.contains(p))
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    let mut groups = vec![pid as i32];
    for p in table.iter().filter(|p| tree.contains(&p.pid)) {
        if p.pgrp != own && !groups.contains(&p.pgrp) {
            groups.push(p.pgrp);
        }
    }
    groups
}

struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
}

fn process_table() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// `pid (comm) state ppid pgrp …`; the command name may hold spaces and parentheses.
fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Proc { pid, ppid, pgrp })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::job::{AgentSpec, JobKind};
    use serde_json::json;

    fn job() -> Job {
        Job {
            task_id: "r1".into(),
            kind: JobKind::Agent,
            description: "d".into(),
            prompt: "p".into(),
            agent: AgentSpec::default(),
            model: Some("sonnet".into()),
            permission_mode: "acceptEdits".into(),
            allowed_tools: vec!["Bash(sleep *)".into()],
            disallowed_tools: vec!["WebFetch".into()],
            repo: None,
            labels: vec![],
            max_deliver: 3,
            queued_ms: 0,
            origin: String::new(),
        }
    }

    #[test]
    fn a_plain_job_gets_the_sdk_flags_its_mode_model_and_rules() {
        let args = args(&job());
        assert_eq!(
            args,
            [
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-prompt-tool",
                "stdio",
                "--permission-mode=acceptEdits",
                "--model=sonnet",
                "--allowedTools=Bash(sleep *)",
                "--disallowedTools=WebFetch",
            ]
        );
    }

    #[test]
    fn an_agent_definition_brings_its_prompt_tools_denials_and_model() {
        let mut job = job();
        job.model = None;
        job.agent.definition = Some(json!({
            "description": "reviews", "prompt": "-You review code.",
            "tools": ["Read", "Grep"], "disallowedTools": "Bash, Write", "model": "opus"}));
        job.agent.append_system_prompt = Some("Plan first.".into());
        let args = args(&job);
        for want in [
            "--model=opus",
            "--system-prompt=-You review code.",
            "--tools=Read,Grep",
            "--disallowedTools=Bash",
            "--disallowedTools=Write",
            "--append-system-prompt=Plan first.",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
    }

    #[test]
    fn stat_lines_with_odd_command_names_are_read() {
        let p = parse_stat(42, "42 (a) b (c) S 7 42 42 0 -1").unwrap();
        assert_eq!((p.pid, p.ppid, p.pgrp), (42, 7, 42));
    }

    #[tokio::test]
    async fn kill_tree_reaches_a_grandchild_in_a_group_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The grandchild moves to a new session (so a new group), as fleet's Bash commands do.
        let script = format!("setsid sleep 61.5 & echo $! > {}; wait", pidfile.display());
        let mut child = spawn(Path::new("sh"), &["-c".to_string(), script], dir.path()).unwrap();
        let grandchild = loop {
            if let Ok(text) = std::fs::read_to_string(&pidfile) {
                if let Ok(pid) = text.trim().parse::<i32>() {
                    break pid;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        kill_tree(&mut child).await;
        // Reaped by init once killed; poll until /proc no longer shows it running.
        let mut gone = false;
        for _ in 0..200 {
            let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat"));
            if stat.map_or(true, |s| s.contains(") Z")) {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(gone, "the grandchild {grandchild} outlived kill_tree");
    }
}
