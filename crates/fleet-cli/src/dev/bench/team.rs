//! `fleet dev bench team`: N in-process teammates exchanging M messages each, round-robin,
//! through the real durable mailboxes.
//!
//! The model is left out (a model turn per message would measure the fake server): each member
//! is a tokio task with its own [`Mailbox`] in a team made with [`TeamStore::create`] in a
//! temporary fleet home on the real disk, so every append is a real locked, fsynced write. A
//! sender does what `Team::post` does (`append` on the async task, which returns once the entry
//! is on disk); a receiver loops as `Mate::next_mail` does: `unread`, take the entries, `ack`
//! the returned position, and when nothing is waiting sleep in `Mailbox::wait` (woken by the
//! inbox's `Notify`, not a timer).
//!
//! Each entry's text carries its sequence number and the instant `append` started, so the
//! receiver measures delivery latency (append start → entry in hand from `unread`) and checks
//! that every message came to its addressee once, in its sender's order. Latencies go into a
//! fixed-size histogram and the order check keeps one number per sender, so the bench's own
//! memory does not grow with M either.
//!
//! Three phases, each on a fresh team: unpaced at M/10 and at M (every sender as fast as it
//! can: throughput, and latency under a backlog; the two peaks show whether memory grows with
//! M), then paced at M (senders held to a share of the unpaced throughput, staggered: latency
//! when the inboxes keep up, which is what a team of agents sees).

use super::team_latency::{render, Histogram, PhaseFigures, Report, TARGET_P99_MS};
use super::{raise_file_limit, rss_kb};
use anyhow::{bail, Context};
use fleet_protocol::MailEntry;
use fleet_store::{FleetHome, Mailbox, Member, TeamStore};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

#[derive(Debug, clap::Args)]
pub struct TeamArgs {
    /// N: in-process members, each with its own inbox (at least 2).
    #[arg(long, default_value_t = 50)]
    members: usize,
    /// M: messages EACH member sends, round-robin to the others (the total is N × M; the
    /// issue's 100,000 messages at 50 members is 2,000 each).
    #[arg(long, default_value_t = 2000)]
    messages: usize,
    /// Bytes of text in each message, besides its sequence number and send instant.
    #[arg(long, default_value_t = 256)]
    body_bytes: usize,
    /// The paced phase holds all senders together to this share of the unpaced phase's
    /// throughput (0 skips the paced phase).
    #[arg(long, default_value_t = 0.5)]
    paced_share: f64,
    /// Where the mailbox calls run: `inline` on the member's async task, as the runtime does
    /// today, or `blocking-pool` (tokio's `spawn_blocking`), to see what moving the fsyncs off
    /// the worker threads would change.
    #[arg(long, value_enum, default_value_t = Io::Inline)]
    io: Io,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Where the mailbox calls (each a locked file operation with an fsync) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Io {
    /// On the calling async task, blocking its worker thread meanwhile.
    Inline,
    /// On tokio's blocking thread pool, awaited.
    BlockingPool,
}

impl Io {
    async fn run<T: Send + 'static>(
        self,
        call: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        match self {
            Self::Inline => call(),
            Self::BlockingPool => tokio::task::spawn_blocking(call)
                .await
                .context("a mailbox call panicked")?,
        }
    }
}

/// The lead of the bench team; it owns the team and takes no part in the exchange.
const LEAD: &str = "team-lead";

/// Most faults quoted in an error (all are counted).
const FAULTS_SHOWN: usize = 10;

pub async fn team(args: TeamArgs) -> anyhow::Result<()> {
    if args.members < 2 {
        bail!("--members must be at least 2 (a member does not write to itself)");
    }
    if args.messages == 0 {
        bail!("--messages must be at least 1");
    }
    if !(0.0..=1.0).contains(&args.paced_share) {
        bail!("--paced-share must be between 0 and 1");
    }
    raise_file_limit();
    let dir = tempfile::tempdir().context("creating a temporary fleet home")?;
    let home = FleetHome::at(dir.path().join("fleet-home"));
    let filler: Arc<str> = "x".repeat(args.body_bytes).into();
    let baseline = rss_kb("VmRSS")?;
    let peak_reset = reset_peak_rss();

    let small_m = (args.messages / 10).max(1);
    let run = |messages, pace| Phase {
        home: &home,
        members: args.members,
        messages,
        filler: filler.clone(),
        pace,
        io: args.io,
    };
    let small = run(small_m, None).run().await?;
    let unpaced = run(args.messages, None).run().await?;
    let paced = if args.paced_share > 0.0 {
        let rate = unpaced.messages_per_s * args.paced_share;
        Some(run(args.messages, Some(rate)).run().await?)
    } else {
        None
    };

    let report = Report {
        members: args.members,
        messages_per_member: args.messages,
        body_bytes: args.body_bytes,
        io: args.io,
        worker_threads: tokio::runtime::Handle::current().metrics().num_workers(),
        peak_reset,
        baseline_rss_mb: baseline as f64 / 1024.0,
        small,
        unpaced,
        paced,
        target_p99_ms: TARGET_P99_MS,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", render(&report));
    }
    Ok(())
}

/// One run on a fresh team.
struct Phase<'a> {
    home: &'a FleetHome,
    members: usize,
    messages: usize,
    filler: Arc<str>,
    /// The total send rate, messages per second; `None`: as fast as each sender can.
    pace: Option<f64>,
    io: Io,
}

impl Phase<'_> {
    async fn run(self) -> anyhow::Result<PhaseFigures> {
        let inboxes = Arc::new(self.make_team()?);
        let expected = expected_counts(self.members, self.messages);
        reset_peak_rss();

        let base = Instant::now();
        let done = CancellationToken::new();
        let receivers: Vec<_> = inboxes
            .iter()
            .enumerate()
            .map(|(me, inbox)| {
                tokio::spawn(receive(
                    inbox.clone(),
                    me,
                    self.members,
                    base,
                    done.clone(),
                    self.io,
                ))
            })
            .collect();
        // Each sender's period, and a stagger so they do not all fire on the same tick.
        let period = self
            .pace
            .map(|rate| Duration::from_secs_f64(self.members as f64 / rate.max(1e-3)));
        let senders: Vec<_> = (0..self.members)
            .map(|me| {
                let ticker = period.map(|period| {
                    let offset = period.mul_f64(me as f64 / self.members as f64);
                    let mut ticker =
                        tokio::time::interval_at(tokio::time::Instant::now() + offset, period);
                    // A sender that falls behind does not then burst to catch up.
                    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
                    ticker
                });
                tokio::spawn(send(
                    inboxes.clone(),
                    me,
                    self.messages,
                    base,
                    ticker,
                    self.filler.clone(),
                    self.io,
                ))
            })
            .collect();
        for sender in senders {
            sender.await.context("a sender task panicked")??;
        }
        // Every append has returned, so all mail is on disk: receivers take a last look and end.
        done.cancel();
        let mut histogram = Histogram::default();
        let mut delivered = 0;
        let mut last = Duration::ZERO;
        let mut faults = Vec::new();
        let mut fault_count = 0;
        for (me, receiver) in receivers.into_iter().enumerate() {
            let mut tally = receiver.await.context("a receiver task panicked")??;
            histogram.merge(&tally.histogram);
            delivered += tally.delivered;
            last = last.max(tally.last_at);
            if tally.delivered != expected[me] {
                tally.faults.push_capped(format!(
                    "{} received {} messages, expected {}",
                    name(me),
                    tally.delivered,
                    expected[me]
                ));
            }
            fault_count += tally.faults.count;
            faults.extend(tally.faults.shown);
        }
        let peak = rss_kb("VmHWM")?;
        let total = (self.members * self.messages) as u64;
        if fault_count > 0 {
            faults.truncate(FAULTS_SHOWN);
            bail!(
                "{} mode, M={}: {fault_count} delivery faults ({delivered} of {total} delivered):\n  {}",
                self.mode(),
                self.messages,
                faults.join("\n  ")
            );
        }
        let latency = histogram.summary();
        let wall = last.as_secs_f64();
        Ok(PhaseFigures {
            mode: self.mode(),
            messages_per_member: self.messages,
            messages: total,
            offered_per_s: self.pace,
            wall_s: wall,
            messages_per_s: if wall > 0.0 {
                delivered as f64 / wall
            } else {
                0.0
            },
            latency,
            p99_under_target: latency.p99_ms < TARGET_P99_MS,
            peak_rss_mb: peak as f64 / 1024.0,
            delivered,
            exactly_once: true,
        })
    }

    fn mode(&self) -> &'static str {
        if self.pace.is_some() {
            "paced"
        } else {
            "unpaced"
        }
    }

    /// A team on disk with the lead and N members, and each member's inbox opened.
    fn make_team(&self) -> anyhow::Result<Vec<Mailbox>> {
        let store = TeamStore::new(self.home);
        let cwd = std::env::current_dir()
            .map(|dir| dir.display().to_string())
            .unwrap_or_default();
        let lead = Member::new(LEAD, "", "team-lead", &cwd);
        let config = store
            .create("bench", Some("fleet dev bench team"), lead, "bench")
            .context("creating the bench team")?;
        let team = config.name;
        store
            .update(&team, |config| {
                for me in 0..self.members {
                    config
                        .members
                        .push(Member::new(&name(me), &team, "general-purpose", &cwd));
                }
            })
            .context("adding the members to the team file")?;
        let dir = store.inboxes_dir(&team);
        (0..self.members)
            .map(|me| {
                Mailbox::open(&dir, &name(me)).with_context(|| {
                    format!("opening the inbox of {} in {}", name(me), dir.display())
                })
            })
            .collect()
    }
}

/// Member `i`'s name, which is also its inbox's owner.
fn name(i: usize) -> String {
    format!("m{i:03}")
}

/// Who gets sender `from`'s message number `seq`: the others in turn, starting after itself.
fn target(from: usize, seq: usize, members: usize) -> usize {
    (from + 1 + seq % (members - 1)) % members
}

/// How many messages each member should receive.
fn expected_counts(members: usize, messages: usize) -> Vec<u64> {
    let mut counts = vec![0; members];
    for from in 0..members {
        for seq in 0..messages {
            counts[target(from, seq, members)] += 1;
        }
    }
    counts
}

async fn send(
    inboxes: Arc<Vec<Mailbox>>,
    me: usize,
    messages: usize,
    base: Instant,
    mut ticker: Option<tokio::time::Interval>,
    filler: Arc<str>,
    io: Io,
) -> anyhow::Result<()> {
    let from = name(me);
    for seq in 0..messages {
        if let Some(ticker) = ticker.as_mut() {
            ticker.tick().await;
        }
        let to = target(me, seq, inboxes.len());
        let sent = base.elapsed().as_nanos();
        let entry = MailEntry::new(
            from.clone(),
            format!("{seq}:{sent}:{filler}"),
            humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            format!("{from}-{seq}"),
        );
        let inbox = inboxes[to].clone();
        io.run(move || Ok(inbox.append(&entry)?))
            .await
            .with_context(|| format!("{from} sending message {seq} to {}", name(to)))?;
        if ticker.is_none() {
            // One send per tool call: an agent yields between them, so must an unpaced sender,
            // or it would hold its worker thread until all its messages are out.
            tokio::task::yield_now().await;
        }
    }
    Ok(())
}

/// What one receiver saw.
struct Tally {
    histogram: Histogram,
    delivered: u64,
    /// The highest sequence number taken from each sender so far.
    last_seq: Vec<Option<usize>>,
    /// When the latest message arrived, from the phase's start.
    last_at: Duration,
    faults: Faults,
}

#[derive(Default)]
struct Faults {
    shown: Vec<String>,
    count: usize,
}

impl Faults {
    fn push_capped(&mut self, fault: String) {
        self.count += 1;
        if self.shown.len() < FAULTS_SHOWN {
            self.shown.push(fault);
        }
    }
}

async fn receive(
    inbox: Mailbox,
    me: usize,
    members: usize,
    base: Instant,
    done: CancellationToken,
    io: Io,
) -> anyhow::Result<Tally> {
    let mut tally = Tally {
        histogram: Histogram::default(),
        delivered: 0,
        last_seq: vec![None; members],
        last_at: Duration::ZERO,
        faults: Faults::default(),
    };
    loop {
        // Read before looking at the mail, so the final pass starts after every append ended.
        let finishing = done.is_cancelled();
        let reader = inbox.clone();
        let unread = io
            .run(move || Ok(reader.unread()?))
            .await
            .with_context(|| format!("{} reading its inbox", name(me)))?;
        let now = base.elapsed();
        for warning in unread.warnings {
            tally.faults.push_capped(warning);
        }
        for entry in &unread.entries {
            tally.take(entry, me, members, now);
        }
        let (reader, upto) = (inbox.clone(), unread.upto);
        io.run(move || Ok(reader.ack(&upto)?))
            .await
            .with_context(|| format!("{} marking its mail read", name(me)))?;
        if finishing {
            return Ok(tally);
        }
        if !unread.entries.is_empty() {
            continue;
        }
        tokio::select! {
            () = done.cancelled() => {}
            () = inbox.wait() => {}
        }
    }
}

impl Tally {
    /// Records one entry, checking it is well formed, addressed here, and the next of its
    /// sender's (a repeat or a reordering shows as a number not above the last one).
    fn take(&mut self, entry: &MailEntry, me: usize, members: usize, now: Duration) {
        let parsed = parse(entry).filter(|(from, _, _)| *from < members && *from != me);
        let Some((from, seq, sent_ns)) = parsed else {
            self.faults.push_capped(format!(
                "{} got an entry it cannot read: from {:?}, msg_id {:?}",
                name(me),
                entry.from,
                entry.msg_id
            ));
            return;
        };
        if target(from, seq, members) != me {
            self.faults.push_capped(format!(
                "{} got {}'s message {seq}, which was addressed to {}",
                name(me),
                entry.from,
                name(target(from, seq, members))
            ));
        }
        if let Some(last) = self.last_seq[from] {
            if seq <= last {
                self.faults.push_capped(format!(
                    "{} got {}'s message {seq} after its message {last} (a repeat or out of order)",
                    name(me),
                    entry.from
                ));
            }
        }
        self.last_seq[from] = Some(seq);
        self.delivered += 1;
        self.last_at = now;
        self.histogram
            .record(now.saturating_sub(Duration::from_nanos(sent_ns)));
    }
}

/// `m007` and `"12:345678:xxx…"` → (7, 12, 345678).
fn parse(entry: &MailEntry) -> Option<(usize, usize, u64)> {
    let from = entry.from.strip_prefix('m')?.parse().ok()?;
    let mut parts = entry.text.splitn(3, ':');
    let seq = parts.next()?.parse().ok()?;
    let sent = parts.next()?.parse().ok()?;
    Some((from, seq, sent))
}

/// Resets this process's peak RSS (`VmHWM`) to its current RSS; false when the kernel does
/// not allow it, and peaks then include earlier phases.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_spreads_each_senders_messages_over_the_others() {
        for member in 0..5 {
            let targets: Vec<_> = (0..8).map(|seq| target(member, seq, 5)).collect();
            assert!(!targets.contains(&member), "{member} writes to itself");
            assert_eq!(targets[0..4].iter().sum::<usize>(), 10 - member);
        }
        assert_eq!(expected_counts(5, 8), vec![8; 5]);
        assert_eq!(expected_counts(3, 3).iter().sum::<u64>(), 9);
    }

    #[test]
    fn entries_carry_their_sender_number_and_send_instant() {
        let entry = MailEntry::new("m007", "12:345678:xx:yy", "t", "m007-12");
        assert_eq!(parse(&entry), Some((7, 12, 345_678)));
        let bad = MailEntry::new("alpha", "12:3:x", "t", "id");
        assert_eq!(parse(&bad), None);
    }

    #[test]
    fn a_repeat_a_reordering_and_a_misaddressed_entry_are_each_a_fault() {
        let mut tally = Tally {
            histogram: Histogram::default(),
            delivered: 0,
            last_seq: vec![None; 3],
            last_at: Duration::ZERO,
            faults: Faults::default(),
        };
        let entry = |from: &str, seq: usize| MailEntry::new(from, format!("{seq}:0:x"), "t", "id");
        let now = Duration::from_millis(1);
        // m001's messages 0, 2, 4 go to m002 (3 members); m000's 0 goes to m001.
        tally.take(&entry("m001", 0), 2, 3, now);
        tally.take(&entry("m001", 2), 2, 3, now);
        assert_eq!(tally.faults.count, 0, "{:?}", tally.faults.shown);
        tally.take(&entry("m001", 2), 2, 3, now);
        tally.take(&entry("m001", 0), 2, 3, now);
        assert_eq!(tally.faults.count, 2, "{:?}", tally.faults.shown);
        tally.take(&entry("m000", 0), 2, 3, now);
        assert!(
            tally.faults.shown[2].contains("addressed to m001"),
            "{:?}",
            tally.faults.shown
        );
        tally.take(&entry("m002", 1), 2, 3, now);
        assert_eq!(tally.faults.count, 4, "its own message is refused");
        assert_eq!(tally.delivered, 5);
    }
}
