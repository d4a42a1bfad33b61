//! Cost of the durable inbox: appends per second (one fsync each, and batched), and the
//! latency from the start of `append` to a waiting reader in the same process holding the
//! entry (append + fsync + wake-up + read), and from `append` returning to that (wake-up +
//! read), as p50/p99.
//! `cargo bench -p fleet-store --bench mailbox`; FLEET_BENCH_MESSAGES sets the count (2000).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_protocol::MailEntry;
use fleet_store::Mailbox;

fn entry(n: u64, sent_ns: u128) -> MailEntry {
    MailEntry::new(
        "alpha",
        format!("{sent_ns} status update {n}: the parser tests pass, moving on to the lexer"),
        "2026-12-01T17:00:00.000Z",
        format!("alpha-{n}"),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let messages: u64 = std::env::var("FLEET_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir()?;
    println!("{messages} messages in {}", dir.path().display());

    // Appends alone.
    let inbox = Mailbox::open(dir.path(), "solo")?;
    let started = Instant::now();
    for n in 0..messages {
        inbox.append(&entry(n, 0))?;
    }
    let per = started.elapsed().as_secs_f64() / messages as f64;
    println!(
        "append (fsync each): {:9.0} appends/s  ({:6.1} µs each)",
        1.0 / per,
        per * 1e6
    );
    let batch: Vec<_> = (0..50).map(|n| entry(n, 0)).collect();
    let rounds = (messages / 50).max(1);
    let started = Instant::now();
    for _ in 0..rounds {
        inbox.append_all(&batch)?;
    }
    let per = started.elapsed().as_secs_f64() / (rounds * 50) as f64;
    println!(
        "append_all of 50:    {:9.0} entries/s ({:6.1} µs each)",
        1.0 / per,
        per * 1e6
    );

    // Append → waiting reader.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let base = Instant::now();
    let inbox = Mailbox::open(dir.path(), "lead")?;
    let returned: Arc<Vec<AtomicU64>> =
        Arc::new((0..messages).map(|_| AtomicU64::new(0)).collect());
    let reader = {
        let inbox = inbox.clone();
        let returned = Arc::clone(&returned);
        runtime.spawn(async move {
            let mut latencies = Vec::with_capacity(messages as usize);
            let mut wakes = Vec::with_capacity(messages as usize);
            while (latencies.len() as u64) < messages {
                let unread = inbox.unread()?;
                let now = base.elapsed().as_nanos();
                for entry in &unread.entries {
                    let sent: u128 = entry
                        .text
                        .split(' ')
                        .next()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(now);
                    latencies.push(Duration::from_nanos((now - sent) as u64));
                    let n: usize = entry
                        .msg_id
                        .trim_start_matches("alpha-")
                        .parse()
                        .unwrap_or(0);
                    // 0 when the reader got it before the writer noted the time: no wait.
                    let back = u128::from(returned[n].load(Ordering::SeqCst));
                    wakes.push(Duration::from_nanos(
                        now.saturating_sub(back.max(sent)) as u64
                    ));
                }
                if unread.entries.is_empty() {
                    inbox.wait().await;
                } else {
                    inbox.ack(&unread.upto)?;
                }
            }
            Ok::<_, fleet_store::MailboxError>((latencies, wakes))
        })
    };
    // Paced sends, as teammates talk: each waits a little so the reader is asleep when most
    // messages land, which is the wake-up path being measured.
    let writer = Mailbox::open(dir.path(), "lead")?;
    let started = Instant::now();
    for n in 0..messages {
        writer.append(&entry(n, base.elapsed().as_nanos()))?;
        returned[n as usize].store(base.elapsed().as_nanos() as u64, Ordering::SeqCst);
        std::thread::sleep(Duration::from_micros(200));
    }
    let (mut latencies, mut wakes) = runtime.block_on(reader)??;
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    wakes.sort_unstable();
    println!(
        "append → reader holds it (same process, paced 200 µs): p50 {:?}, p99 {:?}, max {:?} over {} messages in {:?}",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1],
        latencies.len(),
        elapsed
    );
    println!(
        "append returned → reader holds it:                   p50 {:?}, p99 {:?}, max {:?}",
        percentile(&wakes, 0.50),
        percentile(&wakes, 0.99),
        wakes[wakes.len() - 1],
    );
    Ok(())
}
