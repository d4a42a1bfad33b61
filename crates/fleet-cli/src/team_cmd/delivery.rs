//! Whether a message `fleet team send` wrote reaches someone now, and what they made of it.
//!
//! - A member nothing runs (stopped in the team file, or its process — its lead's for an
//!   in-process member — gone) reads its mail when the team's session resumes: the message is
//!   queued, and the sender is told so.
//! - The lead and in-process teammates take their inbox as it is (they run in the lead's
//!   process): the entry is theirs once it is on disk.
//! - A running pane teammate screens each entry (signatures, frames only the lead sends) and
//!   leaves a receipt for mail from `user` and for whatever it refuses
//!   (`fleet_runtime::teams::receipts`); the sender waits for it, bounded, and for the
//!   teammate's process, so a teammate that dies meanwhile does not leave it waiting.

use super::Addressee;
use fleet_protocol::BackendType;
use fleet_runtime::teams::receipts;
use fleet_store::team::TeamConfig;
use fleet_store::MemberStatus;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the receipt and the teammate's process are looked at while waiting.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Who, if anyone, takes the message now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Nothing runs the member: the message waits for the team's session.
    NotRunning,
    /// Taken as it is by a process that does not screen its mail.
    Unscreened,
    /// A running pane teammate (process `pid`), which answers with a receipt.
    Screens { pid: u32 },
}

/// What became of a message sent to a teammate that screens its mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Refused(String),
    /// The teammate's process ended before it answered.
    Ended,
    /// No answer within the wait.
    NoAnswer,
}

pub fn reach(config: &TeamConfig, to: &Addressee<'_>) -> Reach {
    let lead_pid = pid_in(config.extra.get("leadProcess"));
    let lead_running = lead_pid.is_some_and(fleet_store::process_alive);
    let by_lead = if lead_running {
        Reach::Unscreened
    } else {
        Reach::NotRunning
    };
    let Some(member) = to.member.filter(|m| m.agent_id != config.lead_agent_id) else {
        return by_lead;
    };
    if member.status == MemberStatus::Stopped {
        return Reach::NotRunning;
    }
    match member.backend {
        BackendType::InProcess => by_lead,
        _ => match pid_in(Some(&serde_json::Value::Object(member.extra.clone()))) {
            Some(pid) if fleet_store::process_alive(pid) => Reach::Screens { pid },
            _ => Reach::NotRunning,
        },
    }
}

/// Waits up to `bound` for the receipt of `msg_id`, while process `pid` lives.
pub fn wait(team_dir: &Path, msg_id: &str, pid: u32, bound: Duration) -> anyhow::Result<Outcome> {
    let start = Instant::now();
    loop {
        let answered = |receipt: receipts::Receipt| match receipt.accepted {
            true => Outcome::Accepted,
            false => Outcome::Refused(receipt.reason.unwrap_or_default()),
        };
        if let Some(receipt) = receipts::take(team_dir, msg_id)? {
            return Ok(answered(receipt));
        }
        if !fleet_store::process_alive(pid) {
            // It may have answered just before it ended.
            return Ok(receipts::take(team_dir, msg_id)?.map_or(Outcome::Ended, answered));
        }
        if start.elapsed() >= bound {
            return Ok(Outcome::NoAnswer);
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

/// `{"pid": n}` → n.
fn pid_in(value: Option<&serde_json::Value>) -> Option<u32> {
    value?
        .get("pid")?
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok())
        .filter(|&pid| pid > 1)
}
