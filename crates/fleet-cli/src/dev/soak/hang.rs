//! What the soak captures of a session that is still running at its deadline, before it
//! kills it: both sides of the hang. The client's side from /proc — each thread's state and
//! kernel wait channel, the TCP sockets it holds with their queues (an unread reply sits in
//! `rx_queue`) — and the server's side from the fake model's request log: requests received
//! and never finished, the last lines.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Writes the capture of `pid` to `out` and returns it with a one-line summary.
pub(super) fn capture(pid: u32, request_log: &Path, out: PathBuf) -> (PathBuf, String) {
    let mut text = String::new();
    let threads = threads(pid);
    let _ = writeln!(text, "== threads of {pid} (state wchan: count)");
    for (key, n) in &threads {
        let _ = writeln!(text, "{key}: {n}");
    }
    let sockets = sockets(pid);
    let unread: Vec<&Socket> = sockets.iter().filter(|s| s.rx_queue > 0).collect();
    let _ = writeln!(
        text,
        "\n== TCP sockets of {pid}: {} ({} with unread bytes)",
        sockets.len(),
        unread.len()
    );
    for s in &sockets {
        let _ = writeln!(
            text,
            "local :{} remote :{} state {} tx_queue {} rx_queue {}",
            s.local_port, s.remote_port, s.state, s.tx_queue, s.rx_queue
        );
    }
    let log = std::fs::read_to_string(request_log).unwrap_or_default();
    let (received, finished, open) = in_flight(&log);
    let _ = writeln!(
        text,
        "\n== fake server: {received} requests received, {finished} finished, in flight: {open:?}"
    );
    let _ = writeln!(text, "\n== request log, last 40 lines");
    let lines: Vec<&str> = log.lines().collect();
    for line in &lines[lines.len().saturating_sub(40)..] {
        let _ = writeln!(text, "{line}");
    }
    let _ = std::fs::write(&out, &text);
    let busiest = threads
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(k, n)| format!("{n}× {k}"))
        .unwrap_or_default();
    let summary = format!(
        "threads: {} (most: {busiest}); sockets: {} ({} with unread bytes); server: {received} received, {finished} finished, {} in flight",
        threads.values().sum::<usize>(),
        sockets.len(),
        unread.len(),
        open.len()
    );
    (out, summary)
}

/// `state wchan` of each thread, counted.
fn threads(pid: u32) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return counts;
    };
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // `pid (comm) S …`: the state follows the last ')'.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("?")
            .to_owned();
        let comm = stat
            .split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map_or("?", |(c, _)| c)
            .to_owned();
        let wchan = std::fs::read_to_string(task.path().join("wchan")).unwrap_or_default();
        let wchan = if wchan.is_empty() || wchan == "0" {
            "-".to_owned()
        } else {
            wchan
        };
        *counts
            .entry(format!("{state} {wchan} ({comm})"))
            .or_insert(0) += 1;
    }
    counts
}

struct Socket {
    local_port: u16,
    remote_port: u16,
    state: &'static str,
    tx_queue: u64,
    rx_queue: u64,
}

/// The TCP sockets among `pid`'s open files (matched by inode in /proc/PID/net/tcp{,6}).
fn sockets(pid: u32) -> Vec<Socket> {
    let mut inodes = HashSet::new();
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                let link = link.to_string_lossy();
                if let Some(inode) = link
                    .strip_prefix("socket:[")
                    .and_then(|r| r.strip_suffix(']'))
                {
                    inodes.insert(inode.to_owned());
                }
            }
        }
    }
    let mut found = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 10 || !inodes.contains(cols[9]) {
                continue;
            }
            let port = |addr: &str| {
                addr.rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                    .unwrap_or(0)
            };
            let (tx, rx) = cols[4].split_once(':').unwrap_or(("0", "0"));
            found.push(Socket {
                local_port: port(cols[1]),
                remote_port: port(cols[2]),
                state: tcp_state(cols[3]),
                tx_queue: u64::from_str_radix(tx, 16).unwrap_or(0),
                rx_queue: u64::from_str_radix(rx, 16).unwrap_or(0),
            });
        }
    }
    found
}

fn tcp_state(hex: &str) -> &'static str {
    match hex {
        "01" => "ESTABLISHED",
        "02" => "SYN_SENT",
        "06" => "TIME_WAIT",
        "07" => "CLOSE",
        "08" => "CLOSE_WAIT",
        "0A" => "LISTEN",
        "04" => "FIN_WAIT1",
        "05" => "FIN_WAIT2",
        "09" => "LAST_ACK",
        _ => "OTHER",
    }
}

/// Requests received, requests finished, and the numbers of those received but not finished.
pub(super) fn in_flight(log: &str) -> (usize, usize, Vec<u64>) {
    let mut received = 0;
    let mut finished = 0;
    let mut open = std::collections::BTreeSet::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let seq = v["seq"].as_u64().unwrap_or(0);
        match v["event"].as_str() {
            Some("received") => {
                received += 1;
                open.insert(seq);
            }
            Some("finished") => {
                finished += 1;
                open.remove(&seq);
            }
            _ => {}
        }
    }
    (received, finished, open.into_iter().take(50).collect())
}
