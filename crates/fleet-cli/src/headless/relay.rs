//! The headless run's event loop: every event of the session is recorded (the transcript) and
//! printed, until the session ends. A transcript that cannot take more, or an output that
//! cannot be written, stops the session; the result that ends it then names the real cause.

use super::stopping::Stopping;
use crate::dashboard_cmd::live::LiveDashboard;
use crate::print::Printer;
use fleet_protocol::EventKind;
use fleet_runtime::SessionHandle;
use fleet_session::{SessionFile, TranscriptLost};

/// How the relay ended.
pub(super) struct Relayed {
    /// The first failure that stopped the session (the transcript, the output).
    pub failed: Option<anyhow::Error>,
    /// Whether the main agent's last result was an error.
    pub last_error: bool,
    /// Whether a result already told the transcript's failure.
    pub blamed: bool,
}

/// Records and prints the session's events until its stream ends; a second Ctrl-C or a
/// signal handler that fails ends it early with the error.
pub(super) async fn relay(
    handle: &mut SessionHandle,
    session: &mut SessionFile,
    printer: &mut (dyn Printer + Send),
    stop: &mut Stopping,
    dashboard: Option<&LiveDashboard>,
) -> anyhow::Result<Relayed> {
    let mut failed: Option<anyhow::Error> = None;
    let mut last_error = false;
    let mut blamed = false;
    loop {
        let event = tokio::select! {
            event = handle.recv() => event,
            signal = stop.next() => {
                signal?;
                continue;
            }
        };
        let Some(mut event) = event else { break };
        let main = event.agent.parent_tool_use_id.is_none();
        if let Err(err) = session.record_event(&event) {
            // Nothing more may happen that the transcript cannot hold.
            handle.cancel.cancel();
            failed.get_or_insert(anyhow::Error::new(err));
        }
        if let (EventKind::Finished(result), true) = (&mut event.kind, main) {
            // A run the transcript's failure stopped says so, not "cancelled".
            let lost = failed
                .as_ref()
                .and_then(|e| e.downcast_ref::<TranscriptLost>());
            if let Some(lost) = lost {
                lost.blame(result);
                blamed = true;
            }
            last_error = result.is_error();
        }
        if let Some(dashboard) = dashboard {
            dashboard.push(&event);
        }
        if let Err(err) = printer.event(&event) {
            handle.cancel.cancel();
            failed.get_or_insert(anyhow::Error::new(err).context("writing the output"));
        }
    }
    Ok(Relayed {
        failed,
        last_error,
        blamed,
    })
}
