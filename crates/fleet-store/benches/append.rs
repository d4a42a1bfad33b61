//! Cost of appending one transcript entry (~1.2 KB), with and without an fsync per entry.
//! `cargo bench -p fleet-store --bench append`; FLEET_BENCH_ENTRIES sets the count (2000).

use fleet_protocol::Message;
use fleet_store::{FleetHome, TranscriptEntry, TranscriptWriter};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let entries: u32 = std::env::var("FLEET_BENCH_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir()?;
    let home = FleetHome::at(dir.path());
    let text = "x".repeat(1200);
    println!("{entries} entries of ~1.2 KB in {}", dir.path().display());
    for (label, sync_each) in [("flush only", false), ("fsync each", true)] {
        let id = if sync_each {
            "bench-sync"
        } else {
            "bench-flush"
        };
        let mut writer = TranscriptWriter::create(&home, std::path::Path::new("/bench"), id)?;
        writer.set_sync_every_entry(sync_each);
        let started = Instant::now();
        for _ in 0..entries {
            writer.append(TranscriptEntry::message(Message::user_text(text.clone())))?;
        }
        writer.sync()?;
        let per = started.elapsed().as_secs_f64() * 1e6 / f64::from(entries);
        println!("{label:>11}: {per:8.1} µs per entry");
    }
    Ok(())
}
