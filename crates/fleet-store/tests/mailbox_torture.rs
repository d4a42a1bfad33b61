//! The mailbox torture run of issue 12: 8 writer processes × 2,000 messages into one inbox while
//! a reader process consumes it, with writers and the reader killed by SIGKILL at random points
//! and restarted. At the end every message is delivered exactly once, in each sender's order,
//! and the inbox files are small.
//!
//! The kill schedule comes from a seed, printed at the start; `FLEET_TORTURE_SEED=<n>` replays
//! one. Writers restart from their last acknowledged seq + 1, so a message written but not yet
//! acknowledged when its writer died is written again with the same msg_id: the reader's
//! msg_id check must absorb that.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fleet_store::Mailbox;

const TORTURE: &str = env!("CARGO_BIN_EXE_fleet-mailbox-torture");
const WRITERS: usize = 8;
const PER_WRITER: i64 = 2000;
const KILLS: u32 = 40;
const COMPACT_BYTES: u64 = 32 * 1024;
const OWNER: &str = "lead";

/// xorshift64*: enough randomness for a kill schedule, and replayable from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Writer {
    name: String,
    /// The highest seq whose append returned Ok (printed by the writer), -1 for none.
    acked: Arc<AtomicI64>,
    child: Option<(Child, JoinHandle<()>)>,
    kills: u32,
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some((child, _)) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Writer {
    fn start(&mut self, dir: &Path) {
        let start = self.acked.load(Ordering::SeqCst) + 1;
        if start >= PER_WRITER {
            return;
        }
        let mut child = Command::new(TORTURE)
            .args(["write", "--dir"])
            .arg(dir)
            .args(["--owner", OWNER, "--from", &self.name, "--start"])
            .arg(start.to_string())
            .arg("--count")
            .arg((PER_WRITER - start).to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a writer");
        let stdout = child.stdout.take().expect("piped stdout");
        let acked = Arc::clone(&self.acked);
        let name = self.name.clone();
        let follow = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let seq: i64 = line.trim().parse().expect("writer prints seqs");
                let before = acked.swap(seq, Ordering::SeqCst);
                assert_eq!(seq, before + 1, "{name} acknowledged out of order");
            }
        });
        self.child = Some((child, follow));
    }

    /// Reaps a writer that has ended by itself; true when it has written everything.
    fn reap_if_done(&mut self, dir: &Path) -> bool {
        if let Some((child, _)) = &mut self.child {
            match child.try_wait().expect("poll writer") {
                None => return false,
                Some(status) => {
                    let (_, follow) = self.child.take().expect("running");
                    follow.join().expect("follower");
                    assert!(status.success(), "writer {} failed: {status}", self.name);
                }
            }
        }
        if self.acked.load(Ordering::SeqCst) + 1 < PER_WRITER {
            self.start(dir);
            return false;
        }
        true
    }

    fn kill(&mut self) {
        if let Some((mut child, follow)) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            follow.join().expect("follower");
            self.kills += 1;
        }
    }
}

/// A child process killed when dropped, so a failing test leaves no reader behind.
struct Reader(Child);

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_reader(dir: &Path, out: &Path) -> Reader {
    Reader(
        Command::new(TORTURE)
            .args(["read", "--dir"])
            .arg(dir)
            .args(["--owner", OWNER, "--out"])
            .arg(out)
            .arg("--expect")
            .arg((WRITERS as i64 * PER_WRITER).to_string())
            .arg("--compact-bytes")
            .arg(COMPACT_BYTES.to_string())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the reader"),
    )
}

fn inbox_bytes(dir: &Path) -> (u64, Vec<PathBuf>) {
    let mut total = 0;
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list inboxes") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{OWNER}.")) && name.ends_with(".jsonl") {
            total += entry.metadata().expect("stat").len();
            segments.push(entry.path());
        }
    }
    (total, segments)
}

#[test]
fn eight_writers_and_a_reader_killed_at_random_lose_and_repeat_nothing() {
    let seed = std::env::var("FLEET_TORTURE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("mailbox torture seed {seed} (replay with FLEET_TORTURE_SEED={seed})");
    let mut rng = Rng(seed);
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path().join("inboxes");
    std::fs::create_dir_all(&dir).expect("inbox folder");
    let out = scratch.path().join("delivered.txt");

    let mut writers: Vec<Writer> = (0..WRITERS)
        .map(|i| Writer {
            name: format!("w{i}"),
            acked: Arc::new(AtomicI64::new(-1)),
            child: None,
            kills: 0,
        })
        .collect();
    let mut reader = start_reader(&dir, &out);
    for writer in &mut writers {
        writer.start(&dir);
    }

    let mut reader_kills = 0;
    let mut kills = 0;
    let started = Instant::now();
    loop {
        let mut done = true;
        for writer in &mut writers {
            done &= writer.reap_if_done(&dir);
        }
        if done {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "writers have not finished after 5 minutes (seed {seed})"
        );
        std::thread::sleep(Duration::from_millis(5 + rng.below(60)));
        if kills < KILLS {
            kills += 1;
            let victim = rng.below(WRITERS as u64 + 2) as usize;
            if victim < WRITERS {
                writers[victim].kill();
                writers[victim].start(&dir);
            } else {
                // The reader is picked twice as often: it holds the consuming side alone.
                drop(reader);
                reader_kills += 1;
                reader = start_reader(&dir, &out);
            }
        }
    }

    // Every message is acknowledged now. The reader ends by itself once it has every id; if
    // one was lost it would wait forever, so give up on it after a minute (a hang guard, not a
    // timing check: it commits ids before acknowledging, so the file of ids is then final)
    // and let the checks below say what is missing.
    let watcher = Mailbox::open(&dir, OWNER).expect("open the inbox");
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended_by_itself = loop {
        if let Some(status) = reader.0.try_wait().expect("poll reader") {
            assert!(status.success(), "reader failed: {status} (seed {seed})");
            break true;
        }
        if Instant::now() >= deadline {
            eprintln!(
                "the reader has not ended; {} message(s) left unconsumed",
                watcher.pending().expect("pending")
            );
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };

    let delivered = std::fs::read_to_string(&out).expect("read delivered ids");
    let mut per_sender: HashMap<&str, Vec<i64>> = HashMap::new();
    for line in delivered.lines() {
        let (from, seq) = line.rsplit_once('-').expect("id is <from>-<seq>");
        per_sender
            .entry(from)
            .or_default()
            .push(seq.parse().expect("seq"));
    }
    let expected: Vec<i64> = (0..PER_WRITER).collect();
    for writer in &writers {
        let got = per_sender
            .get(writer.name.as_str())
            .map_or(&[][..], Vec::as_slice);
        // Exactly once and in order: the list is 0, 1, …, 1999 and nothing else.
        assert!(
            got == expected.as_slice(),
            "{}: {} delivered, first mismatch at index {:?} (seed {seed})",
            writer.name,
            got.len(),
            got.iter().zip(&expected).position(|(a, b)| a != b)
        );
    }
    assert_eq!(per_sender.len(), WRITERS, "no unknown senders");
    assert!(
        ended_by_itself,
        "the reader had every message but did not stop (seed {seed})"
    );

    let (bytes, segments) = inbox_bytes(&dir);
    // Each entry is over 200 bytes of JSON.
    let written = delivered.lines().count() as u64 * 200;
    println!(
        "kills: {} writers, {reader_kills} reader; inbox now {bytes} bytes in {} segment(s), \
         {written}+ bytes went through it",
        writers.iter().map(|w| w.kills).sum::<u32>(),
        segments.len()
    );
    assert!(
        bytes <= 4 * COMPACT_BYTES,
        "inbox not bounded: {bytes} bytes in {segments:?}"
    );
    assert!(segments.len() <= 2, "stale segments pile up: {segments:?}");
}
