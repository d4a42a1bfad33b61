//! One run of a scenario: a fresh project and fleet home, a fake model server of its own,
//! the session (killed at a random moment and resumed, for the kill scenarios), then every
//! invariant.

use super::checks::{self, Kind, Problem, Torn};
use super::child::{self, Ended, FakeServer, KillTrigger, Session};
use super::hang;
use super::scenarios::{Spec, RESUME_MARK};
use anyhow::Context;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A session that neither sends a request nor uses CPU for this long is hung.
const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// What one run produced.
pub(super) struct RunReport {
    pub wall: Duration,
    pub problems: Vec<Problem>,
    /// Whether the session was killed before it ended (kill scenarios only).
    pub killed: bool,
}

/// When a kill scenario's session is killed: after this many requests reached the server,
/// this much later.
#[derive(Debug, Clone, Copy)]
pub(super) struct KillPlan {
    pub after_requests: usize,
    pub jitter: Duration,
}

/// Runs `spec` once in `dir` (created empty by the caller); a kill scenario's session is
/// killed as `kill` says, then resumed.
/// `exe` serves the fake model; `fleet` runs the sessions.
pub(super) fn run(
    exe: &Path,
    fleet: &Path,
    spec: &Spec,
    dir: &Path,
    kill: Option<KillPlan>,
) -> RunReport {
    match run_inner(exe, fleet, spec, dir, kill) {
        Ok(report) => report,
        Err(e) => RunReport {
            wall: Duration::ZERO,
            problems: vec![Problem::new(Kind::Harness, format!("{e:#}"))],
            killed: false,
        },
    }
}

fn run_inner(
    exe: &Path,
    fleet: &Path,
    spec: &Spec,
    dir: &Path,
    kill: Option<KillPlan>,
) -> anyhow::Result<RunReport> {
    let repo = dir.join("repo");
    make_repo(&repo, &spec.files)?;
    std::fs::create_dir_all(dir.join("home")).context("creating HOME")?;
    let scenario = dir.join("model.json");
    let model = spec
        .model
        .to_string()
        .replace("{REPO}", &repo.display().to_string());
    std::fs::write(&scenario, model).context("writing the model scenario")?;
    let request_log = dir.join("requests.jsonl");
    let server = FakeServer::start(exe, &scenario, &request_log)?;
    let marker = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session_id = uuid::Uuid::new_v4().to_string();
    let session = Session {
        exe: fleet,
        dir,
        repo: &repo,
        base_url: &server.url,
        marker: &marker,
        env: &spec.env,
        request_log: &request_log,
    };
    let capture = |name: &str| {
        let out = dir.join(format!("{name}.hang.txt"));
        let log = request_log.clone();
        move |pid: u32| hang::capture(pid, &log, out)
    };

    let mut args = vec![
        "-p".to_owned(),
        spec.prompt.clone(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
        "--session-id".into(),
        session_id.clone(),
    ];
    args.extend(spec.args.iter().cloned());
    let trigger = kill.map(|k| KillTrigger {
        log: request_log.clone(),
        after_requests: k.after_requests,
        jitter: k.jitter,
    });
    let first = session.run(
        "first",
        &args,
        spec.deadline,
        IDLE_LIMIT,
        trigger.as_ref(),
        capture("first"),
    )?;
    let killed = matches!(first.ended, Ended::Killed);
    let mut wall = first.wall;
    let mut problems = Vec::new();
    if killed {
        // What a kill -9 leaves running is reported, then cleared so the resume starts clean.
        let survivors = checks::survivors(&marker);
        if !survivors.is_empty() {
            let shown: Vec<String> = survivors
                .iter()
                .take(5)
                .map(|(pid, cmd)| format!("{pid} {cmd}"))
                .collect();
            let left = child::wait_marked_gone(&marker, Duration::from_secs(5));
            if !left.is_empty() {
                problems.push(Problem::new(
                    Kind::LeftBehind,
                    format!(
                        "{} processes outlived the kill -9 of the session by 5 s: {}",
                        left.len(),
                        shown.join("; ")
                    ),
                ));
            }
            child::kill_marked(&marker);
        }
        problems.extend(checks::transcripts(&dir.join("fleet-home"), Torn::Anywhere));
        let mut resume = vec![
            "-p".to_owned(),
            format!("{RESUME_MARK}: carry on."),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--resume".into(),
            session_id,
        ];
        resume.extend(spec.args.iter().cloned());
        let second = session.run(
            "resume",
            &resume,
            spec.deadline,
            IDLE_LIMIT,
            None,
            capture("resume"),
        )?;
        wall += second.wall;
        problems.extend(checks::exit_and_result(&second, ""));
        problems.extend(checks::transcripts(
            &dir.join("fleet-home"),
            Torn::InSubagentFiles,
        ));
        if let Ok(requests) = server.requests() {
            problems.extend(checks::resumed_requests_valid(&requests, RESUME_MARK));
        }
    } else {
        problems.extend(checks::exit_and_result(&first, spec.result));
        if matches!(first.ended, Ended::Exited(_)) && problems.is_empty() {
            problems.extend(checks::rule_counts(&request_log, &spec.rule_counts));
            problems.extend(checks::persisted(&dir.join("fleet-home"), &spec.persisted));
        }
        problems.extend(checks::transcripts(&dir.join("fleet-home"), Torn::Nowhere));
    }
    if spec.tasks_report && !problems.iter().any(|p| p.kind == Kind::Hang) {
        match server.requests() {
            Ok(requests) => problems.extend(checks::every_task_reported(&requests)),
            Err(e) => problems.push(Problem::new(Kind::Harness, format!("{e:#}"))),
        }
    }
    problems.extend(checks::left_behind(&repo, dir, &marker));
    child::kill_marked(&marker);
    drop(server);
    Ok(RunReport {
        wall,
        problems,
        killed,
    })
}

/// A git repository with one commit holding `files`.
fn make_repo(repo: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(repo).context("creating the repository")?;
    std::fs::write(repo.join("README.md"), "# soak\n").context("writing the repository")?;
    for (rel, text) in files {
        let path = repo.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).context("writing the repository")?;
        }
        std::fs::write(&path, text).context("writing the repository")?;
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "."],
        &["commit", "-q", "-m", "start"],
    ] {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=soak",
                "-c",
                "user.email=soak@fleet.invalid",
            ])
            .args(args)
            .current_dir(repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .context("running git")?;
        if !out.status.success() {
            anyhow::bail!(
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    Ok(())
}
