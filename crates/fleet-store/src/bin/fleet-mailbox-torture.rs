//! A writer or a reader of one inbox, for the torture test in `tests/mailbox_torture.rs`, which
//! runs several of them at once and kills them with SIGKILL at random points.
//!
//! ```text
//! fleet-mailbox-torture write --dir D --owner O --from S --start K --count N
//!     appends entries with msg_id S-K … S-(K+N-1), one at a time, and prints each seq on stdout
//!     once `append` has returned (so every printed seq is acknowledged)
//! fleet-mailbox-torture read --dir D --owner O --out F --expect N [--compact-bytes B]
//!     consumes the inbox: appends each new msg_id to F (fsynced), then acknowledges; on start
//!     it reloads F (cutting a torn last line) and skips ids already there; waits with
//!     `Mailbox::wait`; exits once F holds N distinct ids
//! ```

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use fleet_protocol::MailEntry;
use fleet_store::Mailbox;

type Res<T> = Result<T, Box<dyn Error>>;

const USAGE: &str = "usage: fleet-mailbox-torture write --dir D --owner O --from S --start K --count N\n       \
                     fleet-mailbox-torture read --dir D --owner O --out F --expect N [--compact-bytes B]";

fn main() {
    if let Err(e) = run() {
        eprintln!("fleet-mailbox-torture: {e}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let command = args.next().ok_or(USAGE)?;
    let flags = parse_flags(args)?;
    match command.as_str() {
        "write" => write(&flags),
        "read" => read(&flags),
        _ => Err(USAGE.into()),
    }
}

struct Flags(HashMap<String, String>);

impl Flags {
    fn get(&self, name: &str) -> Res<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| format!("missing --{name}\n{USAGE}").into())
    }

    fn number(&self, name: &str) -> Res<u64> {
        let text = self.get(name)?;
        text.parse()
            .map_err(|e| format!("--{name} {text:?}: {e}").into())
    }
}

fn parse_flags(mut args: impl Iterator<Item = String>) -> Res<Flags> {
    let mut flags = HashMap::new();
    while let Some(flag) = args.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag:?}\n{USAGE}"))?;
        let value = args
            .next()
            .ok_or_else(|| format!("--{name} needs a value"))?;
        flags.insert(name.to_owned(), value);
    }
    Ok(Flags(flags))
}

fn write(flags: &Flags) -> Res<()> {
    let inbox = Mailbox::open(Path::new(flags.get("dir")?), flags.get("owner")?)?;
    let from = flags.get("from")?;
    let start = flags.number("start")?;
    let count = flags.number("count")?;
    let mut stdout = std::io::stdout().lock();
    for seq in start..start + count {
        let timestamp = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let entry = MailEntry::new(
            from,
            format!("message {seq} from {from}: the quick brown fox jumps over the lazy dog"),
            timestamp,
            format!("{from}-{seq}"),
        );
        inbox.append(&entry)?;
        writeln!(stdout, "{seq}")?;
        stdout.flush()?;
    }
    Ok(())
}

fn read(flags: &Flags) -> Res<()> {
    let mut inbox = Mailbox::open(Path::new(flags.get("dir")?), flags.get("owner")?)?;
    if flags.0.contains_key("compact-bytes") {
        inbox = inbox.with_compaction_threshold(flags.number("compact-bytes")?);
    }
    let out = PathBuf::from(flags.get("out")?);
    let expect = usize::try_from(flags.number("expect")?)?;
    let mut seen = load_seen(&out)?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .map_err(|e| format!("cannot open {}: {e}", out.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        loop {
            let mut unread = inbox.unread()?;
            for warning in &unread.warnings {
                eprintln!("warning: {warning}");
            }
            let fresh = !unread.entries.is_empty() || !unread.warnings.is_empty();
            unread.retain_unseen(|id| seen.contains(id));
            if !unread.entries.is_empty() {
                let mut text = String::new();
                for id in unread.msg_ids() {
                    text.push_str(id);
                    text.push('\n');
                }
                // Committed first, acknowledged second: a crash in between re-delivers, and
                // the ids in F turn that into nothing.
                file.write_all(text.as_bytes())?;
                file.sync_data()?;
                seen.extend(unread.msg_ids().map(str::to_owned));
            }
            if fresh {
                inbox.ack(&unread.upto)?;
                continue;
            }
            if seen.len() >= expect {
                return Ok(());
            }
            inbox.wait().await;
        }
    })
}

/// The ids already committed to `out`, after cutting a line torn by a kill mid-write.
fn load_seen(out: &Path) -> Res<HashSet<String>> {
    let text = match std::fs::read_to_string(out) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", out.display()).into()),
    };
    let whole = text.rfind('\n').map_or(0, |at| at + 1);
    if whole < text.len() {
        OpenOptions::new()
            .write(true)
            .open(out)?
            .set_len(u64::try_from(whole)?)?;
    }
    Ok(text[..whole].lines().map(str::to_owned).collect())
}
