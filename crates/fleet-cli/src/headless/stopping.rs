//! The signals that stop a headless run, and how long it gets to end cleanly.

use anyhow::{bail, Context};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio_util::sync::CancellationToken;

/// How long a run stopped by SIGTERM gets to end with its result and a whole transcript
/// (commands it runs get 2 s between SIGTERM and SIGKILL) before fleet exits regardless.
const SIGTERM_GRACE: Duration = Duration::from_secs(5);

/// The signals that stop a run. The first Ctrl-C cancels the run, which then ends with its
/// result and a consistent transcript; a second one stops waiting at once. SIGTERM cancels
/// too, and fleet exits after [`SIGTERM_GRACE`] even if something the run waits on never
/// ends (a tool stuck in a blocking call); a second signal of either kind exits at once.
pub(super) struct Stopping {
    cancel: CancellationToken,
    sigint: Signal,
    sigterm: Signal,
    signals: u32,
    /// Whether the first signal was SIGTERM (else Ctrl-C), for the exit code.
    terminated: bool,
    deadline: Option<tokio::time::Instant>,
}

impl Stopping {
    /// Installs the handlers: once, before the run, so a signal between two events is not
    /// missed.
    pub(super) fn new(cancel: CancellationToken) -> anyhow::Result<Self> {
        Ok(Self {
            cancel,
            sigint: signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?,
            sigterm: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            signals: 0,
            terminated: false,
            deadline: None,
        })
    }

    /// Whether a signal has asked the run to stop.
    pub(super) fn stopping(&self) -> bool {
        self.signals > 0
    }

    /// The exit code of a run a signal stopped whose last result still read as a success
    /// (the lead was only waiting for its team): the shell's 128 + signal, never 0, since the
    /// work it waited for did not finish.
    pub(super) fn exit_code(&self) -> Option<u8> {
        match (self.signals, self.terminated) {
            (0, _) => None,
            (_, true) => Some(143),
            (_, false) => Some(130),
        }
    }

    /// Waits for the next signal and acts on it: `Ok` when the run was asked to stop and may
    /// go on ending, `Err` when fleet must exit now.
    pub(super) async fn next(&mut self) -> anyhow::Result<()> {
        let deadline = self.deadline;
        let expired = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let terminated = tokio::select! {
            _ = self.sigint.recv() => false,
            _ = self.sigterm.recv() => true,
            () = expired => bail!(
                "stopped by SIGTERM: the run did not end within {}s, so fleet exits without \
                 waiting for it",
                SIGTERM_GRACE.as_secs()
            ),
        };
        self.signals += 1;
        if self.signals > 1 {
            bail!("interrupted twice: stopping without waiting for the run to end");
        }
        self.terminated = terminated;
        if terminated {
            self.deadline = Some(tokio::time::Instant::now() + SIGTERM_GRACE);
        }
        self.cancel.cancel();
        Ok(())
    }
}
