//! The app: state (`state`), what keys do (`keys`), slash commands (`slash`), the screen's
//! layout (`view`), and the event loop here. The loop waits on three things only — the
//! driver's events, the terminal's input, and a frame deadline when something changed — so
//! an idle UI costs nothing, and a burst of streaming events is drawn once per frame.

mod keys;
mod slash;
mod state;
mod view;

pub use state::App;

use crate::port::{StatusUpdate, UiCommand, UiEvent};
use crate::terminal;
use crate::theme::Theme;
use futures::StreamExt;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The shortest time between two frames (about 60 a second).
const FRAME: Duration = Duration::from_millis(16);
/// How often the "working" line's clock moves while the main agent runs.
const TICK: Duration = Duration::from_millis(250);
/// Events taken from the driver before a frame is drawn, so a flood cannot starve the keys.
const BATCH: usize = 512;

/// What the driver tells the UI at start.
#[derive(Debug, Clone, Default)]
pub struct UiOptions {
    pub cwd: PathBuf,
    /// `~`, for `~/.claude/commands` (`None` in tests).
    pub home: Option<PathBuf>,
    pub theme: Theme,
    /// `fleet "prompt"`: submitted as soon as the UI is up.
    pub initial_prompt: Option<String>,
    /// The starting model, permission mode and session id.
    pub status: StatusUpdate,
    /// Where prompt history is kept (`None`: memory only).
    pub history_file: Option<PathBuf>,
}

/// How the UI ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiExit {
    /// `/exit`, Ctrl+C twice, Ctrl+D on an empty input.
    Quit { stop_background: bool },
    /// SIGTERM, SIGHUP or SIGINT (its number) ended the UI; background tasks are stopped,
    /// and the process should exit `128 + number`, as a shell reports a killed program.
    Signal(i32),
    /// The driver closed the event channel (the session ended by itself).
    SessionEnded,
}

#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Runs the UI on the process's terminal until the person quits or the driver hangs up. The
/// terminal is restored on every way out, panics and signals included.
pub async fn run(
    options: UiOptions,
    mut events: mpsc::Receiver<UiEvent>,
    commands: mpsc::UnboundedSender<UiCommand>,
) -> Result<UiExit, UiError> {
    let mut signals = Signals::new()?;
    let mut guard = terminal::enter()?;
    let mut input = crossterm::event::EventStream::new();
    let mut app = App::new(options, commands);
    let mut last_frame = Instant::now() - FRAME;
    let mut dirty = true;
    let mut signalled = None;
    let exit = loop {
        if let Some(exit) = app.take_exit() {
            break signalled.map_or(exit, UiExit::Signal);
        }
        if dirty && last_frame.elapsed() >= FRAME {
            guard.draw(|frame| app.draw(frame))?;
            last_frame = Instant::now();
            dirty = false;
        }
        let deadline = if dirty {
            last_frame + FRAME
        } else if app.is_working() || app.is_waiting_on_background() {
            last_frame + TICK
        } else {
            Instant::now() + Duration::from_secs(3600)
        };
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break UiExit::SessionEnded };
                app.handle_ui_event(event);
                for _ in 0..BATCH {
                    match events.try_recv() {
                        Ok(event) => app.handle_ui_event(event),
                        Err(_) => break,
                    }
                }
                dirty = true;
            }
            read = input.next() => {
                match read {
                    Some(Ok(event)) => {
                        app.handle_terminal_event(event);
                        // A keystroke is drawn at once, whatever the frame clock says.
                        if app.exit_pending() {
                            continue;
                        }
                        guard.draw(|frame| app.draw(frame))?;
                        last_frame = Instant::now();
                        dirty = false;
                    }
                    Some(Err(err)) => return Err(UiError::Terminal(err)),
                    None => break UiExit::Quit { stop_background: true },
                }
            }
            _ = tokio::time::sleep_until(deadline) => dirty = true,
            number = signals.next() => {
                signalled = Some(number);
                app.quit_now(true);
            }
        }
    };
    drop(guard);
    // A hang-up took the terminal away: there is nowhere to print.
    if exit != UiExit::Signal(SIGHUP) {
        let width = crossterm::terminal::size().map_or(80, |(w, _)| w);
        let lines = app.scrollback(width);
        // The terminal may be gone; the transcript on disk has the conversation either way.
        let _ = crate::scrollback::print(&lines, &mut std::io::stdout().lock());
    }
    Ok(exit)
}

/// Signal numbers (the same on every Unix fleet runs on).
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// SIGTERM, SIGHUP and SIGINT end the UI like a quit that stops background tasks: the
/// terminal is restored by the normal way out, not by a dying process, and the exit says
/// which signal it was.
struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// The next signal's number.
    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => SIGTERM,
            _ = self.hup.recv() => SIGHUP,
            _ = self.int.recv() => SIGINT,
        }
    }
}
