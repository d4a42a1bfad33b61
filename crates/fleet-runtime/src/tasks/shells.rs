//! The output of shell tasks (Bash commands the user moved to the background; the spawner's
//! `SessionShells` registers them): TaskOutput shows the end of a running one's file.

/// How much of a running command's output file TaskOutput shows.
const LIVE_TAIL_BYTES: u64 = 8 * 1024;

/// The end of a running command's output file, for TaskOutput; `None` when it cannot be read.
pub(crate) async fn output_tail(path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(path).await.ok()?;
    let len = file.metadata().await.ok()?.len();
    let start = len.saturating_sub(LIVE_TAIL_BYTES);
    file.seek(std::io::SeekFrom::Start(start)).await.ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).await.ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // A cut start may fall inside a line (or a character): begin at the next whole line.
    let text = match (start > 0, text.find('\n')) {
        (true, Some(at)) => &text[at + 1..],
        _ => &text[..],
    };
    let text = text.trim_end();
    Some(if text.is_empty() {
        "(no output yet)".to_string()
    } else {
        text.to_string()
    })
}
