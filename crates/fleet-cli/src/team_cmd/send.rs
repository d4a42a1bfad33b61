//! `fleet team send`: a message from a person or a script into a member's inbox, written the
//! way a teammate's SendMessage writes it, so the session running the member cannot tell the
//! difference except by `from`.
//!
//! As `user` (the default) the entry is signed with the user's team-mail key
//! (`$FLEET_HOME/keys/team-mail.ed25519`, made on first use), which every teammate accepts as
//! the user; a pane teammate refuses `user` mail without it. When the recipient screens its
//! mail (a running pane teammate), this waits for its receipt and fails with its reason when
//! it refused the message: what is refused is never reported as delivered (see `delivery`).

use super::delivery::{self, Outcome, Reach};
use super::{addressee, load_team, LEAD_NAME};
use anyhow::Context;
use fleet_protocol::team::frames::frame_type;
use fleet_protocol::MailEntry;
use fleet_runtime::teams::signing::{UserMailKey, USER_SENDER};
use fleet_store::team::{validate_member_name, TeamStore, RESERVED_MEMBER_NAMES};
use fleet_store::{FleetHome, Mailbox};
use std::io::Read;
use std::time::Duration;

/// Receipts older than this were not waited for: swept away.
const STALE_RECEIPTS: Duration = Duration::from_secs(3600);

#[derive(Debug, clap::Args)]
pub struct SendArgs {
    /// The team's name.
    team: String,
    /// The member: its name, `name@team`, or `team-lead` / `main` for the lead.
    member: String,
    /// The message (plain text); `-` reads it from stdin.
    text: String,
    /// Who the message is from, as the recipient sees it.
    #[arg(long, value_name = "NAME", default_value = "user")]
    from: String,
    /// A short summary shown with the message (in the recipient's `<teammate-message>` tag).
    #[arg(long, value_name = "TEXT")]
    summary: Option<String>,
    /// How long to wait for a running teammate that checks its mail to take or refuse the
    /// message; 0 does not wait.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    wait: u64,
}

pub fn send(home: &FleetHome, store: &TeamStore, args: SendArgs) -> anyhow::Result<()> {
    let text = if args.text == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the message from stdin")?;
        text
    } else {
        args.text
    };
    let sent = deliver(
        home,
        store,
        Outgoing {
            team: args.team,
            member: args.member,
            text,
            from: args.from,
            summary: args.summary,
            wait: Duration::from_secs(args.wait),
        },
    )?;
    println!("{}", sent.msg_id);
    if let Some(note) = sent.note {
        eprintln!("fleet: {note}");
    }
    Ok(())
}

/// One message to send, as `fleet team send` (and the dashboard) take it.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub team: String,
    /// A member's name, `name@team`, or `team-lead` / `main`.
    pub member: String,
    pub text: String,
    /// `user` (signed with the user's key) or a plain member name.
    pub from: String,
    pub summary: Option<String>,
    /// How long to wait for a running teammate that screens its mail to take or refuse it.
    pub wait: Duration,
}

/// A message in the recipient's inbox.
#[derive(Debug, Clone)]
pub struct Sent {
    pub msg_id: String,
    /// `queued: …` or `note: …` when the recipient has not taken it yet.
    pub note: Option<String>,
}

/// Appends `out` to the member's inbox, signed as the user when it is from `user`, and waits
/// for a screening teammate's receipt (blocking: call it off the async threads). A message the
/// recipient refused is an error: what is refused is never reported as delivered.
pub fn deliver(home: &FleetHome, store: &TeamStore, out: Outgoing) -> anyhow::Result<Sent> {
    let from = sender(&out.from)?;
    let config = load_team(store, &out.team)?;
    let to = addressee(&config, &out.member)?;
    let text = out.text;
    if text.trim().is_empty() {
        anyhow::bail!("the message is empty: give the text to send (or `-` to read it from stdin)");
    }
    // A frame inside plain text would be acted on as protocol (a forged shutdown approval,
    // say); frames come only from the sessions that own them.
    if let Some(kind) = frame_type(&text) {
        anyhow::bail!(
            "the message is a {kind} protocol frame; `fleet team send` sends plain text only"
        );
    }
    let summary = out
        .summary
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    // A message sent in a member's name carries that member's color, as its own would.
    let color = config.member(&from).and_then(|m| m.color.clone());
    let msg_id = uuid::Uuid::new_v4().to_string();
    let timestamp = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let mut entry = MailEntry::new(from, text, timestamp, msg_id.as_str())
        .with_summary(summary)
        .with_color(color);
    if entry.from == USER_SENDER {
        // Before anything is written: an entry the user's key cannot vouch for would be
        // refused as a forgery.
        let key = UserMailKey::load_or_create(home.root())
            .context("cannot sign the message as `user`; nothing was sent")?;
        key.sign(&mut entry);
    }
    let reach = match delivery::reach(&config, &to) {
        // A teammate answers for mail from `user` only (and for what it refuses, which a
        // member name sending plain text never is: lead names and frames are refused above).
        Reach::Screens { .. } if entry.from != USER_SENDER => Reach::Unscreened,
        reach => reach,
    };
    let team_dir = store.dir(&config.name);
    // A receipt left by an earlier message of the same id cannot exist (a fresh uuid), so
    // whatever appears under it is the answer to this one.
    let mailbox = Mailbox::open(&store.inboxes_dir(&config.name), &to.owner)?;
    mailbox.append(&entry)?;
    let note = match reach {
        Reach::NotRunning => Some(format!(
            "queued: {} is not running; delivered when the team's session resumes",
            to.owner
        )),
        Reach::Unscreened => None,
        Reach::Screens { pid } => {
            fleet_runtime::teams::receipts::sweep(&team_dir, STALE_RECEIPTS);
            match delivery::wait(&team_dir, &msg_id, pid, out.wait)? {
                Outcome::Accepted => None,
                Outcome::Refused(reason) => anyhow::bail!(
                    "{} refused message {msg_id}: {}; it was not delivered",
                    to.owner,
                    reason.trim_end_matches('.')
                ),
                Outcome::Ended => Some(format!(
                    "queued: {} stopped before reading it; delivered when the team's session \
                     resumes",
                    to.owner
                )),
                Outcome::NoAnswer => Some(format!(
                    "note: {} has not taken the message yet (waited {}s); it stays in its \
                     inbox, unread",
                    to.owner,
                    out.wait.as_secs()
                )),
            }
        }
    };
    Ok(Sent { msg_id, note })
}

/// `--from` as the recipient will see it: `user` (any case), or a plain name. The lead's
/// names (`team-lead`, `main`, `system`) are refused: only the lead's session speaks as the
/// lead, and it signs what it sends; the person speaks as `user`, signed with their key.
fn sender(from: &str) -> anyhow::Result<String> {
    if from.eq_ignore_ascii_case(USER_SENDER) {
        return Ok(USER_SENDER.to_string());
    }
    if from.eq_ignore_ascii_case("main")
        || RESERVED_MEMBER_NAMES
            .iter()
            .any(|r| r.eq_ignore_ascii_case(from))
    {
        anyhow::bail!(
            "--from {from:?}: only the lead's own session speaks as {LEAD_NAME:?} or \
             \"system\" (and signs what it sends); send as `user` (the default)"
        );
    }
    validate_member_name(from).with_context(|| format!("invalid --from {from:?}"))?;
    Ok(from.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn senders_are_plain_or_reserved_names() {
        for (given, shown) in [
            ("user", "user"),
            ("USER", "user"),
            ("alpha", "alpha"),
            ("ci-bot_2", "ci-bot_2"),
        ] {
            assert_eq!(sender(given).ok().as_deref(), Some(shown), "{given}");
        }
        for bad in [
            "",
            "a b",
            "../x",
            "x\u{1b}[2J",
            "-lead",
            "team-lead",
            "Main",
            "system",
        ] {
            assert!(sender(bad).is_err(), "{bad:?}");
        }
    }
}
