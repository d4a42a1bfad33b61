//! A tmux server of the test's own, teammate programs that report what they received, and
//! waiting for things that happen in other processes.

use fleet_runtime::backends::PaneSpec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Words a shell would act on if anything on the way used one.
pub const HOSTILE: &[&str] = &[
    "a b",
    "$(touch pwned)",
    "`touch pwned`",
    "it's",
    ";",
    "x;",
    "two\nlines",
    "#{pane_id}",
    "\\;",
    "",
];

/// Whether a program is installed; when it is not, a test is skipped — except on CI, where
/// it must be there.
pub fn have(program: &str) -> bool {
    let found = Command::new(program)
        .arg(if program == "tmux" { "-V" } else { "--version" })
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("{program} is not installed, and CI must run these tests");
        }
        eprintln!("skipped: {program} is not installed");
    }
    found
}

/// A tmux server for one test, with a session `lead` whose one pane stands for the lead.
/// Dropping it kills the server and everything in it, and removes its socket.
pub struct Server {
    name: String,
    pub socket: PathBuf,
    pub lead: String,
}

impl Server {
    /// `None` (after printing "skipped") when tmux is not installed outside CI.
    pub fn start() -> Option<Server> {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        if !have("tmux") {
            return None;
        }
        let n = COUNT.fetch_add(1, Ordering::SeqCst);
        let mut server = Server {
            name: format!("fleet-bk-{}-{n}", std::process::id()),
            socket: PathBuf::new(),
            lead: String::new(),
        };
        let status = Command::new("tmux")
            .args(["-L", &server.name, "-f", "/dev/null", "new-session", "-d"])
            .args(["-s", "lead", "-x", "200", "-y", "50", "sleep 1000"])
            .status()
            .expect("tmux runs");
        assert!(status.success(), "the test's tmux server starts");
        server.socket = PathBuf::from(server.tmux(&["display", "-p", "#{socket_path}"]));
        server.lead = server.tmux(&["display", "-p", "-t", "lead:", "#{pane_id}"]);
        Some(server)
    }

    /// Runs a tmux command on this server and returns its output, trimmed.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Whether a tmux command succeeds on this server.
    pub fn ok(&self, args: &[&str]) -> bool {
        Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Every pane id on the server.
    pub fn panes(&self) -> Vec<String> {
        self.tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// `format` expanded for `target`.
    pub fn show(&self, target: &str, format: &str) -> String {
        self.tmux(&["display", "-p", "-t", target, format])
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.name, "kill-server"])
            .output();
        // tmux leaves its socket file behind.
        if !self.socket.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}

/// A teammate that writes its arguments (NUL-separated), its folder and its pid into `out`
/// and then waits on its terminal: `args` appears last, so once it exists all are written.
pub fn reporter(name: &str, color: &str, cwd: &Path, out: &Path, words: &[&str]) -> PaneSpec {
    let script = r#"printf '%s\0' "$@" > "$OUT/args.tmp"; pwd > "$OUT/cwd"; echo $$ > "$OUT/pid"; mv "$OUT/args.tmp" "$OUT/args"; read x"#;
    let mut argv = vec!["sh".to_string(), "-c".into(), script.into(), "sh".into()];
    argv.extend(words.iter().map(|w| w.to_string()));
    PaneSpec {
        name: name.into(),
        color: color.into(),
        cwd: cwd.to_path_buf(),
        argv,
        env: vec![("OUT".into(), out.display().to_string())],
    }
}

/// The words a reporter received.
pub fn received(out: &Path) -> Vec<String> {
    let path = out.join("args");
    eventually("the teammate to report its arguments", || path.exists());
    let bytes = std::fs::read(&path).expect("args file");
    let mut words: Vec<String> = bytes
        .split(|b| *b == 0)
        .map(|w| String::from_utf8(w.to_vec()).expect("utf-8"))
        .collect();
    words.pop(); // after the last NUL
    words
}

/// A file's text, trimmed.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("readable")
        .trim()
        .to_string()
}

/// Waits until `cond` holds. The limit is only there so a broken build fails instead of
/// hanging; nothing is asserted about how long it took.
pub fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// No file named `pwned` in any of `dirs`.
pub fn assert_not_pwned(dirs: &[&Path]) {
    for dir in dirs {
        assert!(
            !dir.join("pwned").exists(),
            "a shell ran a word as a command in {}",
            dir.display()
        );
    }
}

/// A process's argv, as the kernel has it.
pub fn cmdline(pid: u32) -> Vec<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).expect("the process exists");
    let mut words: Vec<String> = bytes
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    words.pop();
    words
}
