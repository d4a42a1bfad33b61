//! A real `nats-server` with JetStream for the remote tests: installed (pinned, once, under the
//! target folder) by the project's `scripts/nats-server.sh`, started on a free loopback port
//! with its own store folder, and stopped when dropped. A test can restart it on the same
//! port and store (the broker-restart test) or kill it outright.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `nats-server -js` of a test.
#[derive(Debug)]
pub struct NatsServer {
    binary: PathBuf,
    port: u16,
    store: PathBuf,
    child: Option<Child>,
    /// Holds the store folder for the server's life.
    _dir: Option<TempDir>,
}

/// A folder removed on drop (the testkit does not depend on `tempfile`).
#[derive(Debug)]
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The path of the pinned `nats-server`, installing it first; `None`, said on stderr, where
/// Python's pip cannot be had (the test then skips itself).
pub fn nats_server_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FLEET_NATS_SERVER").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nats-server.sh");
    let out = Command::new("bash").arg(&script).output().ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if path.is_empty() {
        eprintln!(
            "skipped: nats-server is not installed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(PathBuf::from(path))
}

impl NatsServer {
    /// Starts a server with JetStream on a free port; `None` when nats-server cannot be had.
    /// Panics (it is a test helper) when it is there but does not start.
    pub fn start() -> Option<Self> {
        let binary = nats_server_binary()?;
        let store =
            std::env::temp_dir().join(format!("fleet-nats-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&store).expect("nats store folder");
        let mut server = Self {
            binary,
            port: free_port(),
            store: store.clone(),
            child: None,
            _dir: Some(TempDir(store)),
        };
        server.launch();
        Some(server)
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server (SIGKILL, as a crash would) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port with the same store: JetStream's streams, consumers,
    /// KV and objects are as they were.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    fn launch(&mut self) {
        let child = Command::new(&self.binary)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(&self.store)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary.display()));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
