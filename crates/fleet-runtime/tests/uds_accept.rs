//! The sessions' Unix-socket accept loop when the process is out of file descriptors: `accept`
//! fails with EMFILE while a connection waits in the backlog, and the loop must back off
//! instead of spinning, take the connection once a descriptor is free, and end when told.
//!
//! The fd table is filled in a child process (this test binary run again, for this one test),
//! under a lowered RLIMIT_NOFILE, so the test runner's own descriptors are never short.
#![allow(clippy::unwrap_used)]

use fleet_runtime::teams::accept::{accept_loop, AcceptStats, Next, FIRST_BACKOFF, MAX_BACKOFF};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const CHILD: &str = "FLEET_TEST_ACCEPT_CHILD";
const WAIT: Duration = Duration::from_secs(30);

#[test]
fn out_of_descriptors_the_accept_loop_backs_off_recovers_and_ends_when_told() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .arg(fleet_testkit::child_test::test_name(
            module_path!(),
            "out_of_descriptors_the_accept_loop_backs_off_recovers_and_ends_when_told",
        ))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the child failed:\n{text}");
    assert!(
        text.contains("child: done"),
        "the child did not run:\n{text}"
    );
}

/// Polls `ready` every few milliseconds, up to [`WAIT`].
async fn wait_for(what: &str, ready: impl Fn() -> bool) {
    tokio::time::timeout(WAIT, async {
        while !ready() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

/// The most tries a backing-off loop makes in `window` after its first error: one per pause,
/// the pauses doubling from [`FIRST_BACKOFF`] to [`MAX_BACKOFF`]. A slower machine makes fewer,
/// never more; a spinning loop makes millions.
fn most_tries(window: Duration) -> u64 {
    let (mut pause, mut spent, mut tries) = (FIRST_BACKOFF, Duration::ZERO, 1);
    while spent <= window {
        spent += pause;
        tries += 1;
        pause = (pause * 2).min(MAX_BACKOFF);
    }
    tries
}

fn child() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, 256, hard).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        // A connection waits in the backlog (connect completes without an accept)…
        let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
        // …and no descriptor is left to take it with.
        let mut fillers = Vec::new();
        loop {
            match std::fs::File::open("/dev/null") {
                Ok(file) => fillers.push(file),
                Err(err) if err.raw_os_error() == Some(nix::libc::EMFILE) => break,
                Err(err) => panic!("filling the fd table: {err}"),
            }
        }
        let stats = Arc::new(AcceptStats::default());
        let stop = CancellationToken::new();
        let taken = Arc::new(std::sync::Mutex::new(Vec::new()));
        let run = {
            let (stats, stop, taken) = (stats.clone(), stop.clone(), taken.clone());
            tokio::spawn(async move {
                accept_loop(listener, "the test socket", stop, &stats, |stream| {
                    taken.lock().unwrap().push(stream);
                    Next::Continue
                })
                .await;
            })
        };

        wait_for("accept to fail with EMFILE", || stats.errors() >= 1).await;
        let (before, start) = (stats.attempts(), tokio::time::Instant::now());
        tokio::time::sleep(Duration::from_millis(500)).await;
        let window = start.elapsed();
        let tries = stats.attempts() - before;
        assert_eq!(
            stats.accepted(),
            0,
            "nothing can be accepted without a descriptor"
        );
        assert!(
            tries <= most_tries(window),
            "{tries} accept calls in {window:?} while out of descriptors: the loop spins \
             (a backing-off loop makes at most {})",
            most_tries(window)
        );
        assert!(
            stats.errors() >= 2,
            "it kept trying: {} errors",
            stats.errors()
        );

        // A descriptor comes free: the waiting connection is taken.
        fillers.clear();
        wait_for("the waiting connection to be accepted", || {
            stats.accepted() >= 1
        })
        .await;
        assert_eq!(taken.lock().unwrap().len(), 1);

        // The session ends: the loop ends with it, with no connection needed to notice.
        let attempts = stats.attempts();
        stop.cancel();
        tokio::time::timeout(WAIT, run)
            .await
            .expect("the accept loop ended when told")
            .unwrap();
        assert!(stats.attempts() <= attempts + 1);
    });
    println!("child: done");
}
