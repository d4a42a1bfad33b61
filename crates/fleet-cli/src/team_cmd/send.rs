//! `fleet team send`: a message from a person or a script into a member's inbox, written the
//! way a teammate's SendMessage writes it, so the session running the member cannot tell the
//! difference except by `from`.

use super::{addressee, load_team, LEAD_NAME};
use anyhow::Context;
use fleet_protocol::team::frames::frame_type;
use fleet_protocol::MailEntry;
use fleet_store::team::{validate_member_name, TeamStore, RESERVED_MEMBER_NAMES};
use fleet_store::{Mailbox, MemberStatus};
use std::io::Read;

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
}

pub fn send(store: &TeamStore, args: SendArgs) -> anyhow::Result<()> {
    let from = sender(&args.from)?;
    let config = load_team(store, &args.team)?;
    let to = addressee(&config, &args.member)?;
    let text = if args.text == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the message from stdin")?;
        text
    } else {
        args.text
    };
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
    let summary = args
        .summary
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    // A message sent in a member's name carries that member's color, as its own would.
    let color = config.member(&from).and_then(|m| m.color.clone());
    let msg_id = uuid::Uuid::new_v4().to_string();
    let timestamp = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let entry = MailEntry::new(from, text, timestamp, msg_id.as_str())
        .with_summary(summary)
        .with_color(color);
    let mailbox = Mailbox::open(&store.inboxes_dir(&config.name), &to.owner)?;
    mailbox.append(&entry)?;
    println!("{msg_id}");
    if to.member.is_some_and(|m| m.status == MemberStatus::Stopped) {
        eprintln!(
            "fleet: note: {} is stopped; the message waits in its inbox until the team's \
             session brings it back",
            to.owner
        );
    }
    Ok(())
}

/// `--from` as the recipient will see it: a plain name, or one of the reserved names in
/// their usual spelling (`user`, `system`, `team-lead`; `main` is the lead, so `team-lead`).
fn sender(from: &str) -> anyhow::Result<String> {
    if from.eq_ignore_ascii_case("main") {
        return Ok(LEAD_NAME.to_string());
    }
    if let Some(reserved) = RESERVED_MEMBER_NAMES
        .iter()
        .find(|r| r.eq_ignore_ascii_case(from))
    {
        return Ok((*reserved).to_string());
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
            ("team-lead", "team-lead"),
            ("main", "team-lead"),
            ("alpha", "alpha"),
            ("ci-bot_2", "ci-bot_2"),
        ] {
            assert_eq!(sender(given).ok().as_deref(), Some(shown), "{given}");
        }
        for bad in ["", "a b", "../x", "x\u{1b}[2J", "-lead"] {
            assert!(sender(bad).is_err(), "{bad:?}");
        }
    }
}
