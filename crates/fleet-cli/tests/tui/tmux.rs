//! A real terminal for the terminal UI's tests: a tmux server of the test's own (`-L`
//! socket, no user config, `escape-time 0` so a lone Esc is a key at once), one pane running
//! `fleet` against the fake model server. Keys go in with `send-keys`, the screen comes back
//! with `capture-pane`.

use super::common::{Project, SCRUBBED};
use fleet_testkit::FakeModelServer;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a test waits for text to appear before it fails with the screen it saw.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Tmux {
    socket: String,
    _config: tempfile::NamedTempFile,
    /// Where the pane's shell writes fleet's exit code and the terminal's state after it.
    pub after: PathBuf,
    /// The pane fleet runs in (`%0`): every call names it, whatever window or pane the
    /// test opens besides.
    pane: String,
}

/// Whether tmux is installed. CI installs it (`scripts/test`), so there a missing tmux is a
/// failure; elsewhere the tests say they were skipped.
pub fn available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("CI").is_some() {
        panic!("tmux is not installed, and CI must run the terminal tests");
    }
    if !found {
        eprintln!("skipped: tmux is not installed");
    }
    found
}

fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl Tmux {
    /// Starts `fleet args…` in a `width`×`height` pane, in the project's repository, with the
    /// project's environment (its own HOME and fleet home, the fake server as the API).
    pub fn start(
        project: &Project,
        server: &FakeModelServer,
        args: &[&str],
        size: (u16, u16),
        env: &[(&str, &str)],
    ) -> Self {
        let mut config = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(
            &mut config,
            b"set -g escape-time 0\nset -g status off\nset -g history-limit 5000\n",
        )
        .unwrap();
        let socket = format!("fleet-test-{}-{}", std::process::id(), uuid_like());
        let after = project.home.join(format!("{socket}.after"));
        let mut vars: Vec<(String, String)> = vec![
            ("HOME".into(), project.home.display().to_string()),
            (
                "FLEET_HOME".into(),
                project.fleet_home.display().to_string(),
            ),
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("FLEET_MAX_RETRIES".into(), "2".into()),
            ("FLEET_RETRY_BASE_DELAY_MS".into(), "5".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
            ("ANTHROPIC_BASE_URL".into(), server.base_url()),
            ("TERM".into(), "xterm-256color".into()),
        ];
        if project.trusted {
            vars.push(("FLEET_TRUST_PROJECT".into(), "1".into()));
        }
        vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut line = String::from("cd ");
        line.push_str(&quote(&project.repo.display().to_string()));
        line.push_str(" && env");
        for var in SCRUBBED {
            line.push_str(" -u ");
            line.push_str(var);
        }
        for (key, value) in &vars {
            line.push(' ');
            line.push_str(&quote(&format!("{key}={value}")));
        }
        line.push(' ');
        line.push_str(&quote(env!("CARGO_BIN_EXE_fleet")));
        for arg in args {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        // After fleet: its exit code and the terminal's line discipline, for the "restored"
        // checks; then the pane stays so the screen can still be read.
        line.push_str(&format!(
            "; echo \"exit=$?\" > {after}; stty -a >> {after}; echo done >> {after}; exec sleep 600",
            after = quote(&after.display().to_string())
        ));
        let mut tmux = Self {
            socket,
            _config: config,
            after,
            pane: "t".into(),
        };
        let (width, height) = size;
        let pane = tmux.run(&[
            "-f",
            &tmux._config.path().display().to_string(),
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "sh",
            "-c",
            &line,
        ]);
        tmux.pane = pane.trim().to_string();
        tmux
    }

    /// Runs `tmux args…` on this test's server; fails the test when tmux fails.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Text typed as is (no key names).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", &self.pane, "-l", text]);
    }

    /// Keys by tmux's names: `Enter`, `Escape`, `C-c`, `C-b`, `BTab`, `Up`…
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.pane];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// What the pane shows now, one string per row.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.pane])
    }

    /// Everything the pane holds: its scrollback, then the screen.
    pub fn scrollback(&self) -> String {
        self.run(&["capture-pane", "-p", "-S", "-", "-t", &self.pane])
    }

    /// The pid of fleet, the pane's shell's child.
    pub fn fleet_pid(&self) -> String {
        let shell = self.format("#{pane_pid}");
        let out = Command::new("pgrep").args(["-P", &shell]).output().unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(!pid.is_empty(), "no fleet process under the pane");
        pid
    }

    /// Waits until the screen shows `needle`; fails with the last screen.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |screen| screen.contains(needle))
    }

    /// Waits until `check` holds for the screen; `what` names it in the failure.
    pub fn wait_until(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if start.elapsed() > PATIENCE {
                panic!("waited {PATIENCE:?} for {what:?}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The panes of the test's window: `(pane id, pid of its program, its command)`.
    pub fn panes(&self) -> Vec<(String, u32, String)> {
        self.run(&[
            "list-panes",
            "-t",
            &self.pane,
            "-F",
            "#{pane_id} #{pane_pid} #{pane_current_command}",
        ])
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let id = words.next()?.to_string();
            let pid = words.next()?.parse().ok()?;
            Some((id, pid, words.collect::<Vec<_>>().join(" ")))
        })
        .collect()
    }

    /// What pane `pane` shows now.
    pub fn screen_of(&self, pane: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", pane])
    }

    /// Keys by tmux's names, to pane `pane`.
    pub fn keys_to(&self, pane: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", pane];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits until pane `pane` shows `needle`; fails with its last screen.
    pub fn wait_for_in(&self, pane: &str, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen_of(pane);
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > PATIENCE {
                panic!(
                    "waited {PATIENCE:?} for {needle:?} in pane {pane}; it shows:\n{screen}\n\
                     the lead's pane shows:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn resize(&self, width: u16, height: u16) {
        self.run(&[
            "resize-window",
            "-t",
            &self.pane,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// A tmux format of the pane (`#{alternate_on}`, `#{cursor_flag}`, `#{pane_pid}`).
    pub fn format(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", &self.pane, format])
            .trim()
            .to_string()
    }

    /// What the pane's shell wrote after fleet exited, once it has.
    pub fn after_exit(&self) -> String {
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.after) {
                if text.ends_with("done\n") {
                    return text;
                }
            }
            if start.elapsed() > PATIENCE {
                panic!("fleet did not exit; the screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// A short unique suffix, so parallel tests never share a tmux server.
fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{nanos}", NEXT.fetch_add(1, Ordering::SeqCst))
}
