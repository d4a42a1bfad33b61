//! A small real filesystem for `$FLEET_HOME`: a tmpfs of a few hundred KiB mounted in a
//! private mount namespace, so the kernel itself answers ENOSPC (or EROFS) and nothing on the
//! machine sees the mount.
//!
//! A holder process (`unshare -m`, or `unshare -rm` when not root) mounts the tmpfs and sleeps;
//! every command of the test that must see the mount runs through `nsenter` into its
//! namespace. The holder sleeps at most [`HOLD_SECS`] and is killed on drop, so a test that is
//! itself killed leaves no mount behind for long: the namespace, and its mount, go with the
//! holder.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The longest the namespace lives, whatever happens to the test.
const HOLD_SECS: u32 = 600;

pub struct SmallDisk {
    holder: Child,
    /// The mount point: the same path inside the namespace, an empty folder outside.
    pub dir: PathBuf,
    /// `nsenter` arguments that enter the holder's namespace(s).
    enter: Vec<String>,
}

impl SmallDisk {
    /// Mounts a tmpfs of `kib` KiB on `dir` (created if missing) in a new mount namespace.
    /// `Err` says why it could not (no `unshare`, mounting not allowed here).
    pub fn mount(dir: &Path, kib: u32) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let root = nix::unistd::geteuid().is_root();
        // As root a mount namespace is enough; otherwise a user namespace maps us to root in it.
        let (unshare, enter): (&[&str], &[&str]) = if root {
            (&["-m"], &["-m"])
        } else {
            (&["-r", "-m"], &["-U", "-m", "--preserve-credentials"])
        };
        let script = format!(
            "mount -t tmpfs -o size={kib}k tmpfs \"$1\" || exit 1; echo ready; exec sleep {HOLD_SECS}"
        );
        let mut holder = Command::new("unshare")
            .args(unshare)
            .args(["--propagation", "private", "sh", "-c", &script, "sh"])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run unshare: {e}"))?;
        // One line once mounted; end of file (the shell exited) when it could not mount.
        let stdout = holder.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(fleet_testkit::WAIT)
            .unwrap_or_else(|_| "(no answer from the mount)".into());
        if line.trim() != "ready" {
            let _ = holder.kill();
            let out = holder.wait_with_output().map_err(|e| e.to_string())?;
            return Err(format!(
                "cannot mount a tmpfs in a new mount namespace: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut enter: Vec<String> = enter.iter().map(|s| s.to_string()).collect();
        enter.insert(0, holder.id().to_string());
        enter.insert(0, "-t".into());
        Ok(Self {
            holder,
            dir: dir.to_path_buf(),
            enter,
        })
    }

    /// `program args…` run inside the namespace: the returned command is `nsenter`, and passes
    /// the environment and pipes set on it to the program. Entering a mount namespace starts
    /// at its root folder, so the program's folder is given here.
    pub fn command_in(&self, wd: &Path, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.args(&self.enter)
            .arg(format!("--wd={}", wd.display()))
            .arg("--")
            .arg(program);
        cmd
    }

    /// [`Self::command_in`] the root folder.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        self.command_in(Path::new("/"), program)
    }

    /// Runs a shell script inside the namespace and returns its output.
    pub fn sh(&self, script: &str) -> Output {
        let mut cmd = self.command("sh");
        cmd.args(["-c", script]);
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, script)
    }

    /// Fills what is left of the disk with one file, `filler`.
    pub fn fill(&self) {
        // dd ends with ENOSPC, which is the point; then the disk must be full.
        let out = self.sh(&format!(
            "dd if=/dev/zero of='{}/filler' bs=4k 2>/dev/null; df -k '{}' | tail -1",
            self.dir.display(),
            self.dir.display()
        ));
        let df = String::from_utf8_lossy(&out.stdout).into_owned();
        let available: Vec<&str> = df.split_whitespace().collect();
        assert_eq!(available.get(3), Some(&"0"), "the disk is full: {df}");
    }

    /// Gives the space back.
    pub fn free(&self) {
        let out = self.sh(&format!("rm '{}/filler'", self.dir.display()));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Makes the filesystem read-only (it stays mounted).
    pub fn read_only(&self) {
        let out = self.sh(&format!("mount -o remount,ro '{}'", self.dir.display()));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The bytes of a file on the disk (as the namespace sees it).
    pub fn read(&self, path: &Path) -> Vec<u8> {
        let mut cmd = self.command("cat");
        cmd.arg(path);
        let out = fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "cat");
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Every file under `sub` of the disk whose name ends with `suffix`, sorted.
    pub fn files(&self, sub: &str, suffix: &str) -> Vec<PathBuf> {
        let out = self.sh(&format!(
            "find '{}/{sub}' -type f -name '*{suffix}' 2>/dev/null | sort",
            self.dir.display()
        ));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}
