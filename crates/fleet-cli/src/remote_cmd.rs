//! `fleet remote status|logs|key`: what the broker knows about workers and jobs, what one
//! job's agent did, and the public key the user's jobs are signed with. Also where every command finds the broker: `--nats`, else
//! `FLEET_NATS_URL`, else the `remote.natsUrl` setting.

mod logs;
mod status;

use crate::settings::Settings;
use std::path::Path;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// Workers (slots, labels, last heartbeat) and jobs (queued, running, finished).
    Status {
        /// The NATS server (`nats://host:4222`); also FLEET_NATS_URL or the `remote.natsUrl`
        /// setting.
        #[arg(long)]
        nats: Option<String>,
        /// Print the records as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What a remote task's agent did, from the start.
    Logs {
        task: String,
        /// The NATS server (`nats://host:4222`); also FLEET_NATS_URL or the `remote.natsUrl`
        /// setting.
        #[arg(long)]
        nats: Option<String>,
        /// Print the events as they were published, one JSON line each.
        #[arg(long)]
        json: bool,
        /// Keep printing new events until the task ends.
        #[arg(long, short = 'f')]
        follow: bool,
    },
    /// Your public key for signing remote jobs (`ed25519:…`), made on first use in
    /// $FLEET_HOME; put it in a worker's `remote.trustedKeys` or pass it to
    /// `fleet worker --trust-key`.
    Key,
}

pub async fn run(cmd: RemoteCommand) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    match cmd {
        RemoteCommand::Status { nats, json } => {
            let remote = connect(nats.as_deref(), &cwd).await?;
            status::run(&remote, json).await
        }
        RemoteCommand::Logs {
            task,
            nats,
            json,
            follow,
        } => {
            let remote = connect(nats.as_deref(), &cwd).await?;
            logs::run(&remote, &task, json, follow).await
        }
        RemoteCommand::Key => {
            let key = fleet_remote::signing::UserKey::from_env()?;
            println!("{}", key.public_key());
            eprintln!(
                "(the secret half is in {}; give workers the line above: \"remote\": \
                 {{\"trustedKeys\": [\"…\"]}} in their $FLEET_HOME/settings.json, or \
                 fleet worker --trust-key …)",
                key.path().display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn connect(flag: Option<&str>, cwd: &Path) -> anyhow::Result<fleet_remote::Remote> {
    let url = resolve_url(flag, cwd)?;
    Ok(fleet_remote::Remote::connect(&url).await?)
}

/// The broker's URL from `flag`, else `FLEET_NATS_URL`, else the `remote.natsUrl` setting;
/// `None` when none is set.
pub fn configured_url(flag: Option<&str>, settings: Option<&Settings>) -> Option<String> {
    let given = |v: &str| Some(v.trim().to_string()).filter(|v| !v.is_empty());
    flag.and_then(given)
        .or_else(|| {
            std::env::var("FLEET_NATS_URL")
                .ok()
                .as_deref()
                .and_then(given)
        })
        .or_else(|| settings.and_then(|s| s.nats_url.as_deref()).and_then(given))
}

/// As [`configured_url`], reading the settings that apply in `cwd`; an error naming the
/// three places when none is set.
pub fn resolve_url(flag: Option<&str>, cwd: &Path) -> anyhow::Result<String> {
    let settings = crate::settings::load(cwd)?;
    configured_url(flag, Some(&settings)).ok_or_else(|| {
        anyhow::anyhow!(
            "no NATS server to reach remote workers: pass --nats nats://host:4222, set \
             FLEET_NATS_URL, or set \"remote\": {{\"natsUrl\": \"nats://host:4222\"}} in a \
             settings file (start workers there with `fleet worker`)"
        )
    })
}

/// `3 s`, `4 min`, `2 h`, `5 d`: how long ago, for people.
pub(crate) fn ago(then_ms: u64, now_ms: u64) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_the_variable_then_the_setting() {
        let settings = Settings {
            nats_url: Some("nats://from-settings:4222".into()),
            ..Settings::default()
        };
        assert_eq!(
            configured_url(Some(" nats://flag:1 "), Some(&settings)).as_deref(),
            Some("nats://flag:1")
        );
        // FLEET_NATS_URL is not set in unit tests' environment unless a developer set it.
        if std::env::var_os("FLEET_NATS_URL").is_none() {
            assert_eq!(
                configured_url(None, Some(&settings)).as_deref(),
                Some("nats://from-settings:4222")
            );
            assert_eq!(configured_url(Some(""), None), None);
        }
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(ago(1_000, 4_500), "3 s");
        assert_eq!(ago(0, 240_000), "4 min");
        assert_eq!(ago(0, 7_300_000), "2 h");
        assert_eq!(ago(0, 5 * 86_400_000), "5 d");
        assert_eq!(ago(10, 5), "0 s");
    }
}
