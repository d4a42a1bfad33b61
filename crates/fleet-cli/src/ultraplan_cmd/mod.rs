//! `fleet ultraplan`: remote planning from the command line.
//!
//! - `fleet ultraplan "task"` launches a planning session on a worker, prints each phase
//!   change as `ultraplan <id>: running`, then the plan and what to do next; exits 0 when
//!   the plan is ready (the session waits on the worker for the decision).
//! - `approve <id>`: the worker carries the plan out; its branch is fetched here.
//! - `reject <id> --feedback "…"`: the session revises; the revised plan is printed.
//! - `reply <id> "…"`: answers a session that waits for input.
//! - `teleport <id>`: the plan comes back and runs here as a local `fleet -p` session.
//! - `stop <id>`: archives the session.
//!
//! Whatever goes wrong while following a session (the broker gone, the deadline passed,
//! Ctrl-C) archives it, so no worker is left holding a session nobody will answer.

pub(crate) mod follow;
mod teleport;

use anyhow::Context;
use fleet_remote::Remote;
use std::process::ExitCode;

/// Where the broker is: `--nats`, else `FLEET_NATS_URL`.
pub const NATS_ENV: &str = "FLEET_NATS_URL";

#[derive(Debug, clap::Args)]
#[command(subcommand_negates_reqs = true)]
pub struct UltraplanArgs {
    #[command(subcommand)]
    pub verb: Option<Verb>,
    /// The task to plan (`fleet ultraplan "move auth to OAuth2"`).
    #[arg(required = true)]
    pub task: Vec<String>,
    /// The model to plan with (default: `FLEET_ULTRAPLAN_MODEL`, else `opus`).
    #[arg(long)]
    pub model: Option<String>,
    /// Labels the worker must have (`--labels gpu,big`).
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// The NATS server (`nats://host:4222`); also FLEET_NATS_URL.
    #[arg(long, global = true)]
    pub nats: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Verb {
    /// Carry the plan out on the worker, then fetch its branch into this repository.
    Approve {
        /// The session's task id (`r…`, printed at launch).
        id: String,
    },
    /// Send the plan back for revision with your feedback; prints the revised plan.
    Reject {
        /// The session's task id.
        id: String,
        /// What the revised plan should change.
        #[arg(long)]
        feedback: String,
    },
    /// Answer a session that waits for your input; follows it to its next plan.
    Reply {
        /// The session's task id.
        id: String,
        /// The answer.
        text: String,
    },
    /// Bring the plan here and run it as a local `fleet -p` session (arguments after `--`
    /// go to that session, e.g. `-- --permission-mode acceptEdits`).
    Teleport {
        /// The session's task id.
        id: String,
        /// Only print the plan; run nothing.
        #[arg(long)]
        print_plan_only: bool,
        /// Arguments for the local `fleet -p` session.
        #[arg(last = true)]
        local_args: Vec<String>,
    },
    /// Stop the session and archive it.
    Stop {
        /// The session's task id.
        id: String,
    },
}

pub async fn run(args: UltraplanArgs) -> anyhow::Result<ExitCode> {
    if args.verb.is_some() && (args.model.is_some() || !args.labels.is_empty()) {
        anyhow::bail!(
            "--model and --labels choose where a new session plans (`fleet ultraplan \"task\"`); \
             a decision on an existing one takes neither"
        );
    }
    let cwd = std::env::current_dir().context("the current folder")?;
    let url = nats_url(args.nats.as_deref(), &cwd).ok_or_else(|| anyhow::anyhow!(NO_URL))?;
    let remote = Remote::connect(&url).await?;
    let config = fleet_remote::ultraplan::PollConfig::from_env()?;
    let follow = follow::Follower {
        remote: &remote,
        config,
    };
    match args.verb {
        None => {
            let request = fleet_remote::ultraplan::LaunchRequest {
                prompt: args.task.join(" "),
                cwd,
                model: Some(fleet_remote::ultraplan::launch::choose_model(
                    args.model.as_deref(),
                )),
                labels: args.labels,
            };
            follow.launch(&request).await
        }
        Some(Verb::Approve { id }) => follow.approve(&id, &cwd).await,
        Some(Verb::Reject { id, feedback }) => follow.reject(&id, feedback).await,
        Some(Verb::Reply { id, text }) => follow.reply(&id, text).await,
        Some(Verb::Teleport {
            id,
            print_plan_only,
            local_args,
        }) => teleport::run(&follow, &id, &cwd, print_plan_only, &local_args).await,
        Some(Verb::Stop { id }) => follow.stop(&id).await,
    }
}

/// What to do when no broker is configured.
pub const NO_URL: &str = "Ultraplan runs on a remote worker, and no NATS server is set up: \
    pass --nats nats://host:4222, set FLEET_NATS_URL or the `remote.natsUrl` setting, and start a worker there with \
    `fleet worker --nats nats://host:4222`";

/// The broker's URL: the flag, else `FLEET_NATS_URL`, else the `remote.natsUrl` setting that
/// applies in `cwd`; `None` when none is set (a settings file that cannot be read counts as
/// none here: the session itself reports it).
pub fn nats_url(flag: Option<&str>, cwd: &std::path::Path) -> Option<String> {
    let settings = crate::settings::load(cwd).ok();
    crate::remote_cmd::configured_url(flag, settings.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: UltraplanArgs,
    }

    fn parse(words: &[&str]) -> Result<UltraplanArgs, clap::Error> {
        let argv = std::iter::once("ultraplan").chain(words.iter().copied());
        Cli::try_parse_from(argv).map(|cli| cli.args)
    }

    #[test]
    fn a_task_and_the_verbs_share_the_command() {
        let args = parse(&["--nats", "nats://h:1", "move auth", "to OAuth2"]).expect("a task");
        assert!(args.verb.is_none());
        assert_eq!(args.task.join(" "), "move auth to OAuth2");
        assert_eq!(args.nats.as_deref(), Some("nats://h:1"));

        let args = parse(&["approve the plan"]).expect("one quoted word is a task");
        assert!(args.verb.is_none());

        let args = parse(&["--nats", "nats://h:1", "reject", "r1", "--feedback", "more"])
            .expect("--nats before the verb");
        match args.verb {
            Some(Verb::Reject { id, feedback }) => {
                assert_eq!((id, feedback), ("r1".into(), "more".into()))
            }
            other => panic!("{other:?}"),
        }
        let args = parse(&[
            "teleport",
            "r1",
            "--nats",
            "nats://h:1",
            "--",
            "--permission-mode",
            "acceptEdits",
        ])
        .expect("--nats after the verb, flags for the local session");
        match args.verb {
            Some(Verb::Teleport {
                local_args,
                print_plan_only,
                ..
            }) => {
                assert_eq!(local_args, ["--permission-mode", "acceptEdits"]);
                assert!(!print_plan_only);
            }
            other => panic!("{other:?}"),
        }
        assert!(parse(&[]).is_err(), "a task or a verb is needed");
        assert!(
            parse(&["reject", "r1"]).is_err(),
            "a rejection needs its feedback"
        );
    }

    #[test]
    fn the_next_steps_line_up() {
        let text = follow::next_steps("r1");
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 4);
        let column = |line: &str| {
            line.find("  ")
                .and_then(|_| line.rfind("  "))
                .map(|at| line[..at].chars().count())
        };
        let columns: Vec<_> = lines.iter().map(|l| column(l)).collect();
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
        assert!(
            text.contains("fleet ultraplan reject r1 --feedback \"…\"  have it revised"),
            "{text}"
        );
    }
}
